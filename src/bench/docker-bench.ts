// `pole-bench bench docker`: how long the docker runtime takes to bring a topology's cluster up
// (network, holders, node containers, until a leader serves) and to tear it all down, with the
// node image already built; with `--runtime swarm`, the same for the swarm runtime on the swarm
// DOCKER_HOST manages (services, the relay, the fault helpers, the agents dialled in, until a
// leader serves), and what is left after, on every host of a local swarm (`swarm up`).
import { dockerStatus } from '../image/docker-probe.js';
import { DockerRuntime } from '../runtime/docker/docker-runtime.js';
import { SwarmRuntime } from '../runtime/swarm/swarm-runtime.js';
import Docker from 'dockerode';
import { DOCKER_LABELS } from '../runtime/docker/docker-labels.js';
import { engineAt } from '../swarm/dind-host.js';
import { readSwarmState, swarmStateDir } from '../swarm/swarm-state.js';
import { loadTopology } from '../topology/topology.js';

export interface DockerBenchRow {
  /** Network, holders and node containers created and every node announced `started`. */
  readonly upMs: number;
  /** ... and the initial leader serves (quorum synced): "ready to serve". */
  readonly servingMs: number;
  readonly teardownMs: number;
  /** Containers and networks still carrying the run's labels after tear-down (should be 0). */
  readonly leftovers: number;
  /** The swarm runtime's bring-up, step by step (ms from its start): where the seconds go. */
  readonly steps?: ReadonlyArray<{ readonly step: string; readonly ms: number }>;
}

export async function runDockerBench(o: {
  topology: string;
  runs: number;
  runtime?: 'docker' | 'swarm';
  log?: (l: string) => void;
}): Promise<{
  readonly runtime: 'docker' | 'swarm';
  readonly image: string;
  readonly runs: DockerBenchRow[];
}> {
  const runtime = o.runtime ?? 'docker';
  const status = await dockerStatus();
  if (!status.image) throw new Error(status.reason);
  const topology = loadTopology(o.topology);
  const runs: DockerBenchRow[] = [];
  for (let i = 0; i < o.runs; i++) {
    const options = {
      shaping: { kind: 'relay', reason: 'bench' } as const,
      seed: 1000 + i,
      image: status.image,
    };
    const rt =
      runtime === 'swarm' ? new SwarmRuntime(topology, options) : new DockerRuntime(topology, options);
    const t0 = performance.now();
    let upMs = NaN;
    let servingMs = NaN;
    try {
      await rt.start();
      upMs = performance.now() - t0;
      await rt.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 30_000);
      servingMs = performance.now() - t0;
    } finally {
      const t1 = performance.now();
      await rt.teardown();
      const teardownMs = performance.now() - t1;
      const left = runtime === 'swarm' ? await swarmLeftovers(rt.runId) : await runLeftovers(rt.runId);
      const steps = rt instanceof SwarmRuntime ? [...rt.startSteps] : undefined;
      const row = { upMs, servingMs, teardownMs, leftovers: left, ...(steps ? { steps } : {}) };
      runs.push(row);
      o.log?.(
        `run ${i + 1}: up ${upMs.toFixed(0)} ms, serving ${servingMs.toFixed(0)} ms, tear-down ${teardownMs.toFixed(0)} ms, leftovers ${row.leftovers}`,
      );
      if (steps)
        o.log?.(`  bring-up: ${steps.map((s) => `${s.step} ${(s.ms / 1000).toFixed(1)} s`).join('; ')}`);
    }
  }
  return { runtime, image: status.image, runs };
}

async function runLeftovers(runId: string): Promise<number> {
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  const cs = await docker.listContainers({ all: true, filters });
  const ns = await docker.listNetworks({ filters });
  return cs.length + ns.length;
}

/**
 * What a swarm run left: its services, configs and networks (the manager sees them all), and its
 * containers and volumes on every host of the local swarm when DOCKER_HOST is that swarm's manager
 * (`swarm up`'s state file names them), else on the manager alone (other hosts' engines are not
 * reachable from here).
 */
async function swarmLeftovers(runId: string): Promise<number> {
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
