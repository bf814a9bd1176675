// Who leads an etcd cluster, as the topology and --etcd-prefer say, wherever its members run
// (processes or containers): Raft elects whoever times out first, so the topology's initialLeader is
// handed leadership (etcd's MoveLeader) before the run, and with --etcd-prefer every election after
// that is followed by the same hand-over to the preferred member (named, or the oracle's choice
// among the living): Raft's choice, then the preferred one, as two phases of the report.
import type { NodeId } from '../../vocabulary/names.js';
import type { StartedMembers } from '../member-plan.js';
import { predictElected } from '../../topology/model.js';
import type { Topology } from '../../topology/topology.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import { EtcdGateway } from './etcd-gateway.js';

/** How long the first election, and the transfer to the initial leader, may take. */
const LEADER_TIMEOUT_MS = 20_000;

/** What the hand-over needs of the running members, whatever runs them. */
export type LeadershipControl = StartedMembers;

export const isLeaderEvent = (e: ClusterEvent): boolean => e.ev === 'elected' && e.leader === e.node;

/**
 * A translator that also tells `onLeader()` of every leader's own election, once it is an event.
 * `onLeader` is read on every call: it is set once the members exist (leadAsAsked).
 */
export function watchLeaders(
  translate: (line: string) => ClusterEvent[],
  hook: { onLeader: (e: ClusterEvent) => void },
): (line: string) => ClusterEvent[] {
  return (line) => {
    const out = translate(line);
    // After the events are booked (the caller pushes them first), so a waiter sees the election.
    for (const e of out) if (isLeaderEvent(e)) setImmediate(() => hook.onLeader(e));
    return out;
  };
}

/**
 * Once every member has started: the topology's initial leader (else the preferred one) is handed
 * leadership, and with `prefer` every later election is followed by a hand-over (through `hook`,
 * which the members' translators call).
 */
export async function leadAsAsked(
  ctl: LeadershipControl,
  o: {
    readonly topology: Topology;
    readonly prefer?: string;
    readonly etcdIdOf: ReadonlyMap<NodeId, string>;
    readonly hook: { onLeader: (e: ClusterEvent) => void };
  },
): Promise<void> {
  const t = o.topology;
  const preferred =
    o.prefer === undefined ? undefined : preferredLeader(t, o.prefer, (id) => ctl.isRunning(id));
  const initial = t.cluster.initialLeader ?? preferred?.();
  if (initial !== undefined) {
    const target = o.etcdIdOf.get(initial);
    if (target === undefined) throw new Error(`initialLeader ${initial} is not a member`);
    await handLeadershipTo(ctl, initial, target);
  }
  const prefer = o.prefer;
  if (preferred && prefer !== undefined)
    o.hook.onLeader = (e) => void preferLeader(ctl, e.node, preferred(), o.etcdIdOf, prefer);
}

/**
 * Whom leadership goes to (--etcd-prefer): the named member while it runs, or the member the
 * topology's oracle would elect among the running ones (every one taken as up to date, the
 * topology's RTTs: topology/model.ts predictElected), as the closest etcd comes to POLE.
 */
export function preferredLeader(
  t: Topology,
  prefer: string,
  isRunning: (id: NodeId) => boolean,
): () => NodeId | undefined {
  return () => {
    const down = t.nodes.map((n) => n.id).filter((id) => !isRunning(id));
    if (prefer !== 'oracle') return down.includes(prefer) ? undefined : prefer;
    if (down.length === t.nodes.length) return undefined;
    return predictElected(t, t.cluster.oracle, down).leader;
  };
}

/** Asks `leader`, just elected, to hand leadership to `want` where that is another running member. */
async function preferLeader(
  ctl: LeadershipControl,
  leader: NodeId,
  want: NodeId | undefined,
  etcdIdOf: ReadonlyMap<NodeId, string>,
  prefer: string,
): Promise<void> {
  if (want === undefined || want === leader || !ctl.isRunning(want) || !ctl.isRunning(leader)) return;
  ctl.record({
    ev: 'transfer-asked',
    to: want,
    reason: prefer === 'oracle' ? 'etcd-prefer: the oracle' : 'etcd-prefer',
    t: Date.now(),
    node: leader,
    src: 'harness',
  });
  const gw = new EtcdGateway(ctl.clientAddress(leader), LEADER_TIMEOUT_MS);
  try {
    await gw.moveLeader(etcdIdOf.get(want)!);
  } catch (err) {
    // A leader that lost its place meanwhile refuses: the next election asks again.
    ctl.record({
      ev: 'log-error',
      message: `MoveLeader from ${leader} to ${want}: ${(err as Error).message}`,
      t: Date.now(),
      node: leader,
      src: 'harness',
    });
  } finally {
    gw.close();
  }
}

/**
 * Waits for a leader; until `id` (etcd member `etcdId`) leads, asks whoever leads to hand it
 * leadership, again if leadership moved meanwhile ("not leader": a start on a busy machine can
 * see a second election before the first transfer), within LEADER_TIMEOUT_MS in all.
 */
export async function handLeadershipTo(ctl: LeadershipControl, id: NodeId, etcdId: string): Promise<void> {
  const until = Date.now() + LEADER_TIMEOUT_MS;
  await ctl.waitFor(isLeaderEvent, LEADER_TIMEOUT_MS);
  let last = '';
  while (Date.now() < until) {
    const leader = [...ctl.events].reverse().find(isLeaderEvent)?.node;
    if (leader === id) return;
    const since = ctl.events.length;
    const gw = new EtcdGateway(ctl.clientAddress(leader!), Math.max(1, until - Date.now()));
    try {
      await gw.moveLeader(etcdId);
    } catch (err) {
      last = `: ${(err as Error).message}`;
    } finally {
      gw.close();
    }
    // The next leader's line, or a short pause before looking again.
    await ctl
      .waitFor(isLeaderEvent, Math.min(1_000, Math.max(1, until - Date.now())), since)
      .catch(() => undefined);
  }
  throw new Error(`leadership did not pass to ${id} within ${LEADER_TIMEOUT_MS} ms${last}`);
}
