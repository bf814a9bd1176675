// report.md's "Clocks" section, for a run whose members or agents ran on other hosts: each host's
// clock against the harness's before and after the load, the drift between, and what that leaves
// of certainty in the figures that subtract one host's stamp from another's. Pure, from result.json.
import {
  hostClocksFromInfo,
  movedByBeforeUncertaintyMs,
  uncertaintyNote,
  type ClockReport,
} from '../measure/clock-offset.js';
import { ms, table } from './format.js';
import type { RunResult } from './result.js';

/**
 * The most a span between two hosts' stamps around harness wall time `atMs` can be off by: the two
 * largest ± of the stamps' hosts (the harness's own stamps have none).
 */
export function worstSpanUncertaintyMs(c: ClockReport, atMs: number): number {
  const each = Object.values(c.hosts)
    .map((h) => movedByBeforeUncertaintyMs(hostClocksFromInfo(h).wall, atMs))
    .sort((a, b) => b - a);
  return (each[0] ?? 0) + (each[1] ?? 0);
}

export function clocksSection(r: RunResult): string {
  const c = r.clocks;
  if (!c) return '';
  const pm = (offset: number, u: number): string => `${ms(offset)} ± ${ms(u)}`;
  const rows = Object.entries(c.hosts).map(([host, h]) => [
    host,
    pm(h.before.offsetMs, h.before.uncertaintyMs),
    h.after ? pm(h.after.offsetMs, h.after.uncertaintyMs) : 'not measured',
    h.driftPpm === null ? '—' : `${h.driftPpm.toFixed(1)} ± ${(h.driftUncertaintyPpm ?? 0).toFixed(1)}`,
  ]);
  // The recovery's figures are spans from the fault's stamp to members' and agents' stamps.
  const loadStart = Date.parse(r.timeline.startedAt ?? r.startedAt);
  const at = loadStart + (r.recovery.faultAtS ?? 0) * 1000;
  const u = worstSpanUncertaintyMs(c, at);
  const figures: Array<[string, number | null]> = [
    ['detected', r.recovery.detectMs],
    ['elected', r.recovery.electedMs],
    ['serving', r.recovery.servingMs],
    ['first commit', r.recovery.firstCommitMs],
    ...Object.entries(r.recovery.perDc).map(([dc, p]): [string, number | null] => [
      `${dc}'s outage`,
      p.outageMs,
    ]),
  ];
  const notes = figures.flatMap(([name, v]) => {
    const note = v === null ? null : uncertaintyNote(v, u);
    return note === null ? [] : [`- ${name}: ${note}`];
  });
  return [
    '## Clocks',
    '',
    `Every stamp from another host was moved onto the harness's clock by that host's offset (remote − harness, ms) as measured before the load; measured again after it, the two give the drift (µs per s). Method: ${c.method}.`,
    '',
    table(['Host', 'Before, ms', 'After, ms', 'Drift, ppm'], rows),
    '',
    `A span between two hosts' stamps (the recovery's phases, the outages, the anatomy's hops) is ± ${ms(u)} ms from the clocks at the fault.` +
      (notes.length === 0
        ? ' Every recovery figure is more than ten times that.'
        : ' Figures where that is more than a tenth:'),
    ...(notes.length === 0 ? [] : ['', ...notes]),
  ].join('\n');
}
