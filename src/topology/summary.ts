// A topology in brief, as data (for --json) and as one screen of text (`pole-bench topology
// validate`): data centers and nodes, the RTT matrix, jitter, cluster settings, rates, scenario.
import type { NodeId } from '../vocabulary/names.js';
import { roundMicros } from '../node/core/oracles/measured.js';
import { formatDuration } from '../util/duration.js';
import { formatTable, num } from './text-table.js';
import type { Topology } from './topology.js';
import type { ClusterSpec, FaultSpec } from './topology-schema.js';

export interface TopologySummary {
  readonly name: string;
  readonly file: string;
  readonly datacenters: readonly {
    readonly name: string;
    readonly nodes: readonly { readonly id: NodeId; readonly sid: number; readonly rate: number }[];
    readonly rate: number;
  }[];
  /** rttMs[a][b], ms. */
  readonly rttMs: Record<string, Record<string, number>>;
  /** oneWayMs[from][to], ms. */
  readonly oneWayMs: Record<string, Record<string, number>>;
  readonly jitter: string;
  readonly distribution: string;
  readonly cluster: ClusterSpec;
  readonly workload: {
    readonly rate: number;
    readonly size: number;
    readonly arrival: string;
    readonly keys?: number;
  };
  readonly scenario: {
    readonly durationMs: number;
    readonly warmupMs: number;
    readonly settleMs: number;
    readonly faults: readonly FaultSpec[];
  };
}

export function summarizeTopology(t: Topology): TopologySummary {
  const matrix = (f: (a: string, b: string) => number): Record<string, Record<string, number>> =>
    Object.fromEntries(
      t.datacenters.map((a) => [
        a.name,
        Object.fromEntries(t.datacenters.map((b) => [b.name, roundMicros(f(a.name, b.name))])),
      ]),
    );
  const j = t.shaping.jitter;
  return {
    name: t.name,
    file: t.file,
    datacenters: t.datacenters.map((dc) => ({
      name: dc.name,
      nodes: dc.nodes.map((n) => ({
        id: n.id,
        sid: n.sid,
        rate: roundMicros(t.workload.ratePerNode.get(n.id) ?? 0),
      })),
      rate: roundMicros(t.workload.ratePerDc.get(dc.name) ?? 0),
    })),
    rttMs: matrix((a, b) => t.rttMs(a, b)),
    oneWayMs: matrix((a, b) => t.oneWayDelayMs(a, b)),
    jitter: j.kind === 'fraction' ? `${roundMicros(j.fraction * 100)}%` : formatDuration(j.ms),
    distribution: t.shaping.distribution,
    cluster: t.cluster,
    workload: {
      rate: t.workload.rate,
      size: t.workload.size,
      arrival: t.workload.arrival,
      ...(t.workload.keys ? { keys: t.workload.keys } : {}),
    },
    scenario: t.scenario,
  };
}

/** One screen of text. */
export function formatTopologySummary(s: TopologySummary): string {
  const lines: string[] = [];
  const nodeCount = s.datacenters.reduce((n, dc) => n + dc.nodes.length, 0);
  lines.push(
    `${s.name} (${s.file}): valid, ${plural(s.datacenters.length, 'data center')}, ${plural(nodeCount, 'node')}`,
  );
  lines.push('');
  lines.push(
    formatTable(
      ['data center', 'nodes (sid)', 'writes/s', 'per node'],
      s.datacenters.map((dc) => [
        dc.name,
        dc.nodes.map((n) => `${n.id} (${n.sid})`).join(', '),
        num(dc.rate),
        dc.nodes.map((n) => num(n.rate)).join(', '),
      ]),
    ),
  );
  if (s.datacenters.length > 1) {
    const names = s.datacenters.map((dc) => dc.name);
    lines.push('');
    lines.push(matrixTable('RTT ms', names, s.rttMs));
    const asymmetric = names.some((a) => names.some((b) => s.oneWayMs[a]?.[b] !== s.oneWayMs[b]?.[a]));
    if (asymmetric) {
      lines.push('');
      lines.push(matrixTable('one-way ms (row → column)', names, s.oneWayMs));
    }
    lines.push(`jitter ${s.jitter}${s.jitter.endsWith('%') ? ' of each delay' : ''}, ${s.distribution}`);
  } else {
    lines.push('');
    lines.push('one data center: no added delay');
  }
  lines.push('');
  const c = s.cluster;
  const t = c.timers;
  lines.push(
    `cluster   oracle ${c.oracle}, initial leader ${c.initialLeader ?? '(elected)'}` +
      (c.preference ? `, preference ${c.preference.join(' > ')}` : '') +
      (c.resign ? ', resignation on' : ''),
  );
  lines.push(
    `timers    tick ${t.tickMs} ms, syncLimit ${t.syncLimit}, initLimit ${t.initLimit}, ` +
      `election timeout ${t.electionTimeoutMs} ms, heartbeat ${t.heartbeatMs} ms`,
  );
  const w = s.workload;
  lines.push(
    `workload  ${num(w.rate)} writes/s of ${w.size} B, ${w.arrival} arrivals` +
      (w.keys ? `, ${num(w.keys)} keys per data center written over and over` : ''),
  );
  const sc = s.scenario;
  // A fault written with `every` is shown once, with its period and how many times it happens.
  const faults: string[] = [];
  const repeats = new Map<string, { first: string; times: number; index: number }>();
  for (const f of sc.faults) {
    const what = `${f.action} ${f.target}${f.rttMs !== undefined ? ` rtt ${f.rttMs} ms` : ''}`;
    if (f.everyMs === undefined) {
      faults.push(`${what} at ${formatDuration(f.atMs)}`);
      continue;
    }
    const key = `${what}|${f.everyMs}|${f.atMs % f.everyMs}`;
    const seen = repeats.get(key);
    if (seen) seen.times++;
    else {
      repeats.set(key, { first: formatDuration(f.atMs), times: 1, index: faults.length });
      faults.push('');
    }
    const r = repeats.get(key)!;
    faults[r.index] = `${what} every ${formatDuration(f.everyMs)} from ${r.first} (${r.times}×)`;
  }
  lines.push(
    `scenario  ${formatDuration(sc.durationMs)}, warmup ${formatDuration(sc.warmupMs)}, ` +
      `settle ${formatDuration(sc.settleMs)}; ${faults.length > 0 ? faults.join(', ') : 'no faults'}`,
  );
  return lines.join('\n');
}

function matrixTable(
  title: string,
  names: readonly string[],
  m: Record<string, Record<string, number>>,
): string {
  return formatTable(
    [title, ...names],
    names.map((a) => [a, ...names.map((b) => num(m[a]?.[b] ?? NaN))]),
    { alignRight: names.map((_, i) => i + 1) },
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
