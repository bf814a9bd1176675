// The report's safety section (runs with reads): what the checker found in the run's history,
// against what the target promises of its read path, and the shortest stretch that shows a
// violation, each operation with its times from the load's start.
import type { RunResult, SafetyModelResult } from './result.js';

export function safetySection(r: RunResult): string {
  const s = r.safety;
  if (!s) return '';
  const lines = ['## Safety', ''];
  for (const m of s.models) lines.push(...modelLines(m, s.history), '');
  return lines.join('\n');
}

function modelLines(m: SafetyModelResult, history: string): string[] {
  const promise = m.promised
    ? `${r(m.readMode)} promises it: the verdict holds the run to it`
    : `${r(m.readMode)} does not promise it: shown for what it is, not held`;
  const lines = [
    `**${m.model}**, ${m.ops.toLocaleString('en-US')} operations over ${m.keys.toLocaleString('en-US')} keys in \`${history}\` (${promise}): ` +
      `${m.ok} linearizable, ${m.violated} violated, ${m.unknown} unknown (checked in ${m.seconds.toFixed(2)} s).`,
  ];
  const cx = m.counterexample;
  if (!cx) return lines;
  lines.push(
    '',
    `Key \`${cx.key}\`, the shortest stretch of its operations that no order explains (ms from the load's start; \`pole-bench check\` shows every violated key):`,
    '',
    '| operation | what | invoked | completed |',
    '|---|---|---|---|',
    ...cx.ops.map(
      (o) =>
        `| ${o.process} | ${o.f} ${o.value ?? 'nothing'} | ${o.invokedMs.toFixed(1)} | ${o.completedMs === null ? 'in doubt' : o.completedMs.toFixed(1)} |`,
    ),
  );
  return lines;
}

/** The read path as the sentence's subject. */
function r(mode: string): string {
  return `the target's read path, ${mode},`;
}
