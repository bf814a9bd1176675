// The run's per-second timeline as text: sparklines of throughput and p99 with the faults marked
// under the second they happened, and a table of the seconds around each fault, where the
// interesting part of a run is. Plain text in a code block reads the same in a terminal, in a
// GitHub comment and in a CI log.
import { count, ms, rate, table } from './format.js';
import type { TimelinePoint } from './result.js';
import type { FaultMark } from '../vocabulary/names.js';

const BARS = '▁▂▃▄▅▆▇█';
/** Wider runs are folded so the lines stay readable: a column then covers several seconds. */
const MAX_COLUMNS = 100;
const BEFORE_FAULT_S = 2;
const AFTER_FAULT_S = 8;

export interface TimelineMark {
  /** Seconds from the load start. */
  readonly atS: number;
  readonly label: string;
}

/** One member's event-loop stall: when it ended (seconds from the load start), how long. */
export interface StallMark {
  readonly atS: number;
  readonly node: string;
  readonly ms: number;
}

interface Column {
  readonly fromS: number;
  readonly toS: number;
  readonly writesPerSec: number;
  readonly p99Ms: number | null;
  readonly errors: number;
}

/** Sparklines in a code block; `marks` (faults, the election) get a ▲ under their column. */
export function sparklines(points: readonly TimelinePoint[], faults: readonly FaultMark[]): string {
  if (points.length === 0) return '_No per-second data: the load did not run._';
  const cols = columns(points);
  const writes = cols.map((c) => c.writesPerSec);
  const p99s = cols.map((c) => c.p99Ms).filter((v): v is number => v !== null);
  const totalErrors = cols.reduce((s, c) => s + c.errors, 0);
  const span =
    cols.length === points.length ? '1 s' : `${Math.round(cols[0] ? cols[0].toS - cols[0].fromS : 1)} s`;

  const faultRow = cols.map((c) => (faults.some((f) => f.atS >= c.fromS && f.atS < c.toS) ? '▲' : ' '));
  const rows: [string, string, string][] = [
    [
      'writes/s',
      bars(writes, Math.max(...writes)),
      `${rate(Math.min(...writes))} to ${rate(Math.max(...writes))} writes/s`,
    ],
    [
      'p99',
      bars(
        cols.map((c) => c.p99Ms),
        p99s.length > 0 ? Math.max(...p99s) : 0,
      ),
      p99s.length > 0 ? `${ms(Math.min(...p99s))} to ${ms(Math.max(...p99s))} ms` : 'no acknowledged writes',
    ],
    ['errors', cols.map((c) => (c.errors > 0 ? '×' : '·')).join(''), `${count(totalErrors)} in total`],
    [
      'faults',
      faultRow.join('').trimEnd(),
      faults
        .map(
          (f) =>
            `▲ ${f.atS.toFixed(1)} s: ${f.action} ${f.node}${f.lateMs ? ` (${ms(f.lateMs)} ms late)` : ''}`,
        )
        .join('; '),
    ],
  ];
  const width = cols.length;
  const lines = rows.map(([label, line, note]) =>
    `${label.padEnd(9)}${line.padEnd(width)}  ${note}`.trimEnd(),
  );
  const axis = `${''.padEnd(9)}0 s${`${Math.round(cols[cols.length - 1]?.toS ?? 0)} s`.padStart(Math.max(width - 3, 1))}`;
  return ['```', ...lines, axis, '```', `One column per ${span}.`].join('\n');
}

/**
 * The seconds from shortly before to a while after each fault, as a table. `marks` label the
 * seconds something happened (the fault itself, the new leader); `stalls`, when the members
 * watched their event loops, the stalls in each second (a column of their own, empty or not).
 */
export function faultWindowTable(
  points: readonly TimelinePoint[],
  marks: readonly TimelineMark[],
  stalls?: readonly StallMark[],
): string {
  if (marks.length === 0 || points.length === 0) return '';
  const inWindow = (t: number): boolean =>
    marks.some((m) => t >= Math.floor(m.atS) - BEFORE_FAULT_S && t <= Math.floor(m.atS) + AFTER_FAULT_S);
  const rows = points
    .filter((p) => inWindow(p.t))
    .map((p) => {
      const here = marks.filter((m) => m.atS >= p.t && m.atS < p.t + 1).map((m) => `◀ ${m.label}`);
      const row = [String(p.t), rate(p.writesPerSec), ms(p.p99Ms), count(p.errors), here.join('; ')];
      return stalls ? [...row, stallsIn(stalls, p.t)] : row;
    });
  if (rows.length === 0) return '';
  const header = ['t (s)', 'writes/s', 'p99 (ms)', 'errors', ''];
  return table(stalls ? [...header, 'stalls'] : header, rows, [0, 1, 2, 3]);
}

/**
 * The stalls of second t per member, in member order: one as "p3 45 ms", several as "p3 ×4 (longest
 * 78 ms)", so that a busy second stays one short cell.
 */
function stallsIn(stalls: readonly StallMark[], t: number): string {
  const by = new Map<string, number[]>();
  for (const s of stalls) if (s.atS >= t && s.atS < t + 1) by.set(s.node, [...(by.get(s.node) ?? []), s.ms]);
  return [...by]
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([node, list]) =>
      list.length === 1
        ? `${node} ${Math.round(list[0] ?? 0)} ms`
        : `${node} ×${list.length} (longest ${Math.round(Math.max(...list))} ms)`,
    )
    .join('; ');
}

function columns(points: readonly TimelinePoint[]): Column[] {
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const per = Math.max(1, Math.ceil(sorted.length / MAX_COLUMNS));
  const out: Column[] = [];
  for (let i = 0; i < sorted.length; i += per) {
    const group = sorted.slice(i, i + per);
    const p99s = group.map((p) => p.p99Ms).filter((v): v is number => v !== null);
    const first = group[0] as TimelinePoint;
    const last = group[group.length - 1] as TimelinePoint;
    out.push({
      fromS: first.t,
      toS: last.t + 1,
      // A folded column shows the mean throughput but the worst p99: a spike must not average away.
      writesPerSec: group.reduce((s, p) => s + p.writesPerSec, 0) / group.length,
      p99Ms: p99s.length > 0 ? Math.max(...p99s) : null,
      errors: group.reduce((s, p) => s + p.errors, 0),
    });
  }
  return out;
}

function bars(values: readonly (number | null)[], top: number): string {
  return values
    .map((v) => {
      // Nothing at all (no writes, no p99) stays blank, so an outage reads as a gap.
      if (v === null || v === 0) return ' ';
      if (top <= 0) return BARS[0];
      const i = Math.min(BARS.length - 1, Math.max(0, Math.round((v / top) * (BARS.length - 1))));
      return BARS[i];
    })
    .join('');
}
