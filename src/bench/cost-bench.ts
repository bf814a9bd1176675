// `pole-bench bench cost`: what each process of a run costs in CPU per acknowledged write. A run of
// the topology on the process runtime with no fault (the initial leader serves throughout), its
// self-check read per process, repeated and summarised by median. This is the measurement behind
// every "make it cheaper" change: a lever counts when this table moves, not when a profile looks
// better.
import { ProcessRuntime } from '../runtime/process/process-runtime.js';
import { loadTopologyForRun } from '../run/run-overrides.js';
import { runScenario } from '../run/run-scenario.js';
import { chooseShaping } from '../runtime/choose-runtime.js';
import type { CpuReport } from '../measure/cpu-sampler.js';
import { spread, type MinMedianMax } from '../util/spread.js';
import { targetNamed } from '../targets/registry.js';
import type { TargetName } from '../vocabulary/names.js';

export interface CostBenchOptions {
  readonly topologyFile: string;
  /** The system under test (default: the topology's). */
  readonly target?: TargetName;
  readonly rate?: number;
  /** e.g. "30s". */
  readonly duration: string;
  readonly runs: number;
  readonly seed: number;
  readonly version: string;
  readonly log?: (line: string) => void;
}

export interface CostRun {
  readonly seed: number;
  readonly ackedWrites: number;
  readonly failedWrites: number;
  readonly machineBusyPct: number | null;
  /** label → µs of CPU per acknowledged write and % of one core. */
  readonly processes: Readonly<
    Record<string, { readonly usPerWrite: number | null; readonly pctOfCore: number }>
  >;
  /** Mean, median and 99th percentile latency per data center, ms (the whole load after the warm-up). */
  readonly meanMs: Readonly<Record<string, number | null>>;
  readonly p50Ms: Readonly<Record<string, number | null>>;
  readonly p99Ms: Readonly<Record<string, number | null>>;
  /** Chunks the relay released and its threads' wake-ups, per acknowledged write (null: no relay). */
  readonly relayChunksPerWrite: number | null;
  readonly relayWakesPerWrite: number | null;
  readonly errors: readonly string[];
}

export interface CostBenchResult {
  readonly topology: string;
  readonly target: TargetName;
  readonly rate: number;
  readonly duration: string;
  readonly leader: string | null;
  readonly runs: readonly CostRun[];
  /** Per label: median, min and max over the runs of µs per write; the same for the machine. */
  readonly summary: Readonly<Record<string, MinMedianMax>>;
  readonly machineBusyPct: MinMedianMax | null;
  /** The relay's chunks and wake-ups per acknowledged write over the runs; null without a relay. */
  readonly relayChunksPerWrite: MinMedianMax | null;
  readonly relayWakesPerWrite: MinMedianMax | null;
}

/** The report's labels: a node by its id, an agent by its data center, the relay apart from the harness. */
function perProcess(cpu: CpuReport): CostRun['processes'] {
  const out: Record<string, { usPerWrite: number | null; pctOfCore: number }> = {};
  for (const p of cpu.processes) {
    const label = p.group === 'agents' ? `agent ${p.label}` : p.label;
    out[label] = { usPerWrite: p.usPerWrite, pctOfCore: p.pctOfCore };
  }
  if (cpu.shapingPctOfCore !== null)
    out['relay (in the harness)'] = { usPerWrite: cpu.shapingUsPerWrite, pctOfCore: cpu.shapingPctOfCore };
  for (const [g, v] of Object.entries(cpu.groups))
    if (g !== 'harness') out[`all ${g}`] = { usPerWrite: v.usPerWrite, pctOfCore: v.pctOfCore };
  return out;
}

export async function runCostBench(o: CostBenchOptions): Promise<CostBenchResult> {
  const topology = loadTopologyForRun(o.topologyFile, {
    ...(o.target !== undefined ? { target: o.target } : {}),
    duration: o.duration,
    noFaults: true,
    ...(o.rate !== undefined ? { rate: o.rate } : {}),
  });
  const shaping = chooseShaping('auto', 'process', topology.datacenters.length, {
    available: false,
    reason: 'not probed',
  });
  const runs: CostRun[] = [];
  let leader: string | null = null;
  for (let i = 0; i < o.runs; i++) {
    const seed = o.seed + i;
    const runtime = new ProcessRuntime(topology, { shaping, seed, target: targetNamed(topology.target) });
    try {
      const { result } = await runScenario({ topology, runtime, seed, thresholds: [], version: o.version });
      leader = result.leaders.initial ?? leader;
      const meanMs: Record<string, number | null> = {};
      const p50Ms: Record<string, number | null> = {};
      const p99Ms: Record<string, number | null> = {};
      for (const [dc, w] of Object.entries(result.latency)) {
        meanMs[dc] = w.before?.mean ?? null;
        p50Ms[dc] = w.before?.p50 ?? null;
        p99Ms[dc] = w.before?.p99 ?? null;
      }
      const run: CostRun = {
        seed,
        ackedWrites: result.cpu.ackedWrites,
        failedWrites: result.writes.failed,
        machineBusyPct: result.cpu.machineBusyPct,
        processes: perProcess(result.cpu),
        meanMs,
        p50Ms,
        p99Ms,
        relayChunksPerWrite: result.cpu.shapingChunksPerWrite ?? null,
        relayWakesPerWrite: result.cpu.shapingWakesPerWrite ?? null,
        errors: result.errors,
      };
      runs.push(run);
      o.log?.(
        `run ${i + 1}/${o.runs}: machine ${run.machineBusyPct?.toFixed(1) ?? '?'} % busy, ` +
          Object.entries(run.processes)
            .filter(([k]) => k.startsWith('all ') || k.startsWith('relay'))
            .map(([k, v]) => `${k} ${v.usPerWrite?.toFixed(0) ?? '?'} µs/write`)
            .join(', ') +
          (run.relayChunksPerWrite === null
            ? ''
            : `; the relay ${run.relayChunksPerWrite.toFixed(1)} chunks and ${run.relayWakesPerWrite?.toFixed(1) ?? '?'} wake-ups per write`),
      );
    } finally {
      await runtime.teardown();
    }
  }
  const labels = [...new Set(runs.flatMap((r) => Object.keys(r.processes)))];
  const summary: Record<string, MinMedianMax> = {};
  for (const l of labels) {
    const xs = runs.map((r) => r.processes[l]?.usPerWrite).filter((x): x is number => typeof x === 'number');
    if (xs.length > 0) summary[l] = spread(xs);
  }
  const spreadOf = (xs: ReadonlyArray<number | null>): MinMedianMax | null => {
    const got = xs.filter((x): x is number => x !== null);
    return got.length > 0 ? spread(got) : null;
  };
  return {
    topology: topology.name,
    target: topology.target,
    rate: topology.workload.rate,
    duration: o.duration,
    leader,
    runs,
    summary,
    machineBusyPct: spreadOf(runs.map((r) => r.machineBusyPct)),
    relayChunksPerWrite: spreadOf(runs.map((r) => r.relayChunksPerWrite)),
    relayWakesPerWrite: spreadOf(runs.map((r) => r.relayWakesPerWrite)),
  };
}
