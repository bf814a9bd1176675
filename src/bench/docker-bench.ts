// `pole-bench bench docker`: how long the docker runtime takes to bring a topology's cluster up
// (network, holders, node containers, until a leader serves) and to tear it all down, with the
// node image already built.
import { dockerStatus } from '../image/docker-probe.js';
import { DockerRuntime } from '../runtime/docker/docker-runtime.js';
import Docker from 'dockerode';
import { DOCKER_LABELS } from '../runtime/docker/docker-labels.js';
import { loadTopology } from '../topology/topology.js';

export interface DockerBenchRow {
  /** Network, holders and node containers created and every node announced `started`. */
  readonly upMs: number;
  /** ... and the initial leader serves (quorum synced): "ready to serve". */
  readonly servingMs: number;
  readonly teardownMs: number;
  /** Containers and networks still carrying the run's labels after tear-down (should be 0). */
  readonly leftovers: number;
}

export async function runDockerBench(o: {
  topology: string;
  runs: number;
  log?: (l: string) => void;
}): Promise<{
  readonly image: string;
  readonly runs: DockerBenchRow[];
}> {
  const status = await dockerStatus();
  if (!status.image) throw new Error(status.reason);
  const topology = loadTopology(o.topology);
  const runs: DockerBenchRow[] = [];
  for (let i = 0; i < o.runs; i++) {
    const rt = new DockerRuntime(topology, {
      shaping: { kind: 'relay', reason: 'bench' },
      seed: 1000 + i,
      image: status.image,
    });
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
      const row = { upMs, servingMs, teardownMs, leftovers: await runLeftovers(rt.runId) };
      runs.push(row);
      o.log?.(
        `run ${i + 1}: up ${upMs.toFixed(0)} ms, serving ${servingMs.toFixed(0)} ms, tear-down ${teardownMs.toFixed(0)} ms, leftovers ${row.leftovers}`,
      );
    }
  }
  return { image: status.image, runs };
}

async function runLeftovers(runId: string): Promise<number> {
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  const cs = await docker.listContainers({ all: true, filters });
  const ns = await docker.listNetworks({ filters });
  return cs.length + ns.length;
}
