// A history check as `pole-bench check` prints it: per file, the keys by verdict; per violated key,
// its shortest counterexample, each operation with its line, and drawn on a small timeline (one
// row an operation, from its invoke to its completion: `>` where it never completed).
import type { HistoryCheck } from './check-history.js';
import type { Op } from './history-ops.js';

const WIDTH = 40;

export function formatCheck(file: string, format: string, c: HistoryCheck): string {
  const lines = [
    `${file} (${format}, ${c.model}): ${c.ops} ops, ${c.keys} key${c.keys === 1 ? '' : 's'}: ` +
      `${c.ok} linearizable, ${c.violated} violated, ${c.unknown} unknown (${c.seconds.toFixed(2)} s)`,
  ];
  for (const p of c.problems) {
    const name = p.key === '' ? 'the register' : `key ${p.key}`;
    if (p.verdict === 'unknown') {
      lines.push(`  ${name}: unknown: the time ran out after ${p.steps} steps over ${p.ops} ops`);
      continue;
    }
    const cx = p.counterexample!;
    lines.push(
      `  ${name}: violated; ${cx.minimal ? 'the shortest' : 'a'} stretch of ${cx.ops.length} of its ${p.ops} ops that shows it:`,
      ...drawn(cx.ops),
    );
  }
  return lines.join('\n');
}

/** What an operation did, as a person reads it. */
export function described(o: Op): string {
  if (o.f === 'read') return `read → ${o.output ?? 'nil'}`;
  if (o.f === 'write') return `write ${String(o.input ?? 'nil')}`;
  const [from, to] = o.input as readonly [string | null, string | null];
  return `cas ${from ?? 'nil'} → ${to ?? 'nil'}`;
}

function drawn(ops: readonly Op[]): string[] {
  const from = Math.min(...ops.map((o) => o.call));
  const finite = ops.map((o) => (o.ret === Infinity ? o.call : o.ret));
  const to = Math.max(...finite, ...ops.map((o) => o.call));
  const label = (o: Op): string =>
    `line ${o.line}  p ${o.process}  ${described(o)}${o.status === 'info' ? ' (info)' : ''}`;
  const width = Math.max(...ops.map((o) => label(o).length));
  return ops.map(
    (o) =>
      `    ${label(o).padEnd(width)}  ${timelineBar(o.call, o.ret === Infinity ? null : o.ret, from, to)}`,
  );
}

/**
 * One span on a timeline `WIDTH` characters wide over [from, to]: `├──┤` from its start to its end,
 * `│` where both fall on one character, `├──>` to the edge where it never ended (`end` null).
 */
export function timelineBar(start: number, end: number | null, from: number, to: number): string {
  const scale = (t: number): number =>
    to > from ? Math.max(0, Math.min(WIDTH - 1, Math.round(((t - from) / (to - from)) * (WIDTH - 1)))) : 0;
  const a = scale(start);
  const b = end === null ? WIDTH - 1 : scale(end);
  return (
    ' '.repeat(a) +
    (end === null
      ? '├' + '─'.repeat(Math.max(0, b - a - 1)) + '>'
      : b > a
        ? '├' + '─'.repeat(b - a - 1) + '┤'
        : '│')
  );
}
