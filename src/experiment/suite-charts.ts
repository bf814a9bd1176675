// One chart per question of a suite that sweeps something besides the oracle: the swept value
// along x, one line per oracle (or per topology), and the figure the paper plots for it: the mean
// and the worst data center's mean request latency after the fault against the request share (its
// Fig. 7), the recovery time against the state size (its Fig. 8). Points are the means over the
// repeats, with bars of ± one standard deviation. Pure: cell summaries in, Vega-Lite specs out.
import type { ChartSpec } from '../report/charts/svg-render.js';
import type { CellSummary } from './suite-summary.js';
import { valueText } from './suite-file.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export interface SuiteChart {
  readonly file: string;
  readonly title: string;
  readonly spec: ChartSpec;
}

/** The metrics drawn against a swept axis; the state size gets the recovery, the rest latency. */
function panelsFor(axis: string): { metric: string; title: string }[] {
  if (axis === 'preload')
    return [
      { metric: 'recovery.paperRecoveryMs', title: 'recovery (first commit − elected), ms' },
      { metric: 'recovery.servingMs', title: 'fault → serving, ms' },
    ];
  return [
    { metric: 'overall.after.mean', title: 'mean request latency after the fault, ms' },
    { metric: 'overall.after.worstDcMean', title: 'worst data center’s mean after, ms' },
  ];
}

/** Charts for the questions (or, without questions, topologies) that sweep more than the oracle. */
export function suiteCharts(cells: readonly CellSummary[]): SuiteChart[] {
  const groups = new Map<string, CellSummary[]>();
  for (const c of cells) {
    const key = c.question ?? c.topology;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const charts: SuiteChart[] = [];
  let n = 0;
  for (const [title, group] of groups) {
    n += 1;
    const axes = [...new Set(group.flatMap((c) => Object.keys(c.swept)))];
    // The swept axis besides the oracle; or, in a quick variant that kept one value of it, the
    // state size or request share the cells were run with.
    const x =
      axes.find((a) => a !== 'oracle' && a !== 'target') ??
      (['preload', 'share'] as const).find((a) => group.some((c) => c.params[a] !== undefined));
    if (x === undefined) continue;
    const xOf = (c: CellSummary): string =>
      c.swept[x] ?? valueText(c.params[x as keyof CellSummary['params']]);
    const series = (c: CellSummary): string =>
      [
        ...(new Set(group.map((g) => g.topology)).size > 1 ? [c.topology] : []),
        ...axes.filter((a) => a !== x).map((a) => c.swept[a] ?? ''),
      ].join(' ') || c.topology;
    const order = [...new Set(group.map(xOf))];
    const seriesTitle = [
      ...(new Set(group.map((g) => g.topology)).size > 1 ? ['topology'] : []),
      ...axes.filter((a) => a !== x),
    ].join(', ');
    const rows = group.flatMap((c) =>
      panelsFor(x).flatMap((p) => {
        const m = c.metrics[p.metric];
        return m
          ? [
              {
                panel: p.title,
                x: xOf(c),
                series: series(c),
                mean: m.mean,
                lo: m.mean - m.sd,
                hi: m.mean + m.sd,
              },
            ]
          : [];
      }),
    );
    if (rows.length === 0) continue;
    const slug = (group[0]?.id.split('.')[0] ?? `q${n}`).replace(/[^A-Za-z0-9_-]/g, '_');
    charts.push({
      file: `chart-${slug}.svg`,
      title,
      spec: {
        $schema: SCHEMA,
        title,
        data: { values: rows },
        facet: {
          column: { field: 'panel', type: 'nominal', title: null, sort: panelsFor(x).map((p) => p.title) },
        },
        resolve: { scale: { y: 'independent' } },
        spec: {
          width: 300,
          height: 220,
          layer: [
            {
              mark: { type: 'line', point: true },
              encoding: {
                x: {
                  field: 'x',
                  type: 'ordinal',
                  sort: order,
                  title: x,
                  axis: { labelLimit: 300, labelAngle: -20 },
                },
                y: { field: 'mean', type: 'quantitative', title: 'ms' },
                color: { field: 'series', type: 'nominal', title: seriesTitle, legend: { labelLimit: 400 } },
              },
            },
            {
              mark: { type: 'rule' },
              encoding: {
                x: { field: 'x', type: 'ordinal', sort: order },
                y: { field: 'lo', type: 'quantitative' },
                y2: { field: 'hi' },
                color: { field: 'series', type: 'nominal' },
              },
            },
          ],
        },
      } as ChartSpec,
    });
  }
  return charts;
}
