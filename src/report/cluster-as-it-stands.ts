// The cluster as the faults left it, at any second of a run: which members are down (killed and not
// restarted, paused and not resumed, isolated or cut off one way and not healed), which data
// centers a partition cut off from which, which members a bridge or a ring parted, and which links
// a fault gave a new round trip. The model of a window is taken over
// this, not over the topology as configured: after a follower and then the leader were killed, the
// new leader's quorum must reach the farthest of the three survivors, and the model must say so.
// Pure: the faults as carried out and the topology in, states out.
import type { NodeId } from '../vocabulary/names.js';
import type { Topology } from '../topology/topology.js';
import type { FaultMark } from '../vocabulary/names.js';
import { bridgeHalves } from '../topology/fault-shapes.js';
import { ringCuts } from '../util/majority.js';

export interface ClusterState {
  /** Members that cannot take part: killed, paused or isolated, each with why. */
  readonly down: ReadonlyMap<NodeId, string>;
  /** Each partition still in force: the data centers it cut off from the rest. */
  readonly cuts: readonly (readonly string[])[];
  /** Pairs of members a bridge or a ring parted, "a|b" both ways round. */
  readonly parted: ReadonlySet<string>;
  /** Those pairs in words, a fault each. */
  readonly partedText: readonly string[];
  /** Round trips a link fault set, by the pair "a|b" (names in the topology's order). */
  readonly rtts: ReadonlyMap<string, number>;
}

const EDGE_S = 0.005;

/** What a window of the load was under: from fromS to toS (s from the load start), in one state. */
export interface StateSpan {
  readonly fromS: number;
  readonly toS: number;
  readonly state: ClusterState;
}

/**
 * The states of the span [fromS, toS), split at every fault carried out inside it. A fault at the
 * span's start is in force for all of it: a window begins at the fault that opened it.
 */
export function statesOver(
  t: Topology,
  faults: readonly FaultMark[],
  fromS: number,
  toS: number,
): StateSpan[] {
  // A window's bounds are taken from the harness's stamps of the faults that open and close it,
  // which its marks round apart by microseconds: a fault within EDGE_S of a bound is at the bound.
  const inside = faults.filter((f) => f.atS > fromS + EDGE_S && f.atS < toS - EDGE_S).map((f) => f.atS);
  const edges = [fromS, ...new Set(inside), toS];
  const spans: StateSpan[] = [];
  for (let i = 1; i < edges.length; i++) {
    const [a, b] = [edges[i - 1]!, edges[i]!];
    if (b > a)
      spans.push({
        fromS: a,
        toS: b,
        state: stateAt(
          t,
          faults.filter((f) => f.atS <= a + EDGE_S),
        ),
      });
  }
  return spans;
}

/** A cut in force, as the model sees it: whom it takes out of a quorum, and which pairs it parts. */
interface CutInForce {
  readonly ref: number | undefined;
  /** Data centers cut off from the rest (a partition). */
  readonly dcs?: readonly string[];
  /** A member that can reach no one or hear no one (an isolation, a one-way cut), and why. */
  readonly out?: { readonly node: NodeId; readonly why: string };
  /** Members parted pair by pair (a bridge, a ring). */
  readonly pairs?: readonly (readonly [NodeId, NodeId])[];
  readonly atS: number;
}

/** The state once `applied` (a prefix of the run's faults, in order) were carried out. */
function stateAt(t: Topology, applied: readonly FaultMark[]): ClusterState {
  // Each kind of absence on its own, with when it began: a member killed while isolated stays
  // down when the partition heals, one paused and isolated comes back only when both end.
  const killed = new Map<NodeId, number>();
  const paused = new Map<NodeId, number>();
  // The faults that take members out, and those that bring them back, each by its own kind.
  const outBy: Partial<Record<FaultMark['action'], Map<NodeId, number>>> = { kill: killed, pause: paused };
  const backBy: Partial<Record<FaultMark['action'], Map<NodeId, number>>> = {
    restart: killed,
    resume: paused,
  };
  let cuts: CutInForce[] = [];
  const rtts = new Map<string, number>();
  const linkSpecs = t.scenario.faults.filter((f) => f.action === 'link');
  const members = t.nodes.map((n) => n.id);
  let links = 0;
  for (const f of applied) {
    const nodes = f.node.split(',');
    for (const n of nodes) outBy[f.action]?.set(n, f.atS);
    for (const n of nodes) backBy[f.action]?.delete(n);
    const cut = { ref: f.ref, atS: f.atS };
    if (f.action === 'partition') cuts.push({ ...cut, dcs: nodes });
    else if (f.action === 'isolate') cuts.push({ ...cut, out: { node: f.node, why: 'isolated' } });
    else if (f.action === 'oneway')
      cuts.push({ ...cut, out: { node: f.node, why: 'hearing no one (a one-way cut)' } });
    else if (f.action === 'bridge') {
      const [x, y] = bridgeHalves(members, f.node);
      cuts.push({ ...cut, pairs: x.flatMap((a) => y.map((b) => [a, b] as const)) });
    } else if (f.action === 'ring') cuts.push({ ...cut, pairs: ringCuts(nodes) });
    // A heal restores every cut link, or, undoing one fault, that fault's own.
    else if (f.action === 'heal') cuts = f.undoes === undefined ? [] : cuts.filter((c) => c.ref !== f.undoes);
    else if (f.action === 'link') {
      // The mark names the pair in words; the topology's k-th link fault holds it as data.
      const spec = linkSpecs[links++];
      const [a, b] = spec?.datacenters ?? [];
      if (a !== undefined && b !== undefined && spec?.rttMs !== undefined)
        rtts.set(pairKey(t, a, b), spec.rttMs);
    }
  }
  const down = new Map<NodeId, string>();
  const at = (s: number): string => `${s.toFixed(1)} s`;
  for (const c of cuts) if (c.out) down.set(c.out.node, `${c.out.why} at ${at(c.atS)}`);
  for (const [n, s] of paused) down.set(n, `paused at ${at(s)}`);
  for (const [n, s] of killed) down.set(n, `killed at ${at(s)}`);
  const parted = new Set(
    cuts.flatMap((c) => (c.pairs ?? []).flatMap(([a, b]) => [`${a}|${b}`, `${b}|${a}`])),
  );
  const described = cuts
    .filter((c) => c.pairs)
    .map((c) => `${c.pairs!.map(([a, b]) => `${a}–${b}`).join(', ')} parted`);
  return { down, cuts: cuts.flatMap((c) => (c.dcs ? [c.dcs] : [])), parted, partedText: described, rtts };
}

