// The cross-field rules of a topology file, each problem reported at the field path it is about
// (the loader turns the path into a line and column): unique names and sids, a delay for every
// ordered pair of data centers and only one, known names wherever a node or data center is named,
// a valid oracle spec, faults inside the run and after the warmup.
import { z } from 'zod';
import type { NodeId } from '../vocabulary/names.js';
import { createOracle } from '../node/core/oracles/registry.js';
import { formatDuration } from '../util/duration.js';
import { InputError } from '../util/input-error.js';
import { parseThreshold } from '../vocabulary/thresholds.js';
import {
  KILLED,
  LEADER,
  MINORITY,
  type ClusterSpec,
  type DatacenterSpec,
  type NodeSpec,
  type OneWayDelay,
  type RawTopology,
  type ScenarioSpec,
  type TimersSpec,
  type TopologyFile,
  type WorkloadSpec,
  rawTopologySchema,
} from './topology-schema.js';

import type { TopologyIssue } from './topology-issue.js';
import { checkFaults } from './fault-checks.js';

export type { TopologyIssue } from './topology-issue.js';

/** The schema of a topology file, cross-field checks included. */
export const topologySchema: z.ZodType<TopologyFile> = rawTopologySchema.transform((raw, ctx) => {
  const issues: TopologyIssue[] = [];
  const file = checkTopology(raw, issues);
  for (const issue of issues) ctx.issues.push({ code: 'custom', input: raw, ...issue });
  return issues.length > 0 ? z.NEVER : file;
});

export function checkTopology(raw: RawTopology, issues: TopologyIssue[]): TopologyFile {
  const datacenters = checkDatacenters(raw, issues);
  const dcNames = datacenters.map((d) => d.name);
  const nodeIds = new Set(datacenters.flatMap((d) => d.nodes.map((n) => n.id)));
  const delays = checkLinks(raw, dcNames, issues);
  const cluster = checkCluster(raw, nodeIds, issues);
  const workload = checkWorkload(raw, dcNames, issues);
  const scenario = checkScenario(raw, nodeIds, issues);
  const shaping = { jitter: raw.shaping.jitter, distribution: raw.shaping.distribution };
  const out: TopologyFile = { target: raw.target, datacenters, delays, shaping, cluster, workload, scenario };
  return raw.name === undefined ? out : { name: raw.name, ...out };
}

