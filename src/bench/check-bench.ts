// `pole-bench bench check`: how fast the linearizability checker decides a history: seeded
// histories from a model register (check/history-generator.ts) of OPS operations over KEYS keys,
// with a few violations planted, checked key by key. What is timed is what `check` and a run's
// safety section do with a history already read: pairing its events into operations and checking
// every key; making the history is not. Beside it, what `check FILE...` does with many small
// Jepsen histories: FILES single-key history.edn files of 100-200 operations by 5 processes writing
// values 0-4 (so the search decides them, not the zones), every tenth with a violation, read,
// parsed and checked in one call.
import { checkHistory } from '../check/check-history.js';
import { generateHistory, toEdn } from '../check/history-generator.js';
import { checkFile } from '../check/check-files.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Random } from '../util/random.js';
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
  /** Single-key EDN files checked in one call, after the runs (0: none). */
  readonly files: number;
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
  /** The files' check, where asked for. */
  readonly files?: FilesBench;
}

export interface FilesBench {
  readonly files: number;
  readonly ops: number;
  /** Reading, parsing and checking them all, one after the other. */
  readonly seconds: number;
  readonly violatedFiles: number;
  /** Whether exactly the files given a violation came out violated, and none unknown. */
  readonly found: boolean;
}

export async function runCheckBench(o: CheckBenchOptions): Promise<CheckBenchResult> {
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
  const files = o.files > 0 ? await benchFiles(o.files, o.seed, o.budgetMs) : undefined;
  if (files)
    o.log?.(
      `${files.files} EDN files, ${files.ops} ops: ${files.seconds.toFixed(2)} s; ${files.violatedFiles} violated, ${files.found ? 'exactly those planted' : 'NOT those planted'}`,
    );
  return {
    ops: o.ops,
    keys: o.keys,
    processes: o.processes,
    violations: o.violations,
    method: o.method,
    seconds: sorted[sorted.length >> 1]!,
    runs,
    ...(files ? { files } : {}),
  };
}

async function benchFiles(count: number, seed: number, budgetMs: number): Promise<FilesBench> {
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-check-'));
  try {
    const rnd = new Random(seed);
    const planted = new Set<string>();
    const paths: string[] = [];
    let ops = 0;
    for (let i = 0; i < count; i++) {
      const n = rnd.int(100, 200);
      ops += n;
      const g = generateHistory({
        seed: seed * 7919 + i,
        ops: n,
        keys: 1,
        processes: 5,
        values: 5,
        violations: i % 10 === 0 ? 1 : 0,
      });
      const path = join(dir, `h${i}.edn`);
      if (g.planted.size > 0) planted.add(path);
      await writeFile(path, toEdn(g.events));
      paths.push(path);
    }
    const t0 = performance.now();
    const violated = new Set<string>();
    let unknown = 0;
    for (const path of paths) {
      const { check } = await checkFile(path, { model: 'register', format: 'auto', budgetMs });
      if (check.violated > 0) violated.add(path);
      unknown += check.unknown;
    }
    const seconds = (performance.now() - t0) / 1000;
    const found =
      unknown === 0 && violated.size === planted.size && [...violated].every((p) => planted.has(p));
    return { files: count, ops, seconds, violatedFiles: violated.size, found };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