/** "a|b" for a pair of data centers, whichever way round it is named. */
function pairKey(t: Topology, a: string, b: string): string {
  const order = t.datacenters.map((d) => d.name);
  return order.indexOf(a) <= order.indexOf(b) ? `${a}|${b}` : `${b}|${a}`;
}

/** Whether a partition in force separates two data centers. */
function separated(state: ClusterState, dcA: string, dcB: string): boolean {
  return state.cuts.some((cut) => cut.includes(dcA) !== cut.includes(dcB));
}

/** rtt[a][b] for every pair of members: the configured round trips, with those link faults set. */
export function rttMatrixIn(t: Topology, state: ClusterState): Map<NodeId, Map<NodeId, number>> {
  const m = t.nodeRttMatrix();
  if (state.rtts.size === 0) return m;
  for (const a of t.nodes)
    for (const b of t.nodes) {
      const set = state.rtts.get(pairKey(t, a.datacenter, b.datacenter));
      if (set !== undefined && a.datacenter !== b.datacenter) m.get(a.id)!.set(b.id, set);
    }
  return m;
}

/**
 * The one-way delay from one data center to another in `state`: a link fault's round trip is split
 * evenly between the two directions, as the shaping applies it; other links are as configured.
 */
export function oneWayIn(t: Topology, state: ClusterState, fromDc: string, toDc: string): number {
  if (fromDc === toDc) return 0;
  const set = state.rtts.get(pairKey(t, fromDc, toDc));
  return set === undefined ? t.oneWayDelayMs(fromDc, toDc) : set / 2;
}

/**
 * The one-way delays over [fromS, toS), time-weighted across the states the faults inside it made:
 * what a write sent at a steady rate in that span met on average, as the model's windows weigh
 * their parts.
 */
export function meanOneWayOver(
  t: Topology,
  faults: readonly FaultMark[],
  fromS: number,
  toS: number,
): (fromDc: string, toDc: string) => number {
  const spans = statesOver(t, faults, fromS, Math.max(fromS, toS));
  const length = spans.reduce((n, s) => n + (s.toS - s.fromS), 0);
  return (a, b) => {
    if (spans.length === 0 || length <= 0)
      return spans[0] ? oneWayIn(t, spans[0].state, a, b) : t.oneWayDelayMs(a, b);
    let sum = 0;
    for (const s of spans) sum += oneWayIn(t, s.state, a, b) * (s.toS - s.fromS);
    return sum / length;
  };
}

/** The members `leader` can count on: up, on its side of every partition, not parted from it. */
export function membersWith(t: Topology, state: ClusterState, leader: NodeId): NodeId[] {
  const dc = t.node(leader).datacenter;
  return t.nodes
    .filter(
      (n) =>
        !state.down.has(n.id) &&
        !separated(state, n.datacenter, dc) &&
        !state.parted.has(`${leader}|${n.id}`),
    )
    .map((n) => n.id);
}

/** The state in words, for the report: who is out and why, what is cut, which links changed. */
export function describeState(state: ClusterState): string {
  const parts = [
    ...[...state.down].map(([n, why]) => `${n} ${why}`),
    ...state.cuts.map((c) => `${c.join(', ')} cut off`),
    ...state.partedText,
    ...[...state.rtts].map(([pair, rtt]) => `${pair.replace('|', '–')} at ${rtt} ms`),
  ];
  return parts.length === 0 ? 'every member up, every link as configured' : parts.join('; ');
}
