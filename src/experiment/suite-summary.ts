// suite.json and suite.md: what a suite found, cell by cell, from its runs' results. One table per
// question (a topology and the values swept over it): per cell the leaders elected, each data
// center's mean latency ± its standard deviation across repeats next to the model, the worst data
// center, and the recovery phases. Pure: results in, documents out.
import { cell as tableCell, ms, table } from '../report/format.js';
import type { RunResult } from '../report/result.js';
import { metricSpreads, type MetricSpread } from '../report/run-metrics.js';
import type { Cell, Suite } from './suite-file.js';
import { median } from '../util/spread.js';
import type { SuiteOutcome, SuiteRun } from './suite-runner.js';
import { SUITE_SCHEMA_ID } from '../vocabulary/result-schema.js';

export interface CellSummary {
  readonly id: string;
  readonly topology: string;
  /** The question the cell answers, when the suite has questions. */
  readonly question: string | null;
  readonly swept: Readonly<Record<string, string>>;
  readonly params: Cell['params'];
  readonly configHash: string;
  readonly runs: readonly SuiteRun[];
  /** How often each node was the initial and the elected leader over the repeats. */
  readonly leaders: {
    readonly initial: Record<string, number>;
    readonly elected: Record<string, number>;
    /** Where leadership was moved after the election (etcd's --etcd-prefer); empty when never. */
    readonly transferredTo?: Record<string, number>;
  };
  /** Every metric (run-metrics.ts) over the repeats that finished. */
  readonly metrics: Readonly<Record<string, MetricSpread>>;
  /** model[dc][window]: the median of the runs' model figures. */
  readonly model: Readonly<Record<string, { readonly before: number | null; readonly after: number | null }>>;
  /** The data center with the highest mean latency in each window. */
  readonly worst: { readonly before: string | null; readonly after: string | null };
}

export interface SuiteDocument {
  readonly schema: typeof SUITE_SCHEMA_ID;
  readonly name: string;
  readonly description: string;
  readonly file: string;
  readonly quick: boolean;
  readonly runtime: string;
  readonly repeats: number;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Why the suite stopped before its end; null when every run was tried. */
  readonly interrupted: string | null;
  readonly cells: readonly CellSummary[];
}

export function suiteDocument(
  suite: Suite,
  outcome: SuiteOutcome,
  o: { runtime: string; startedAt: string; finishedAt: string },
): SuiteDocument {
  const cells = suite.cells.map((c) => {
    const runs = outcome.runs.filter((r) => r.cell === c.id);
    const results = runs.flatMap((r) => {
      const res = outcome.results.get(`${c.id}/${r.repeat - 1}`);
      return res ? [res] : [];
    });
    return cellSummary(c, runs, results);
  });
  return {
    schema: SUITE_SCHEMA_ID,
    name: suite.name,
    description: suite.description,
    file: suite.file,
    quick: suite.quick,
    runtime: o.runtime,
    repeats: suite.repeats,
    startedAt: o.startedAt,
    finishedAt: o.finishedAt,
    interrupted: outcome.interrupted,
    cells,
  };
}

export function cellSummary(c: Cell, runs: readonly SuiteRun[], results: readonly RunResult[]): CellSummary {
  const count = (xs: (string | null)[]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const x of xs) if (x !== null) out[x] = (out[x] ?? 0) + 1;
    return out;
  };
  const metrics = Object.fromEntries(metricSpreads(results));
  const dcs = results[0]?.topology.datacenters.map((d) => d.name) ?? [];
  const model = Object.fromEntries(
    dcs.map((dc) => [
      dc,
      {
        before: medianOf(results.map((r) => r.model[dc]?.before)),
        after: medianOf(results.map((r) => r.model[dc]?.after)),
      },
    ]),
  );
  const worstIn = (w: 'before' | 'after'): string | null => {
    let worst: string | null = null;
    let top = -Infinity;
    for (const dc of dcs) {
      const m = metrics[`latency.${dc}.${w}.mean`]?.mean;
      if (m !== undefined && m > top) [worst, top] = [dc, m];
    }
    return worst;
  };
  return {
    id: c.id,
    topology: c.topologyName,
    question: c.question ?? null,
    swept: c.swept,
    params: c.params,
    configHash: c.configHash,
    runs,
    leaders: {
      initial: count(results.map((r) => r.leaders.initial)),
      elected: count(results.map((r) => r.leaders.elected)),
      transferredTo: count(results.map((r) => r.leaders.transferredTo ?? null)),
    },
    metrics,
    model,
    worst: { before: worstIn('before'), after: worstIn('after') },
  };
}

function medianOf(xs: readonly (number | null | undefined)[]): number | null {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length === 0 ? null : median(v);
}

/**
 * suite.md. `command` is how the suite was run, for the reader to run it again; `charts` are the
 * SVG files written beside it (suite-charts.ts), each under its question's table.
 */
