// src/report/compare/: `pole-bench compare`: reading runs and suites, the regression rules, the noise
// allowance, and the markdown and benchmark-JSON output.
//
// Baseline against current, metric by metric. Both sides are sets of scopes (a single run is one
// scope, "run"; a suite has one per cell) with each metric's spread over the repeats. A metric
// regressed when it got worse by more than its rule allows *plus* a noise allowance taken from the
// repeats: twice the standard error of the difference of the means, with the standard deviation
// pooled from the sides that have at least two repeats. Without repeats on either side there is
// no allowance (the rule alone decides), which the output says. Pure.
import type { MetricSpread } from '../run-metrics.js';
import type { CompareRule } from './compare-rules.js';

export type Scoped = ReadonlyMap<string, ReadonlyMap<string, MetricSpread>>;

export type RowVerdict = 'regression' | 'improved' | 'ok';

export interface CompareRow {
  readonly scope: string;
  readonly metric: string;
  readonly unit: string;
  readonly better: MetricSpread['better'];
  readonly baseline: { readonly mean: number; readonly sd: number; readonly n: number } | null;
  readonly current: { readonly mean: number; readonly sd: number; readonly n: number; readonly max: number };
  /** current − baseline (means); null without a baseline. */
  readonly change: number | null;
  /** change / baseline; null without a baseline or with a zero one. */
  readonly changeFraction: number | null;
  /** The noise allowance, in the metric's unit (0: no repeats to take it from). */
  readonly allowance: number;
  readonly verdict: RowVerdict;
  /** The rules that matched this metric, and the ones that failed. */
  readonly rules: readonly string[];
  readonly failed: readonly string[];
}

export interface Comparison {
  readonly rows: readonly CompareRow[];
  readonly regressions: number;
  readonly improvements: number;
  /** Scopes only one side has (a cell added or removed): listed, never a regression. */
  readonly onlyBaseline: readonly string[];
  readonly onlyCurrent: readonly string[];
  /** True when no metric had repeats on either side: allowances are all 0. */
  readonly noRepeats: boolean;
}

/** z for twice the standard error (about 95 % of the noise of normally spread means). */
const NOISE_Z = 2;

export function compareScopes(baseline: Scoped, current: Scoped, rules: readonly CompareRule[]): Comparison {
  const rows: CompareRow[] = [];
  let anyRepeats = false;
  for (const [scope, metrics] of current) {
    const base = baseline.get(scope);
    for (const [metric, cur] of metrics) {
      const matching = rules.filter((r) => r.pattern.test(metric));
      if (matching.length === 0) continue;
      const b = base?.get(metric) ?? null;
      if ((b?.n ?? 0) > 1 || cur.n > 1) anyRepeats = true;
      rows.push(compareMetric(scope, metric, b, cur, matching));
    }
  }
  return {
    rows,
    regressions: rows.filter((r) => r.verdict === 'regression').length,
    improvements: rows.filter((r) => r.verdict === 'improved').length,
    onlyBaseline: [...baseline.keys()].filter((s) => !current.has(s)),
    onlyCurrent: [...current.keys()].filter((s) => !baseline.has(s)),
    noRepeats: !anyRepeats,
  };
}

function compareMetric(
  scope: string,
  metric: string,
  b: MetricSpread | null,
  cur: MetricSpread,
  rules: readonly CompareRule[],
): CompareRow {
  const allowance = b ? noiseAllowance(b, cur) : 0;
  const change = b ? cur.mean - b.mean : null;
  // Positive when the metric got worse, in its own direction.
  const worse = change === null ? null : cur.better === 'lower' ? change : -change;
  const failed: string[] = [];
  let improved = false;
  for (const r of rules) {
    if (r.kind === 'limit') {
      if (r.op === '>' ? cur.max > r.bound : cur.max >= r.bound) failed.push(r.text);
      continue;
    }
    if (worse === null || b === null) continue;
    const margin = (r.kind === 'relative' ? r.fraction * Math.abs(b.mean) : r.amount) + allowance;
    if (worse > margin) failed.push(r.text);
    else if (-worse > margin) improved = true;
  }
  return {
    scope,
    metric,
    unit: cur.unit,
    better: cur.better,
    baseline: b ? { mean: b.mean, sd: b.sd, n: b.n } : null,
    current: { mean: cur.mean, sd: cur.sd, n: cur.n, max: cur.max },
    change,
    changeFraction: change !== null && b && b.mean !== 0 ? change / Math.abs(b.mean) : null,
    allowance,
    verdict: failed.length > 0 ? 'regression' : improved ? 'improved' : 'ok',
    rules: rules.map((r) => r.text),
    failed,
  };
}

/** NOISE_Z standard errors of the difference of the two means; 0 when neither side repeated. */
export function noiseAllowance(b: MetricSpread, c: MetricSpread): number {
  const variances = [b, c].filter((s) => s.n > 1).map((s) => s.sd ** 2);
  if (variances.length === 0) return 0;
  const pooledSd = Math.sqrt(variances.reduce((s, v) => s + v, 0) / variances.length);
  return NOISE_Z * pooledSd * Math.sqrt(1 / b.n + 1 / c.n);
}
