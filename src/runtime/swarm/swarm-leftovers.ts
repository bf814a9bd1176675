// What a swarm run left after its tear-down (bench docker counts it; it should be 0).
import Docker from 'dockerode';
import { DOCKER_LABELS } from '../docker/docker-labels.js';
import { engineAt } from './local/dind-host.js';
import { readSwarmState, swarmStateDir } from './local/swarm-state.js';

/**
 * Its services, configs and networks (the manager sees them all), and its containers and volumes
 * on every host of a local swarm when DOCKER_HOST is that swarm's manager (`swarm up`'s state file
 * names them), else on the manager alone (other hosts' engines are not reachable from here).
 */
export async function swarmLeftovers(runId: string): Promise<number> {
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  const manager = new Docker();
  const state = readSwarmState(swarmStateDir());
  const engines =
    state && state.dockerHost === process.env.DOCKER_HOST
      ? state.hosts.map((h) => engineAt(h.dockerHost))
      : [manager];
  let n =
    (await manager.listServices({ filters })).length +
    (await manager.listConfigs({ filters })).length +
    (await manager.listNetworks({ filters })).length;
  for (const e of engines)
    n +=
      (await e.listContainers({ all: true, filters })).length +
      ((await e.listVolumes({ filters })).Volumes ?? []).length;
  return n;
}
