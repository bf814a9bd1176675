// `pole-bench bench check`: how fast the linearizability checker decides a history: seeded
// histories from a model register (check/history-generator.ts) of OPS operations over KEYS keys,
// with a few violations planted, checked key by key. What is timed is what `check` and a run's
// safety section do with a history already read: pairing its events into operations and checking
// every key; making the history is not.
import { checkHistory } from '../check/check-history.js';
import { generateHistory } from '../check/history-generator.js';
import { pairOperations } from '../check/history-ops.js';

export interface CheckBenchOptions {
  readonly ops: number;
  readonly keys: number;
  readonly processes: number;
  readonly violations: number;
  readonly runs: number;
  readonly seed: number;
  readonly budgetMs: number;
  readonly method: 'auto' | 'search';
  readonly log?: (line: string) => void;
}

export interface CheckBenchRun {
  readonly seconds: number;
  readonly ok: number;
  readonly violated: number;
  readonly unknown: number;
  /** Whether the violated keys are exactly the planted ones (and nothing is unknown). */
  readonly found: boolean;
  /** The process's heap after the check (MB), the history's events and operations included. */
  readonly heapMb: number;
}

export interface CheckBenchResult {
  readonly ops: number;
  readonly keys: number;
  readonly processes: number;
  readonly violations: number;
  readonly method: 'auto' | 'search';
  /** Median over the runs. */
  readonly seconds: number;
  readonly runs: readonly CheckBenchRun[];
}

export function runCheckBench(o: CheckBenchOptions): CheckBenchResult {
  const runs: CheckBenchRun[] = [];
  for (let i = 0; i < o.runs; i++) {
    const g = generateHistory({
      seed: o.seed + i,
      ops: o.ops,
      keys: o.keys,
      processes: o.processes,
      violations: o.violations,
    });
    const t0 = performance.now();
    const ops = pairOperations(g.events.map((event, n) => ({ event, line: n + 1 })));
    const r = checkHistory(ops, { model: 'register', budgetMs: o.budgetMs, method: o.method });
    const seconds = (performance.now() - t0) / 1000;
    const violatedKeys = r.problems.filter((p) => p.verdict === 'violated').map((p) => p.key);
    const found =
      r.unknown === 0 &&
      violatedKeys.length === g.planted.size &&
      violatedKeys.every((k) => g.planted.has(k));
    const run = {
      seconds,
      ok: r.ok,
      violated: r.violated,
      unknown: r.unknown,
      found,
      heapMb: process.memoryUsage().heapUsed / 1e6,
    };
    runs.push(run);
    o.log?.(
      `run ${i + 1}: ${seconds.toFixed(2)} s for ${r.ops} ops over ${r.keys} keys: ${r.ok} linearizable, ${r.violated} violated, ${r.unknown} unknown; planted ${g.planted.size}, ${found ? 'all found' : 'NOT all found'}; heap ${run.heapMb.toFixed(0)} MB`,
    );
  }
  const sorted = runs.map((r) => r.seconds).sort((a, b) => a - b);
  return {
    ops: o.ops,
    keys: o.keys,
    processes: o.processes,
    violations: o.violations,
    method: o.method,
    seconds: sorted[sorted.length >> 1]!,
    runs,
  };
}
