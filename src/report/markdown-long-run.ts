// The report's sections that matter most in a long run with many faults (a soak): every election
// with its cause, and what every process held over time. Pure: rendered from result.json alone.
import { NONE, count, ms, secUnit, table } from './format.js';
import type { RunResult } from './result.js';
import { MIN_JUDGED_MS, STARTUP_MS, type ProcessResources } from '../measure/resource-sampler.js';

/** Columns of the over-time table: the longest-lived processes. */
const OVER_TIME_PROCESSES = 8;
/** Rows of the over-time table. */
const OVER_TIME_ROWS = 10;

export function elections(r: RunResult): string {
  const e = r.elections;
  const lines = ['## Elections', ''];
  if (e.deposed === 0 && e.unprovoked.length === 0) {
    lines.push('No fault took the serving leader out, and no leader changed by itself.');
    return lines.join('\n');
  }
  const spread = (s: RunResult['elections']['servingMs']): string =>
    s === null ? NONE : `median ${ms(s.median)} ms (${ms(s.min)}-${ms(s.max)})`;
  lines.push(
    `${count(e.deposed)} ${e.deposed === 1 ? 'fault' : 'faults'} took the serving leader out; ` +
      (e.incomplete === 0
        ? `after every one a new leader served within 30 s`
        : `**after ${count(e.incomplete)} of them no new leader served within 30 s (or before the next such fault)**`) +
      `. From the fault to the new leader elected: ${spread(e.electedMs)}; serving: ${spread(e.servingMs)}.`,
  );
  if (e.list.length > 0) {
    const rows = e.list.map((x) => [
      secUnit(x.atS),
      `${x.cause.action} ${x.cause.node}`,
      x.leader,
      x.elected ?? '**none**',
      x.electedMs === null ? NONE : ms(x.electedMs),
      x.servingMs === null ? NONE : ms(x.servingMs),
      count(x.failedRounds),
    ]);
    lines.push(
      '',
      table(
        ['At', 'Fault', 'Leader out', 'Next leader', 'Elected (ms)', 'Serving (ms)', 'Failed rounds'],
        rows,
        [0, 4, 5, 6],
      ),
    );
  }
  if (e.unprovoked.length > 0)
    lines.push(
      '',
      `Leaders that took over with no fault taking the last one out (a resignation or a lost quorum): ` +
        e.unprovoked.map((u) => `${u.leader} at ${secUnit(u.atS)}`).join(', ') +
        '.',
    );
  return lines.join('\n');
}

export function resources(r: RunResult): string {
  const s = r.resources;
  const lines = ['## Resources', ''];
  if (!s.sampled) {
    lines.push('Memory and open files were not sampled (no /proc, or the load did not run).');
    return lines.join('\n');
  }
  const judged = s.processes.filter((p) => p.rssGrowthMiB !== null);
  const shown = judged.length > 0 ? judged : s.processes;
  lines.push(
    `Resident memory (MiB), open files and threads of every process, sampled every ${secUnit(s.everyS)} during the load. ` +
      `Growth is the median of a process's last quarter of samples minus that of its first quarter after its first ` +
      `${STARTUP_MS / 1000} s, judged for processes sampled at least ${MIN_JUDGED_MS / 60_000} minutes ` +
      `(${count(s.judged)} here; a restarted node is a new process).` +
      (judged.length === 0 ? ' None was, so the table shows every process without growth.' : ''),
    '',
    table(
      [
        'Process',
        'pid',
        'Sampled',
        'RSS first → last (peak)',
        'RSS growth',
        'Files first → last (peak)',
        'Files growth',
        'Threads (peak)',
      ],
      shown.map((p) => [
        `${p.group === 'harness' ? '' : `${p.group} `}${p.label}`,
        String(p.pid),
        `${secUnit(p.fromS)}-${secUnit(p.toS)}`,
        `${p.first.rssMiB.toFixed(1)} → ${p.last.rssMiB.toFixed(1)} (${p.peak.rssMiB.toFixed(1)})`,
        p.rssGrowthMiB === null ? NONE : signed(p.rssGrowthMiB, 1),
        `${p.first.fds} → ${p.last.fds} (${p.peak.fds})`,
        p.fdGrowth === null ? NONE : signed(p.fdGrowth, 0),
        `${p.last.threads} (${p.peak.threads})`,
      ]),
      [1, 4, 6],
    ),
  );
  const brief = s.processes.filter((p) => p.rssGrowthMiB === null);
  if (judged.length > 0 && brief.length > 0)
    lines.push(
      '',
      `${count(brief.length)} shorter-lived ${brief.length === 1 ? 'process' : 'processes'} (restarted nodes, for instance) ` +
        `peaked at ${Math.max(...brief.map((p) => p.peak.rssMiB)).toFixed(1)} MiB and ${Math.max(...brief.map((p) => p.peak.fds))} open files.`,
    );
  if (judged.length > 0)
    lines.push(
      '',
      `Largest growth: ${signed(s.maxRssGrowthMiB ?? NaN, 1)} MiB of memory, ${signed(s.maxFdGrowth ?? NaN, 0)} open files, ` +
        `${signed(s.maxThreadGrowth ?? NaN, 0)} threads (thresholds: \`resources.maxRssGrowthMiB\`, \`resources.maxFdGrowth\`).`,
      '',
      overTime(judged),
    );
  return lines.join('\n');
}

/** RSS MiB / open files of the longest-lived processes at evenly spaced times. */
function overTime(processes: readonly ProcessResources[]): string {
  const cols = [...processes]
    .sort((a, b) => b.toS - b.fromS - (a.toS - a.fromS))
    .slice(0, OVER_TIME_PROCESSES);
  const end = Math.max(...cols.map((p) => p.toS));
  const times = Array.from({ length: OVER_TIME_ROWS + 1 }, (_, i) => (end * i) / OVER_TIME_ROWS);
  const halfStep = end / OVER_TIME_ROWS / 2;
  const at = (p: ProcessResources, t: number): string => {
    if (t < p.fromS - halfStep || t > p.toS + halfStep) return NONE;
    let best = p.series[0]!;
    for (const x of p.series) if (Math.abs(x.tS - t) < Math.abs(best.tS - t)) best = x;
    return `${best.rssMiB.toFixed(0)} / ${best.fds}`;
  };
  return [
    'Over time (RSS MiB / open files):',
    '',
    table(
      ['t', ...cols.map((p) => `${p.group === 'harness' ? '' : `${p.group} `}${p.label}`)],
      times.map((t) => [secUnit(t), ...cols.map((p) => at(p, t))]),
      cols.map((_, i) => i + 1),
    ),
  ].join('\n');
}

function signed(v: number, digits: number): string {
  if (!Number.isFinite(v)) return NONE;
  const fixed = v.toFixed(digits);
  return Number(fixed) > 0 ? `+${fixed}` : Number(fixed) === 0 ? (0).toFixed(digits) : fixed;
}
