// The report's safety section (runs with reads): what the checker found in the run's history,
// against what the target promises of its read path, and the shortest stretch that shows a
// violation, each operation with its times from the load's start.
import type { RunResult, SafetyModelResult } from './result.js';
import { timelineBar } from '../check/check-report.js';
import { faultPeriods, type FaultPeriod } from './charts/fault-periods.js';

export function safetySection(r: RunResult): string {
  const s = r.safety;
  if (!s) return '';
  const lines = ['## Safety', ''];
  const periods = faultPeriods(r.timeline.faults, r.scenario.durationMs / 1000);
  for (const m of s.models) lines.push(...modelLines(m, s.history, periods), '');
  return lines.join('\n');
}

function modelLines(m: SafetyModelResult, history: string, periods: readonly FaultPeriod[]): string[] {
  const promise = m.promised
    ? `${r(m.readMode)} promises it: the verdict holds the run to it`
    : `${r(m.readMode)} does not promise it: shown for what it is, not held`;
  const lines =
    m.model === 'linearizable'
      ? [
          `**linearizable**, ${m.ops.toLocaleString('en-US')} operations over ${m.keys.toLocaleString('en-US')} keys in \`${history}\` (${promise}): ` +
            `${m.ok} linearizable, ${m.violated} violated, ${m.unknown} unknown (checked in ${m.seconds.toFixed(2)} s).`,
        ]
      : [
          `**session** (one connection's reads of a key never go back in time), ${m.ops.toLocaleString('en-US')} reads over ${m.keys.toLocaleString('en-US')} pairs of a connection and a key (${promise}): ` +
            `${m.ok} in order, ${m.violated} with a read back in time (checked in ${m.seconds.toFixed(2)} s).`,
        ];
  const cx = m.counterexample;
  if (!cx) return lines;
  lines.push(
    '',
    m.model === 'linearizable'
      ? `Key \`${cx.key}\`, the shortest stretch of its operations that no order explains (ms from the load's start; \`pole-bench check\` shows every violated key):`
      : `Key \`${cx.key}\`: a read that saw one write, then a later read on the same connection that saw an older one (ms from the load's start):`,
    '',
    '| operation | what | invoked | completed |',
    '|---|---|---|---|',
    ...cx.ops.map(
      (o) =>
        `| ${o.process} | ${o.f} ${o.value ?? 'nothing'} | ${o.invokedMs.toFixed(1)} | ${o.completedMs === null ? 'in doubt' : o.completedMs.toFixed(1)} |`,
    ),
  );
  return [...lines, '', ...drawnWithFaults(cx.ops, periods)];
}

type CxOp = NonNullable<SafetyModelResult['counterexample']>['ops'][number];

/**
 * The counterexample on a small timeline, each operation a row from its invoke to its completion,
 * and under it every fault live at some moment of that stretch, on the same scale: what the
 * system was going through while it broke its promise.
 */
function drawnWithFaults(ops: readonly CxOp[], periods: readonly FaultPeriod[]): string[] {
  const from = Math.min(...ops.map((o) => o.invokedMs));
  const to = Math.max(...ops.map((o) => o.completedMs ?? o.invokedMs));
  const live = periods.filter((p) => p.fromS * 1000 <= to && p.toS * 1000 >= from);
  const rows = [
    ...ops.map((o) => ({
      label: `${o.process}  ${o.f} ${o.value ?? 'nothing'}`,
      a: o.invokedMs,
      b: o.completedMs,
    })),
    ...live.map((p) => ({
      label: `fault: ${p.label} (${p.fromS.toFixed(1)}-${p.toS.toFixed(1)} s)`,
      a: Math.max(from, p.fromS * 1000),
      b: Math.min(to, p.toS * 1000),
    })),
  ];
  const width = Math.max(...rows.map((r) => r.label.length));
  return [
    `The stretch drawn from ${from.toFixed(1)} to ${to.toFixed(1)} ms, with ${live.length === 0 ? 'no fault live during it' : `the faults live during it (${live.map((p) => p.label).join('; ')})`}:`,
    '',
    '```',
    ...rows.map((r) => `${r.label.padEnd(width)}  ${timelineBar(r.a, r.b, from, to)}`),
    '```',
  ];
}

/** The read path as the sentence's subject. */
function r(mode: string): string {
  return `the target's read path, ${mode},`;
}
