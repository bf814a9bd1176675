// Reaping: every container and network pole-bench made carries its labels. `pole-bench clean`
// removes all of them; a run starting removes only those whose harness is gone (a crashed run).
import Docker from 'dockerode';
import { DOCKER_LABELS, isOrphan } from './docker-labels.js';

export interface CleanResult {
  /** "name (run id)" of every container removed. */
  readonly containers: string[];
  readonly networks: string[];
}

export async function cleanDocker(
  opts: { docker?: Docker; orphansOnly?: boolean } = {},
): Promise<CleanResult> {
  const docker = opts.docker ?? new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.managed}=true`] });
  const wanted = (labels: Record<string, string> | undefined): boolean =>
    !opts.orphansOnly || isOrphan(labels);
  const containers = (await docker.listContainers({ all: true, filters })).filter((c) => wanted(c.Labels));
  // Node containers share their holder's namespace: remove them first.
  const order = (c: Docker.ContainerInfo): number => (c.Labels[DOCKER_LABELS.role] === 'holder' ? 1 : 0);
  containers.sort((a, b) => order(a) - order(b));
  const removed: string[] = [];
  for (const c of containers) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true, v: true })
      .then(() =>
        removed.push(`${c.Names[0]?.replace(/^\//, '') ?? c.Id} (run ${c.Labels[DOCKER_LABELS.run]})`),
      )
      .catch(() => undefined); // already gone (removed by its own run meanwhile)
  }
  const networks = (await docker.listNetworks({ filters })).filter((n) => wanted(n.Labels));
  const removedNets: string[] = [];
  for (const n of networks) {
    await docker
      .getNetwork(n.Id)
      .remove()
      .then(() => removedNets.push(`${n.Name} (run ${n.Labels?.[DOCKER_LABELS.run]})`))
      .catch(() => undefined);
  }
  return { containers: removed, networks: removedNets };
}

/** Containers and networks still carrying run `runId`'s labels (bench docker: should be 0). */
export async function runLeftovers(runId: string): Promise<number> {
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  const cs = await docker.listContainers({ all: true, filters });
  const ns = await docker.listNetworks({ filters });
  return cs.length + ns.length;
}
