// A scenario's faults as written, checked field by field and turned into the schedule a run carries
// out: `every` expanded into copies, `for` into the fault that undoes each, the nemesis's draws
// added. Each problem is reported at the path of the field it is about.
import type { NodeId } from '../vocabulary/names.js';
import { FAULT_ACTIONS, type FaultAction } from '../vocabulary/names.js';
import { formatDuration } from '../util/duration.js';
import { interleaved } from './fault-shapes.js';
import { drawNemesis } from './nemesis-draw.js';
import {
  KILLED,
  LEADER,
  MINORITY,
  UNDONE_BY,
  type FaultSpec,
  type NemesisSpec,
  type RawTopology,
} from './topology-schema.js';
import type { TopologyIssue } from './topology-issue.js';

type RawFault = RawTopology['scenario']['faults'][number];

/** Every fault of the scenario, in time order, with what `every`, `for` and the nemesis add. */
export function checkFaults(
  raw: RawTopology,
  nodeIds: ReadonlySet<NodeId>,
  issues: TopologyIssue[],
): { faults: FaultSpec[]; nemesis?: NemesisSpec } {
  const s = raw.scenario;
  const written: FaultSpec[] = [];
  let refs = 0;
  s.faults.forEach((f, i) => {
    const spec = checkFault(raw, f, i, nodeIds, issues);
    if (spec === undefined) return;
    const at = (field: string): PropertyKey[] => ['scenario', 'faults', i, field];
    const undo = f.for !== undefined ? UNDONE_BY[spec.action] : undefined;
    if (f.for !== undefined && undo === undefined)
      issues.push({
        path: at('for'),
        message: `for undoes ${Object.keys(UNDONE_BY).join(', ')}; a ${spec.action} is not undone`,
      });
    if (f.for !== undefined && f.for <= 0) issues.push({ path: at('for'), message: 'must be longer than 0' });
    if (spec.target === MINORITY && f.for === undefined)
      issues.push({
        path: at(spec.action),
        message: `"${MINORITY}" is drawn when it strikes, so only its own for can bring it back: add for, e.g. for: 5s`,
      });
    if (f.every !== undefined && f.every <= 0) {
      issues.push({ path: at('every'), message: 'must be longer than 0' });
      return;
    }
    const starts = f.every === undefined ? [f.at] : [];
    if (f.every !== undefined) for (let t = f.at; t < s.duration; t += f.every) starts.push(t);
    for (const t of starts) {
      const copy: FaultSpec = { ...spec, atMs: t, ...(f.every !== undefined ? { everyMs: f.every } : {}) };
      if (undo === undefined || f.for === undefined || f.for <= 0) {
        written.push(copy);
        continue;
      }
      const ref = ++refs;
      written.push({ ...copy, ref });
      if (t + f.for < s.duration)
        written.push({ atMs: t + f.for, action: undo, target: copy.target, undoes: ref });
    }
  });
  const nemesis = s.nemesis ? checkNemesis(raw, issues) : undefined;
  const ground = {
    members: raw.datacenters.flatMap((d) => d.nodes.map((m) => (typeof m === 'string' ? m : m.name))),
    datacenters: raw.datacenters.map((d) => d.name),
    warmupMs: s.warmup,
    durationMs: s.duration,
    settleMs: s.settle,
  };
  const drawn = nemesis ? drawNemesis(ground, nemesis, refs) : [];
  // Stable: a fault and what undoes it at the same instant keep their written order.
  const faults = [...written, ...drawn].sort((a, b) => a.atMs - b.atMs);
  return { faults, ...(nemesis ? { nemesis } : {}) };
}

function checkNemesis(raw: RawTopology, issues: TopologyIssue[]): NemesisSpec | undefined {
  const n = raw.scenario.nemesis!;
  const forMs = n.for ?? n.every / 2;
  const at = (field: string): PropertyKey[] => ['scenario', 'nemesis', field];
  if (n.every <= 0) issues.push({ path: at('every'), message: 'must be longer than 0' });
  else if (forMs <= 0 || forMs >= n.every)
    issues.push({
      path: at('for'),
      message: `each fault is undone before the next is drawn: for must be shorter than every (${formatDuration(n.every)})`,
    });
  else if (raw.scenario.warmup + n.every + Math.max(forMs, raw.scenario.settle) >= raw.scenario.duration)
    issues.push({
      path: at('every'),
      message: `no fault fits: the first is drawn at the warmup plus every, and must be undone, and leave the settle time, before the end (${formatDuration(raw.scenario.duration)})`,
    });
  const members = raw.datacenters.reduce((k, d) => k + d.nodes.length, 0);
  if (n.mix.includes('ring') && members < 4)
    issues.push({ path: at('mix'), message: 'a ring of majorities needs 4 members or more' });
  if (n.mix.includes('partition') && raw.datacenters.length < 2)
    issues.push({ path: at('mix'), message: 'a partition needs 2 data centers or more' });
  return { mix: n.mix, everyMs: n.every, forMs, seed: n.seed };
}

