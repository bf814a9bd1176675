// `pole-bench bench docker`: how long a container runtime takes to bring a topology's cluster up
// (until a leader serves) and to tear it all down, with the node image already built, and what it
// left after (runtime-kind.ts leftovers: on a local swarm, on every host). The docker runtime's
// bring-up is network, holders, node containers; the swarm's services, the relay, the fault
// helpers and the agents dialled in, step by step.
import { dockerStatus } from '../image/docker-probe.js';
import { makeRuntime, runtimeKind, runtimeKinds } from '../runtime/registry.js';
import { targetNamed } from '../targets/registry.js';
import { loadTopology } from '../topology/topology.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';

/** The runtimes bench docker measures: those whose runs leave what a tear-down must remove. */
export function benchedRuntimes(): RuntimeName[] {
  return runtimeKinds()
    .filter((k) => k.leftovers !== undefined)
    .map((k) => k.name);
}

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
  runtime?: RuntimeName;
  log?: (l: string) => void;
}): Promise<{
  readonly runtime: RuntimeName;
  readonly image: string;
  readonly runs: DockerBenchRow[];
}> {
  const runtime = o.runtime ?? 'docker';
  const kind = runtimeKind(runtime);
  const leftovers = kind.leftovers?.bind(kind);
  if (!leftovers) throw new Error(`bench docker measures ${benchedRuntimes().join(' and ')}, not ${runtime}`);
  const status = await dockerStatus();
  if (!status.image) throw new Error(status.reason);
  const topology = loadTopology(o.topology);
  const runs: DockerBenchRow[] = [];
  for (let i = 0; i < o.runs; i++) {
    const rt = await makeRuntime(runtime, topology, {
      shaping: { kind: 'relay', reason: 'bench' },
      seed: 1000 + i,
      target: targetNamed('pole'),
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
      const left = rt.runId !== undefined ? await leftovers(rt.runId) : NaN;
      const steps = rt.startSteps ? [...rt.startSteps] : undefined;
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
