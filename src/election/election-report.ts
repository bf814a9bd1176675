// report.md of `pole-bench election`: failover against the group size next to the NewSQL paper's
// Fig. 2, the round time, every kill, and the safety check (leader overlaps). Pure.
import { NONE, count, ms, secUnit, table } from '../report/format.js';
import type { ElectionResult } from './election-run.js';

/**
 * The paper's Fig. 2 (Niazi et al., DAIS 2015), one LAN: "Up to 200 processes the service
 * consistently elects a new leader in around five seconds" (Tp 2 s, Max_mhb 2, Δ 50 ms); ZooKeeper's
 * leader recipe about 6 s with a 2 s tick and a 4 s session timeout. Read off the text, not the plot.
 */
export const PAPER_FAILOVER_MS = { db: 5_000, zookeeper: 6_000 } as const;

export function electionVerdict(r: ElectionResult): 'passed' | 'overlap' | 'failed' {
  if (r.errors.length > 0) return 'failed';
  return r.sizes.some((g) => g.leaderOverlaps > 0) ? 'overlap' : 'passed';
}

export function renderElectionReport(r: ElectionResult, settings: readonly string[]): string {
  const verdict = electionVerdict(r);
  const lines = [
    `# pole-bench election: ${r.backend === 'db' ? 'through a SQL database' : "through ZooKeeper's leader recipe"} on ${r.topology}`,
    '',
    `**Verdict: ${verdict}**` +
      (verdict === 'overlap'
        ? ': two participants believed they led at the same time (see Safety).'
        : verdict === 'failed'
          ? `: ${r.errors.join('; ')}`
          : ': a new leader after every kill, and never two at once.'),
    '',
    '## Set-up',
    '',
    `- Store: ${r.store}, in data center ${r.storeDatacenter}; participants placed round-robin over ${r.datacenters.join(', ')}, ` +
      `every connection from another data center through the delay relay.`,
    ...settings.map((s) => `- ${s}`),
    `- Started ${r.startedAt}, finished ${r.finishedAt}.`,
    '',
    '## Failover against the number of processes',
    '',
    'From the kill of the leader to the first participant whose isLeader() holds (its own event), per group:',
    '',
    table(
      [
        'Processes',
        'Kills',
        'Failover median (ms)',
        'min-max (ms)',
        'Paper, Fig. 2 (ms)',
        'Tp start → end (ms)',
        'Overlaps',
      ],
      r.sizes.map((g) => [
        count(g.processes),
        count(g.kills),
        g.failoverMs ? ms(g.failoverMs.median) : NONE,
        g.failoverMs ? `${ms(g.failoverMs.min)}-${ms(g.failoverMs.max)}` : NONE,
        `≈ ${count(PAPER_FAILOVER_MS[r.backend])}`,
        g.roundMs ? `${count(g.roundMs.start)} → ${count(g.roundMs.end)}` : NONE,
        count(g.leaderOverlaps),
      ]),
      [0, 1, 2, 5, 6],
    ),
    '',
    '## Kills',
    '',
    table(
      ['Processes', 'At', 'Killed (data center)', 'Next leader (data center)', 'Failover (ms)'],
      r.sizes.flatMap((g) =>
        g.killed.map((k) => [
          count(g.processes),
          secUnit(k.atS),
          `${k.participant} (${k.datacenter})`,
          k.next ? `${k.next} (${k.nextDatacenter ?? '?'})` : '**none**',
          k.failoverMs === null ? NONE : ms(k.failoverMs),
        ]),
      ),
      [0, 1, 4],
    ),
    '',
    '## Safety',
    '',
  ];
  const overlaps = r.sizes.flatMap((g) => g.overlaps.map((o) => ({ ...o, n: g.processes })));
  if (overlaps.length === 0)
    lines.push(
      'At no instant did two participants believe they led: checked over every participant’s own `lead`, `lead-lost` and `crashed` events (one machine, one clock; a lease counts until it runs out).',
    );
  else
    lines.push(
      table(
        ['Processes', 'Participants', 'From (ms)', 'For (ms)'],
        overlaps.map((o) => [count(o.n), `${o.a} and ${o.b}`, ms(o.fromMs), ms(o.ms)]),
        [0, 2, 3],
      ),
    );
  const errs = r.sizes.reduce((n, g) => n + g.participantErrors, 0);
  lines.push(
    '',
    `Participants reported ${count(errs)} failed rounds or lost sessions (events.jsonl has each).`,
  );
  return `${lines.join('\n')}\n`;
}