/** One fault as written, checked; undefined where it says no one thing to do. */
function checkFault(
  raw: RawTopology,
  f: RawFault,
  i: number,
  nodeIds: ReadonlySet<NodeId>,
  issues: TopologyIssue[],
): FaultSpec | undefined {
  const s = raw.scenario;
  const fmt = formatDuration;
  const at = (field: string | number): PropertyKey[] => ['scenario', 'faults', i, field];
  const actions = FAULT_ACTIONS.filter((a) => f[a] !== undefined);
  const action = actions[0];
  if (action === undefined || actions.length > 1) {
    issues.push({
      path: ['scenario', 'faults', i],
      message:
        action === undefined
          ? `says what to do at ${fmt(f.at)}: add one of ${FAULT_ACTIONS.join(', ')}`
          : `one action per fault, got ${actions.join(' and ')}: write one fault for each`,
    });
    return undefined;
  }
  if ((f.rtt !== undefined) !== (action === 'link'))
    issues.push({
      path: at(f.rtt !== undefined ? 'rtt' : 'link'),
      message:
        f.rtt !== undefined
          ? `rtt goes with link (the link whose round-trip time changes), not with ${action}`
          : 'a link change needs its new rtt, e.g. {at: 30s, link: [a, b], rtt: 120ms}',
    });
  if (f.at >= s.duration)
    issues.push({
      path: at('at'),
      message: `${fmt(f.at)} is not inside the run (duration ${fmt(s.duration)})`,
    });
  else if (f.at <= s.warmup)
    issues.push({
      path: at('at'),
      message: `${fmt(f.at)} falls inside the warmup (${fmt(s.warmup)}): faults come after it`,
    });
  if (action === 'partition' || action === 'link') return dcFault(raw, f, action, at, issues);
  if (action === 'heal' || action === 'roll') return { atMs: f.at, action, target: 'all' };
  if (action === 'ring') return ringFault(raw, f, at, nodeIds, issues);
  const target = (f[action] as string | undefined) ?? '';
  const problem = targetProblem(action, target, nodeIds, raw);
  if (problem !== undefined) issues.push({ path: at(action), message: problem });
  return { atMs: f.at, action, target };
}

/** Why `target` cannot be what `action` acts on, if it cannot. */
function targetProblem(
  action: FaultAction,
  target: string,
  nodeIds: ReadonlySet<NodeId>,
  raw: RawTopology,
): string | undefined {
  const revives = action === 'restart' || action === 'resume';
  if (target === LEADER && revives)
    return `${action} needs a node name or "${KILLED}" ("${LEADER}" is whoever leads now, which is running)`;
  if (target === KILLED && !revives)
    return `"${KILLED}" (the node the latest kill or pause took down) is for restart and resume, not ${action}`;
  if (target === MINORITY && action !== 'kill' && action !== 'pause')
    return `"${MINORITY}" is for kill and pause, not ${action}`;
  if (target !== LEADER && target !== KILLED && target !== MINORITY && !nodeIds.has(target))
    return `${JSON.stringify(target)} is neither "${LEADER}" nor a node (nodes: ${[...nodeIds].join(', ')})`;
  if (action === 'bridge' && nodeIds.size < 3)
    return `a bridge needs 3 members or more (${raw.datacenters.length} data centers hold ${nodeIds.size})`;
  return undefined;
}

function dcFault(
  raw: RawTopology,
  f: RawFault,
  action: 'partition' | 'link',
  at: (field: string) => PropertyKey[],
  issues: TopologyIssue[],
): FaultSpec {
  const dcNames = new Set(raw.datacenters.map((d) => d.name));
  const dcs = (action === 'partition' ? f.partition : f.link) ?? [];
  // In a partition, "leader" is the data center of whoever leads when it happens.
  const unknown = dcs.filter((d) => !dcNames.has(d) && !(action === 'partition' && d === LEADER));
  if (unknown.length > 0)
    issues.push({
      path: at(action),
      message: `${unknown.map((d) => JSON.stringify(d)).join(', ')} is not a data center (data centers: ${[...dcNames].join(', ')})`,
    });
  else if (action === 'partition' && new Set(dcs).size >= dcNames.size)
    issues.push({
      path: at(action),
      message: 'cuts every data center off: leave at least one on the other side',
    });
  else if (action === 'link' && dcs[0] === dcs[1])
    issues.push({ path: at(action), message: 'a link joins two different data centers' });
  return {
    atMs: f.at,
    action,
    target: action === 'partition' ? dcs.join(',') : dcs.join('-'),
    datacenters: dcs,
    ...(action === 'link' && f.rtt !== undefined ? { rttMs: f.rtt } : {}),
  };
}

function ringFault(
  raw: RawTopology,
  f: RawFault,
  at: (field: string) => PropertyKey[],
  nodeIds: ReadonlySet<NodeId>,
  issues: TopologyIssue[],
): FaultSpec {
  const byDc = raw.datacenters.map((d) => d.nodes.map((n) => (typeof n === 'string' ? n : n.name)));
  const order = f.ring === 'auto' || f.ring === undefined ? interleaved(byDc) : f.ring;
  if (nodeIds.size < 4)
    issues.push({
      path: at('ring'),
      message: `a ring of majorities needs 4 members or more (there are ${nodeIds.size})`,
    });
  else if (f.ring !== 'auto') {
    const unknown = order.filter((n) => !nodeIds.has(n));
    const missing = [...nodeIds].filter((n) => !order.includes(n));
    if (unknown.length > 0 || missing.length > 0 || new Set(order).size !== order.length)
      issues.push({
        path: at('ring'),
        message: `names every member once, in ring order (${
          [
            unknown.length > 0 ? `not members: ${unknown.join(', ')}` : '',
            missing.length > 0 ? `missing: ${missing.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; ') || 'a member is named twice'
        })`,
      });
  }
  return { atMs: f.at, action: 'ring', target: order.join(','), nodes: order };
}
