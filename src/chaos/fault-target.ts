// What a fault acts on at the moment it strikes: "leader" is whoever serves then (in a partition,
// that leader's data center), "killed" the node the latest kill or pause took down, "minority" a
// minority drawn then; the links it cuts (a partition, an isolation, a one-way cut, a bridge, a
// ring of majorities); and whether it takes the serving leader out. Pure: the leader, the last node
// down and the fault it undoes are given, so it is tested without a cluster.
import type { NodeId } from '../vocabulary/names.js';
import { KILLED, LEADER, MINORITY, type FaultSpec } from '../topology/topology-schema.js';
import type { Topology } from '../topology/topology.js';
import { bridgeHalves, drawMinority } from '../topology/fault-shapes.js';
import { ringCuts } from '../util/majority.js';
import { majorityOf } from '../util/majority.js';
import type { Random } from '../util/random.js';

/** Links cut from every member of `a` to every member of `b`: both ways, or with `oneWay` a's sends only. */
export interface Cut {
  readonly a: readonly NodeId[];
  readonly b: readonly NodeId[];
  readonly oneWay?: boolean;
  /** The fault (by its ref) that made it, so that its own undoing heals it and nothing else. */
  readonly ref?: number;
}

export interface ResolvedFault {
  /**
   * As the report names it: the nodes (kill, restart, pause, resume, isolate, oneway, bridge) joined
   * by ",", the data centers cut off joined by "," (partition), the ring order (ring), "all" (heal,
   * roll), "a-b" (link).
   */
  readonly target: string;
  /** The members a kill, restart, pause or resume acts on. */
  readonly nodes: readonly NodeId[];
  /** The links it cuts (a heal restores; the others cut none). */
  readonly cuts: readonly Cut[];
  /** The members it cuts off from the rest, as a partition or an isolation does; empty for the others. */
  readonly cutOff: NodeId[];
  /**
   * Whether it takes `leaderBefore`, serving until now, out: kills or pauses it, cuts it off one
   * way, or leaves it less than a majority it can reach.
   */
  readonly takesLeaderOut: boolean;
}

/** What the fault has to go on besides itself. */
export interface FaultMoment {
  readonly leader: NodeId | undefined;
  /** The node the latest kill or pause took down. */
  readonly lastDown: NodeId | undefined;
  /** The fault this one undoes, as it was resolved. */
  readonly undoing?: ResolvedFault;
  /** Draws a minority where the schedule did not. */
  readonly random?: Random;
}

/** Throws, saying why, when "leader", "killed" or the fault it undoes names nobody at this moment. */
export function resolveFault(t: Topology, f: FaultSpec, m: FaultMoment): ResolvedFault {
  const leaderBefore = m.leader;
  const members = t.nodes.map((n) => n.id);
  const when = `at ${f.atMs / 1000} s`;
  if (f.undoes !== undefined) {
    if (!m.undoing) throw new Error(`the fault ${f.action} ${when} undoes one that never struck`);
    return { ...m.undoing, cuts: [], cutOff: [], takesLeaderOut: false };
  }
  const one = (): NodeId => {
    const target = f.target === LEADER ? leaderBefore : f.target === KILLED ? m.lastDown : f.target;
    if (target === undefined)
      throw new Error(
        f.target === KILLED
          ? `nothing was killed or paused before the ${f.action} of "${KILLED}" ${when}`
          : `no serving leader to ${f.action} ${when}`,
      );
    return target;
  };
  const done = (target: string, nodes: NodeId[], cuts: Cut[], cutOff: NodeId[]): ResolvedFault => {
    const tagged = cuts.map((c) => (f.ref !== undefined ? { ...c, ref: f.ref } : c));
    const takesLeaderOut =
      leaderBefore !== undefined &&
      (((f.action === 'kill' || f.action === 'pause') && nodes.includes(leaderBefore)) ||
        (f.action === 'oneway' && cutOff.includes(leaderBefore)) ||
        withoutQuorum(members, cuts, leaderBefore));
    return { target, nodes, cuts: tagged, cutOff, takesLeaderOut };
  };
  const onOne = (node: NodeId): ResolvedFault => done(node, [node], [], []);
  switch (f.action) {
    case 'heal':
    case 'roll':
      return done('all', [], [], []);
    case 'link':
      return done(f.target, [], [], []);
    case 'partition': {
      // "leader" in a partition is the leader's data center at this moment.
      const dcs = (f.datacenters ?? []).map((d) =>
        d === LEADER && leaderBefore !== undefined ? t.node(leaderBefore).datacenter : d,
      );
      if (dcs.includes(LEADER)) throw new Error(`no serving leader whose data center to partition ${when}`);
      const off = t.nodes.filter((n) => dcs.includes(n.datacenter)).map((n) => n.id);
      return done(dcs.join(','), [], [{ a: off, b: rest(members, off) }], off);
    }
    case 'ring': {
      const order = f.nodes ?? members;
      return done(
        order.join(','),
        [],
        ringCuts(order).map(([a, b]) => ({ a: [a], b: [b] })),
        [],
      );
    }
    case 'kill':
    case 'pause':
    case 'restart':
    case 'resume':
      if (f.target === MINORITY) {
        if (!f.nodes && !m.random) throw new Error(`no seed to draw the minority to ${f.action} ${when}`);
        const nodes = [...(f.nodes ?? drawMinority(members, m.random!))];
        return done(nodes.join(','), nodes, [], []);
      }
      return onOne(one());
    case 'isolate': {
      const node = one();
      return done(node, [], [{ a: [node], b: rest(members, [node]) }], [node]);
    }
    case 'oneway': {
      // It hears nobody: what the others send it is cut, what it sends goes on. Cut off from its
      // quorum's answers, as far as a leader's quorum goes.
      const node = one();
      return done(node, [], [{ a: rest(members, [node]), b: [node], oneWay: true }], [node]);
    }
    case 'bridge': {
      const node = one();
      const [x, y] = bridgeHalves(members, node);
      return done(node, [], [{ a: x, b: y }], []);
    }
  }
}

const rest = (members: readonly NodeId[], off: readonly NodeId[]): NodeId[] =>
  members.filter((id) => !off.includes(id));

/**
 * Whether the cuts leave `leader` fewer members it can both reach and hear from than a majority:
 * a partition that leaves the leader on the larger side, a bridge or a ring of majorities leave it
 * its quorum, and take it out only if it gives up of itself (the schedule watches for that).
 */
function withoutQuorum(members: readonly NodeId[], cuts: readonly Cut[], leader: NodeId): boolean {
  if (cuts.length === 0) return false;
  const parted = (x: NodeId): boolean =>
    cuts.some((c) => (c.a.includes(leader) && c.b.includes(x)) || (c.b.includes(leader) && c.a.includes(x)));
  return members.filter((x) => x === leader || !parted(x)).length < majorityOf(members.length);
}