export function renderSuiteMarkdown(
  doc: SuiteDocument,
  command: string,
  charts: readonly { readonly file: string; readonly title: string }[] = [],
): string {
  const tried = doc.cells.flatMap((c) => c.runs);
  const failed = tried.filter((r) => r.status === 'failed').length;
  const notRun = tried.filter((r) => r.status === 'not-run').length;
  const suspect = tried.filter((r) => r.verdict === 'suspect').length;
  const parts = [
    `# pole-bench suite: ${doc.name}${doc.quick ? ' (quick)' : ''}`,
    '',
    ...(doc.description ? [doc.description.trim(), ''] : []),
    `\`${command}\``,
    '',
    `${doc.cells.length} cells × ${doc.repeats} repeats on the ${doc.runtime} runtime, ${doc.startedAt} to ${doc.finishedAt}: ` +
      `${tried.length - failed - notRun} runs finished, ${failed} failed, ${notRun} not run.` +
      (suspect > 0
        ? ` **${suspect} suspect**: their own cross-checks disagree, so their figures (in the cells marked "suspect") cannot be trusted.`
        : '') +
      (doc.interrupted ? ` **Interrupted** (${doc.interrupted}): the same command resumes.` : ''),
    '',
    'Latency cells: mean ± standard deviation across repeats, ms, with the paper’s model in brackets; before → after the fault.',
  ];
  // One table per question; a suite without questions asks one per topology.
  const groups = new Map<string, CellSummary[]>();
  for (const c of doc.cells) {
    const key = c.question ?? c.topology;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  for (const [key, cells] of groups) {
    const axes = [...new Set(cells.flatMap((c) => Object.keys(c.swept)))];
    const dcs = [...new Set(cells.flatMap((c) => Object.keys(c.model)))];
    const topologies = [...new Set(cells.map((c) => c.topology))];
    const asked = cells[0]?.question !== null;
    parts.push('', asked ? `## ${key}` : `## ${key}${axes.length ? `: ${axes.join(' × ')}` : ''}`, '');
    // Within a question, cells of several topologies name theirs.
    const topoCol = asked && topologies.length > 1;
    const rows = cells.map((c) => [
      ...(topoCol ? [c.topology] : []),
      ...axes.map((a) => c.swept[a] ?? ''),
      runsCell(c.runs),
      leadersCell(c),
      ...dcs.map((dc) => latencyCell(c, dc)),
      c.worst.after ?? c.worst.before ?? '-',
      phaseCell(c.metrics['recovery.electedMs']),
      phaseCell(c.metrics['recovery.servingMs']),
      String(c.metrics['writes.lost']?.values.reduce((s, v) => s + v, 0) ?? '-'),
    ]);
    parts.push(
      table(
        [
          ...(topoCol ? ['topology'] : []),
          ...axes,
          'runs',
          'leaders',
          ...dcs,
          'worst DC',
          'elected, ms',
          'serving, ms',
          'lost',
        ],
        rows.map((r) => r.map(tableCell)),
      ),
    );
    for (const c of charts.filter((c) => c.title === key)) parts.push('', `![${c.title}](${c.file})`);
  }
  return `${parts.join('\n')}\n`;
}

function runsCell(runs: readonly SuiteRun[]): string {
  const ok = runs.filter((r) => r.status === 'done' || r.status === 'resumed').length;
  const failed = runs.filter((r) => r.status === 'failed').length;
  const suspect = runs.filter((r) => r.verdict === 'suspect').length;
  const notes = [...(failed > 0 ? [`${failed} failed`] : []), ...(suspect > 0 ? [`${suspect} suspect`] : [])];
  return notes.length > 0 ? `${ok} (${notes.join(', ')})` : String(ok);
}

function leadersCell(c: CellSummary): string {
  const fmt = (m: Record<string, number>): string =>
    Object.entries(m)
      .sort(([, a], [, b]) => b - a)
      .map(([n, k]) => (k > 1 ? `${n} ×${k}` : n))
      .join(', ') || '-';
  // A leader moved after the election (etcd's MoveLeader) is where the "after" window was served from.
  const to = c.leaders.transferredTo ?? {};
  const moved = Object.keys(to).length > 0 ? ` → ${fmt(to)} (moved)` : '';
  return `${fmt(c.leaders.initial)} → ${fmt(c.leaders.elected)}${moved}`;
}

function latencyCell(c: CellSummary, dc: string): string {
  const one = (w: 'before' | 'after'): string => {
    const m = c.metrics[`latency.${dc}.${w}.mean`];
    if (!m) return '-';
    const model = c.model[dc]?.[w];
    return `${ms(m.mean)} ± ${ms(m.sd)}${model !== null && model !== undefined ? ` (${ms(model)})` : ''}`;
  };
  return `${one('before')} → ${one('after')}`;
}

function phaseCell(m: MetricSpread | undefined): string {
  if (!m) return '-';
  return m.n > 1 ? `${ms(m.median)} (${ms(m.min)}-${ms(m.max)})` : ms(m.median);
}