/** The sid a name implies by its trailing number: p3 → 3. */
export function sidFromName(id: string): number | undefined {
  const m = /(\d+)$/.exec(id);
  const n = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function checkDatacenters(raw: RawTopology, issues: TopologyIssue[]): DatacenterSpec[] {
  const dcOwner = new Map<string, number>();
  const idOwner = new Map<string, string>();
  const sidOwner = new Map<number, string>();
  let count = 0;
  const out = raw.datacenters.map((dc, i): DatacenterSpec => {
    const other = dcOwner.get(dc.name);
    if (dc.name === LEADER) {
      issues.push({
        path: ['datacenters', i, 'name'],
        message: `"${LEADER}" is reserved (a partition uses it for the leader's data center)`,
      });
    } else if (other !== undefined) {
      issues.push({
        path: ['datacenters', i, 'name'],
        message: `duplicate data center ${dc.name} (also datacenters[${other}])`,
      });
    } else dcOwner.set(dc.name, i);
    const nodes = dc.nodes.map((entry, j): NodeSpec => {
      count++;
      const written = typeof entry === 'string' ? { name: entry, sid: undefined } : entry;
      const id = written.name;
      const at = `datacenters[${i}].nodes[${j}]`;
      const namePath =
        typeof entry === 'string' ? ['datacenters', i, 'nodes', j] : ['datacenters', i, 'nodes', j, 'name'];
      const reserved = {
        [LEADER]: 'faults use it for the current leader',
        [KILLED]: 'faults use it for the node the latest kill took down',
        [MINORITY]: 'faults use it for a minority drawn when they strike',
      } as Record<string, string>;
      if (Object.hasOwn(reserved, id))
        issues.push({ path: namePath, message: `"${id}" is reserved (${reserved[id]})` });
      const owner = idOwner.get(id);
      if (owner !== undefined)
        issues.push({ path: namePath, message: `duplicate node ${id} (also ${owner})` });
      else idOwner.set(id, at);
      const sid = written.sid ?? sidFromName(id);
      if (sid === undefined) {
        issues.push({
          path: namePath,
          message: `the name ${JSON.stringify(id)} has no positive trailing number to take the sid from: write {name: ${id}, sid: N}`,
        });
        return { id, sid: 0 };
      }
      const sidPath = written.sid !== undefined ? [...namePath.slice(0, -1), 'sid'] : namePath;
      const sidOther = sidOwner.get(sid);
      if (sidOther !== undefined) {
        issues.push({
          path: sidPath,
          message: `duplicate sid ${sid}${written.sid === undefined ? ' (implied by the name)' : ''}, also used by ${sidOther}`,
        });
      } else sidOwner.set(sid, `${at} (${id})`);
      return { id, sid };
    });
    return { name: dc.name, nodes };
  });
  if (count < 3) {
    issues.push({
      path: ['datacenters'],
      message: `a cluster of ${count} node${count === 1 ? '' : 's'} cannot survive losing its leader: give at least 3 nodes`,
    });
  }
  return out;
}

function checkLinks(raw: RawTopology, dcNames: readonly string[], issues: TopologyIssue[]): OneWayDelay[] {
  const known = new Set(dcNames);
  const given = new Map<string, { delayMs: number; link: number }>();
  const key = (from: string, to: string): string => JSON.stringify([from, to]);
  const unknownDc = (n: string): string =>
    `unknown data center ${JSON.stringify(n)} (data centers: ${dcNames.join(', ')})`;

  raw.links.forEach((l, i) => {
    const symmetric = l.between !== undefined || l.rtt !== undefined;
    const oneWay = l.from !== undefined || l.to !== undefined || l.delay !== undefined;
    if (symmetric === oneWay) {
      issues.push({
        path: ['links', i],
        message: symmetric
          ? 'mixes the two forms of a link: write {between: [a, b], rtt} or {from, to, delay}'
          : 'expected {between: [a, b], rtt} or {from, to, delay}',
      });
      return;
    }
    const missing = symmetric
      ? (['between', 'rtt'] as const).filter((f) => l[f] === undefined)
      : (['from', 'to', 'delay'] as const).filter((f) => l[f] === undefined);
    if (missing.length > 0) {
      issues.push({
        path: ['links', i],
        message: `${symmetric ? 'a symmetric' : 'a one-way'} link needs ${missing.join(' and ')}`,
      });
      return;
    }
    // Both directions of a symmetric link, or the one direction of a one-way link, with where each
    // end is written (for pointing at an unknown data center).
    const ends: [[string, PropertyKey[]], [string, PropertyKey[]]] = symmetric
      ? [
          [l.between?.[0] ?? '', ['links', i, 'between', 0]],
          [l.between?.[1] ?? '', ['links', i, 'between', 1]],
        ]
      : [
          [l.from ?? '', ['links', i, 'from']],
          [l.to ?? '', ['links', i, 'to']],
        ];
    let ok = true;
    for (const [dc, path] of ends) {
      if (!known.has(dc)) {
        issues.push({ path, message: unknownDc(dc) });
        ok = false;
      }
    }
    if (!ok) return;
    const [a, b] = [ends[0][0], ends[1][0]];
    if (a === b) {
      issues.push({
        path: ['links', i],
        message: `links ${a} to itself: inside one data center there is no added delay`,
      });
      return;
    }
    const directions: [string, string, number][] = symmetric
      ? [
          [a, b, (l.rtt ?? 0) / 2],
          [b, a, (l.rtt ?? 0) / 2],
        ]
      : [[a, b, l.delay ?? 0]];
    for (const [from, to] of directions) {
      const before = given.get(key(from, to));
      if (before !== undefined) {
        issues.push({
          path: ['links', i],
          message: `a second delay for ${from} → ${to} (links[${before.link}] gives it already)`,
        });
        return;
      }
    }
    for (const [from, to, delayMs] of directions) given.set(key(from, to), { delayMs, link: i });
  });

  const delays: OneWayDelay[] = [];
  const reported = new Set<string>();
  // Duplicate data center names are reported already; check each name once.
  const unique = [...new Set(dcNames)];
  for (const from of unique) {
    for (const to of unique) {
      if (from === to) continue;
      const d = given.get(key(from, to));
      if (d !== undefined) {
        delays.push({ from, to, delayMs: d.delayMs });
        continue;
      }
      if (reported.has(key(to, from))) continue;
      reported.add(key(from, to));
      const back = given.get(key(to, from));
      issues.push({
        path: ['links'],
        message:
          back === undefined
            ? `no delay between ${from} and ${to}: add {between: [${from}, ${to}], rtt: …}`
            : `no delay from ${from} to ${to} (links[${back.link}] gives only ${to} → ${from}): add {from: ${from}, to: ${to}, delay: …}`,
      });
    }
  }
  return delays;
}

function checkCluster(raw: RawTopology, nodeIds: ReadonlySet<NodeId>, issues: TopologyIssue[]): ClusterSpec {
  const c = raw.cluster;
  const notANode = (id: string): string =>
    `${JSON.stringify(id)} is not a node (nodes: ${[...nodeIds].join(', ')})`;
  if (c.initialLeader !== undefined && !nodeIds.has(c.initialLeader))
    issues.push({ path: ['cluster', 'initialLeader'], message: notANode(c.initialLeader) });
  let preferenceOk = true;
  c.preference?.forEach((id, i) => {
    if (!nodeIds.has(id)) {
      issues.push({ path: ['cluster', 'preference', i], message: notANode(id) });
      preferenceOk = false;
    } else if (c.preference?.indexOf(id) !== i) {
      issues.push({ path: ['cluster', 'preference', i], message: `${id} is listed twice` });
      preferenceOk = false;
    }
  });
  if (preferenceOk) {
    try {
      createOracle(c.oracle, c.preference ? { preference: c.preference } : {});
    } catch (err) {
      issues.push({ path: ['cluster', 'oracle'], message: (err as Error).message });
    }
  }
  const t = c.timers;
  const timers: TimersSpec = {
    tickMs: t.tickMs,
    syncLimit: t.syncLimit,
    initLimit: t.initLimit,
    electionTimeoutMs: t.electionTimeoutMs,
    heartbeatMs: t.heartbeatMs,
    ...(t.retryBaseMs !== undefined ? { retryBaseMs: t.retryBaseMs } : {}),
  };
  return {
    oracle: c.oracle,
    timers,
    ...(c.initialLeader !== undefined ? { initialLeader: c.initialLeader } : {}),
    ...(c.preference !== undefined ? { preference: c.preference } : {}),
    ...(c.measure !== undefined ? { measure: dropUndefined(c.measure) } : {}),
    ...(c.resign !== undefined ? { resign: dropUndefined(c.resign) } : {}),
    ...(c.syncDiffLimit !== undefined ? { syncDiffLimit: c.syncDiffLimit } : {}),
    ...(c.catchUpFrom !== undefined ? { catchUpFrom: c.catchUpFrom } : {}),
    electionWaitFor: c.election.waitFor,
  };
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function checkWorkload(raw: RawTopology, dcNames: readonly string[], issues: TopologyIssue[]): WorkloadSpec {
  const w = raw.workload;
  const share: Record<string, number> = {};
  for (const dc of dcNames) share[dc] = w.share === undefined ? 1 : 0;
  if (w.share !== undefined) {
    for (const [dc, weight] of Object.entries(w.share)) {
      if (!dcNames.includes(dc)) {
        issues.push({
          path: ['workload', 'share', dc],
          message: `unknown data center ${JSON.stringify(dc)} (data centers: ${dcNames.join(', ')})`,
        });
      } else share[dc] = weight;
    }
    if (Object.values(w.share).every((v) => v === 0))
      issues.push({
        path: ['workload', 'share'],
        message: 'every weight is 0: no data center would send writes',
      });
  }
  if (w.reads > 0 && w.size < 64)
    issues.push({
      path: ['workload', 'size'],
      message: `${w.size} bytes cannot carry a write's tag, which reads return: 64 or more with reads`,
    });
  return {
    rate: w.rate,
    size: w.size,
    share,
    arrival: w.arrival,
    reads: w.reads,
    readMode: w.readMode,
    ...(w.keys ? { keys: w.keys } : {}),
  };
}

function checkScenario(
  raw: RawTopology,
  nodeIds: ReadonlySet<NodeId>,
  issues: TopologyIssue[],
): ScenarioSpec {
  const s = raw.scenario;
  const fmt = formatDuration;
  if (s.duration <= 0) issues.push({ path: ['scenario', 'duration'], message: 'must be longer than 0' });
  else if (s.warmup >= s.duration) {
    issues.push({
      path: ['scenario', 'warmup'],
      message: `the warmup (${fmt(s.warmup)}) must end before the run does (${fmt(s.duration)})`,
    });
  }
  const { faults, nemesis } = checkFaults(raw, nodeIds, issues);
  const thresholds = s.thresholds.map((expr, i) => {
    try {
      return parseThreshold(expr, 'scenario.thresholds').expr;
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      issues.push({ path: ['scenario', 'thresholds', i], message: err.problem });
      return expr;
    }
  });
  // The "after" window runs from (election + settle) to the end: after the last leader kill it
  // must have room, even for an election that took no time at all.
  const lastKill = Math.max(-1, ...faults.filter((f) => f.action === 'kill').map((f) => f.atMs));
  if (lastKill >= 0 && lastKill < s.duration && lastKill + s.settle >= s.duration) {
    issues.push({
      path: ['scenario', 'settle'],
      message: `the kill at ${fmt(lastKill)} plus the settle time (${fmt(s.settle)}) leaves no "after" window before the end (${fmt(s.duration)})`,
    });
  }
  return {
    durationMs: s.duration,
    warmupMs: s.warmup,
    settleMs: s.settle,
    faults,
    thresholds,
    ...(nemesis ? { nemesis } : {}),
    ...(s.preload !== undefined ? { preloadBytes: s.preload } : {}),
  };
}
