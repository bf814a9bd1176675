// What a fault acts on at the moment it strikes: "leader" is whoever serves then (in a partition,
// that leader's data center), "killed" the node the latest kill or pause took down; and whether it
// takes the serving leader out (killed, paused, or cut off with its data center or on its own).
// Pure: the leader and the last node down are given, so it is tested without a cluster.
import type { NodeId } from '../vocabulary/names.js';
import { KILLED, LEADER, type FaultSpec } from '../topology/topology-schema.js';
import type { Topology } from '../topology/topology.js';

export interface ResolvedFault {
  /**
   * A node (kill, restart, pause, resume, isolate), the data centers cut off joined by ","
   * (partition), "all" (heal), "a-b" (link).
   */
  readonly target: string;
  /** The members a partition or an isolation cuts off from the rest; empty for the others. */
  readonly cutOff: NodeId[];
  /** Whether it takes `leaderBefore`, serving until now, out. */
  readonly takesLeaderOut: boolean;
}

/** Throws, saying why, when "leader" or "killed" names nobody at this moment. */
export function resolveFault(
  t: Topology,
  f: FaultSpec,
  leaderBefore: NodeId | undefined,
  lastDown: NodeId | undefined,
): ResolvedFault {
  const onNode = f.action !== 'partition' && f.action !== 'heal' && f.action !== 'link';
  // "leader" in a partition is the leader's data center at this moment.
  const dcs = f.datacenters?.map((d) =>
    d === LEADER && f.action === 'partition' && leaderBefore !== undefined
      ? t.node(leaderBefore).datacenter
      : d,
  );
  if (dcs?.includes(LEADER) && f.action === 'partition')
    throw new Error(`no serving leader whose data center to partition at ${f.atMs / 1000} s`);
  const target = !onNode
    ? f.action === 'partition'
      ? dcs!.join(',')
      : f.target
    : f.target === LEADER
      ? leaderBefore
      : f.target === KILLED
        ? lastDown
        : f.target;
  if (target === undefined)
    throw new Error(
      f.target === KILLED
        ? `nothing was killed or paused before the ${f.action} of "${KILLED}" at ${f.atMs / 1000} s`
        : `no serving leader to ${f.action} at ${f.atMs / 1000} s`,
    );
  const cutOff =
    f.action === 'partition'
      ? t.nodes.filter((n) => dcs?.includes(n.datacenter)).map((n) => n.id)
      : f.action === 'isolate'
        ? [target]
        : [];
  const takesLeaderOut =
    leaderBefore !== undefined &&
    (((f.action === 'kill' || f.action === 'pause') && target === leaderBefore) ||
      cutOff.includes(leaderBefore));
  return { target, cutOff, takesLeaderOut };
}
