// A comparison for people (markdown, for stdout and a GitHub job summary) and for
// github-action-benchmark (its "customSmallerIsBetter" JSON: one entry per metric of the current
// side, so users can track history with that action). Pure.
import { cell, count, ms, table } from '../format.js';
import type { Comparison, CompareRow, Scoped } from './compare.js';
import { RUN_SCOPE } from './load-outputs.js';

export function compareMarkdown(c: Comparison, o: { baseline: string; current: string }): string {
  const verdict =
    c.regressions > 0
      ? `**${c.regressions} regression${c.regressions === 1 ? '' : 's'}**`
      : '**No regression**';
  const parts = [
    '# pole-bench compare',
    '',
    `Baseline \`${o.baseline}\`, current \`${o.current}\`: ${verdict}, ${c.improvements} improved, ${c.rows.length} metrics compared.`,
    '',
    c.noRepeats
      ? 'Neither side has repeats, so there is no noise allowance: a rule’s margin alone decides. Repeats (a suite’s `repeats:`) give one.'
      : 'Allowance: twice the standard error of the difference of the means, from the repeats; a change must exceed the rule’s margin plus it.',
  ];
  if (c.onlyBaseline.length)
    parts.push('', `Only in the baseline (not compared): ${c.onlyBaseline.join(', ')}.`);
  if (c.onlyCurrent.length)
    parts.push('', `Only in the current (not compared): ${c.onlyCurrent.join(', ')}.`);
  const order: Record<CompareRow['verdict'], number> = { regression: 0, improved: 1, ok: 2 };
  const rows = [...c.rows]
    .sort(
      (a, b) =>
        order[a.verdict] - order[b.verdict] ||
        a.scope.localeCompare(b.scope) ||
        a.metric.localeCompare(b.metric),
    )
    .map((r) => [
      r.verdict === 'regression' ? '❌ regression' : r.verdict === 'improved' ? '✅ improved' : 'ok',
      r.scope,
      r.metric,
      r.baseline ? value(r.baseline.mean, r.baseline.sd, r.baseline.n, r.unit) : '-',
      value(r.current.mean, r.current.sd, r.current.n, r.unit),
      r.change === null
        ? '-'
        : `${r.change >= 0 ? '+' : ''}${num(r.change, r.unit)}${r.changeFraction !== null ? ` (${r.changeFraction >= 0 ? '+' : ''}${(r.changeFraction * 100).toFixed(1)} %)` : ''}`,
      num(r.allowance, r.unit),
      r.failed.length ? r.failed.join('; ') : r.rules.join('; '),
    ]);
  parts.push(
    '',
    table(
      ['', 'scope', 'metric', 'baseline', 'current', 'change', 'allowance', 'rule'],
      rows.map((r) => r.map(cell)),
    ),
  );
  return `${parts.join('\n')}\n`;
}

function num(v: number, unit: string): string {
  return unit === 'ms' ? `${ms(v)} ms` : `${count(v)}${unit === 'writes/s' ? '/s' : ''}`;
}

function value(mean: number, sd: number, n: number, unit: string): string {
  return n > 1 ? `${num(mean, unit)} ± ${num(sd, unit)} (n=${n})` : num(mean, unit);
}

/** One entry of github-action-benchmark's custom tools' JSON. */
export interface BenchmarkEntry {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly range?: string;
  readonly extra?: string;
}

/**
 * Every metric of the current side whose smaller values are better (latency, recovery, lost and
 * failed writes), as "customSmallerIsBetter" entries; throughput is left out (it is the other
 * tool type, "customBiggerIsBetter").
 */
export function benchmarkJson(current: Scoped): BenchmarkEntry[] {
  const out: BenchmarkEntry[] = [];
  for (const [scope, metrics] of current)
    for (const [metric, m] of metrics) {
      if (m.better !== 'lower') continue;
      out.push({
        name: scope === RUN_SCOPE ? metric : `${scope} ${metric}`,
        unit: m.unit,
        value: round(m.mean),
        ...(m.n > 1 ? { range: `± ${round(m.sd)}` } : {}),
        extra: `mean of ${m.n} run${m.n === 1 ? '' : 's'}; median ${round(m.median)}, min ${round(m.min)}, max ${round(m.max)}`,
      });
    }
  return out;
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
