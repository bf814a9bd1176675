// `pole-bench model` as text: the initial leader's scores and predicted latency, every candidate's
// after it is lost, and each oracle's choice.
import type { CandidateRow, ModelSummary } from './model.js';
import { formatTable, num } from './text-table.js';

export function formatModelSummary(m: ModelSummary): string {
  const dcs = Object.keys(m.ratePerDc);
  const lines: string[] = [];
  lines.push(
    `${m.topology}: oracle ${m.oracle}; writes/s ${dcs.map((dc) => `${dc} ${num(m.ratePerDc[dc])}`).join(', ')}`,
  );
  lines.push('predicted mean write latency per data center = RTT(server, leader) + θc(leader), ms');
  lines.push('');
  lines.push(
    `before: ${m.initialLeader} leads (${m.initialLeaderConfigured ? 'configured' : 'elected by the oracle'})`,
  );
  lines.push(indent(rowsTable('leader', dcs, [m.before])));
  lines.push('');
  lines.push(`after ${m.excluded.join(', ')} is lost: every candidate`);
  lines.push(indent(rowsTable('candidate', dcs, m.after)));
  lines.push('');
  lines.push(`elected after ${m.excluded.join(', ')} is lost (ties go to the higher sid):`);
  lines.push(
    indent(
      formatTable(
        ['oracle', 'leader', ...dcs],
        m.elections.map((e) => [
          e.oracle === m.oracle ? `${e.oracle} (this cluster's)` : e.oracle,
          e.leader,
          ...dcs.map((dc) => num(e.predictedMs[dc])),
        ]),
        { alignRight: dcs.map((_, i) => i + 2) },
      ),
    ),
  );
  return lines.join('\n');
}

function rowsTable(first: string, dcs: readonly string[], rows: readonly CandidateRow[]): string {
  return formatTable(
    [first, 'dc', 'θc', 'θl', 'θw', 'θr/s', ...dcs],
    rows.map((r) => [
      r.id,
      r.datacenter,
      num(r.consensusMs),
      num(r.latencyMs),
      num(r.worstCaseMs),
      num(r.requestRate),
      ...dcs.map((dc) => num(r.predictedMs[dc])),
    ]),
    { alignRight: [2, 3, 4, 5, ...dcs.map((_, i) => i + 6)] },
  );
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
