// The figures of one run that suites tabulate and `compare` holds against a baseline, flattened to
// named numbers ("latency.tud.after.mean"), and their spread over a cell's repeats. One list, so
// that a suite's table and a comparison always speak of the same metric. Pure.
import type { RunResult } from './result.js';
import { median as medianOf } from '../util/spread.js';

export type Better = 'lower' | 'higher';

export interface MetricValue {
  readonly value: number;
  readonly unit: 'ms' | 'writes' | 'writes/s' | 'keys';
  readonly better: Better;
}

const WINDOWS = ['before', 'after'] as const;
const STATS = ['mean', 'p50', 'p99'] as const;
const PHASES = ['detectMs', 'electedMs', 'servingMs', 'firstCommitMs'] as const;

/** Every metric the run observed (a figure it could not observe is absent, never 0). */
export function runMetrics(r: RunResult): Map<string, MetricValue> {
  const out = new Map<string, MetricValue>();
  const put = (
    name: string,
    v: number | null | undefined,
    unit: MetricValue['unit'],
    better: Better,
  ): void => {
    if (v !== null && v !== undefined && Number.isFinite(v)) out.set(name, { value: v, unit, better });
  };
  for (const [dc, windows] of Object.entries(r.latency))
    for (const w of WINDOWS)
      for (const s of STATS) put(`latency.${dc}.${w}.${s}`, windows[w]?.[s], 'ms', 'lower');
  // Over every data center: the mean of all requests (weighted by each one's count) and the worst
  // data center's mean (the paper's Fig. 7 mean and worst-case request latency).
  for (const w of WINDOWS) {
    const windows = Object.values(r.latency).flatMap((l) => {
      const s = l[w];
      return s && s.count > 0 && s.mean !== null ? [{ count: s.count, mean: s.mean }] : [];
    });
    const n = windows.reduce((t, x) => t + x.count, 0);
    if (n > 0) {
      put(`overall.${w}.mean`, windows.reduce((t, x) => t + x.count * x.mean, 0) / n, 'ms', 'lower');
      put(`overall.${w}.worstDcMean`, Math.max(...windows.map((x) => x.mean)), 'ms', 'lower');
    }
  }
  for (const p of PHASES) put(`recovery.${p}`, r.recovery[p], 'ms', 'lower');
  put('recovery.paperRecoveryMs', r.recovery.paperRecoveryMs, 'ms', 'lower');
  put('writes.lost', r.writes.lost, 'writes', 'lower');
  if (r.safety) {
    put('safety.broken', r.safety.broken, 'keys', 'lower');
    put('safety.undecided', r.safety.undecided, 'keys', 'lower');
  }
  put('writes.failed', r.writes.failed, 'writes', 'lower');
  put('load.achievedRate', r.load.achievedRate, 'writes/s', 'higher');
  return out;
}

/** A metric over a cell's repeats. */
export interface MetricSpread {
  readonly unit: MetricValue['unit'];
  readonly better: Better;
  readonly n: number;
  readonly mean: number;
  readonly median: number;
  /** Sample standard deviation; 0 for a single run. */
  readonly sd: number;
  readonly min: number;
  readonly max: number;
  readonly values: readonly number[];
}

/** Each metric's spread over the runs that observed it. */
export function metricSpreads(runs: readonly RunResult[]): Map<string, MetricSpread> {
  const all = new Map<string, { unit: MetricValue['unit']; better: Better; values: number[] }>();
  for (const r of runs)
    for (const [name, m] of runMetrics(r)) {
      const entry = all.get(name) ?? { unit: m.unit, better: m.better, values: [] };
      entry.values.push(m.value);
      all.set(name, entry);
    }
  const out = new Map<string, MetricSpread>();
  for (const [name, e] of all) out.set(name, spreadOf(e.values, e.unit, e.better));
  return out;
}

export function spreadOf(values: readonly number[], unit: MetricValue['unit'], better: Better): MetricSpread {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sorted = [...values].sort((a, b) => a - b);
  const median = medianOf(values);
  const sd = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : 0;
  return {
    unit,
    better,
    n,
    mean,
    median,
    sd,
    min: sorted[0] as number,
    max: sorted[n - 1] as number,
    values,
  };
}
