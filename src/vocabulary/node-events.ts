// Owns the events of a member (and the fields of a traced write's `trace` event): one union for every
// layer that writes or reads them. Imports only the shared names (.dependency-cruiser.js).
//
// The writers and readers: the POLE node's core and server (which emit them as JSON lines), a
// target's translator (ZooKeeper's log lines become the same events), the runtimes (which collect
// them, stamped with the member and the time) and the scenario and report (which time recovery and
// build the anatomy from them).
//
// Fields are what the emitter knows: a ZooKeeper follower's `serving` names its leader but not
// its epoch, which its log does not say. zxids are "epoch:counter" strings.
import type { NodeId } from './names.js';

/**
 * What ended an election's collection of proposals (POLE): every member proposed or voted, so
 * nothing was left to wait for; the timer T ran out with a quorum but not everybody heard; or a
 * quorum's votes, the leader's own among them, named an established leader.
 */
/**
 * all-proposals: heard from every member; all-live: from every member not known to be down (its
 * connection closed, or the leader whose loss started the election), with `election.waitFor: live`;
 * timer: T ran out after a quorum proposed; votes: a majority voted for one leader.
 */
export const ELECTION_END_REASONS = ['all-proposals', 'all-live', 'timer', 'votes'] as const;
export type ElectionEndReason = (typeof ELECTION_END_REASONS)[number];

// ------------------------------------------------------------------------------ traced writes

// Latency anatomy (node/trace/write-tracer.ts stamps, report/latency-anatomy.ts joins): the steps
// a node can stamp for a traced write, and the fields of its one `trace` event per write.

/** The steps a node can stamp, in the order a write meets them. */
export const TRACE_STEPS = [
  /** Contact server: the client's write arrived. */
  'clientRecv',
  /** Contact follower: REQUEST sent on to the leader. */
  'forwardSent',
  /** Leader: the forwarded REQUEST arrived. */
  'leaderRecv',
  /** Leader and followers: the txn handed to the log (a group-commit round may still be running). */
  'persistStart',
  /** Leader and followers: the txn is durable. */
  'durable',
  /** Leader: the first PROPOSAL carrying it went out. Follower: it came in. */
  'proposalSent',
  'proposalRecv',
  /** Follower: the first ACK covering it went out. */
  'ackSent',
  /** Leader: the commit was decided (the turn that produced the COMMIT), and the first COMMIT sent. */
  'decided',
  'commitSent',
  /** Follower: the first COMMIT covering it came in. */
  'commitRecv',
  /** Contact server: the reply went to the client. */
  'replySent',
] as const;
export type TraceStep = (typeof TRACE_STEPS)[number];

// A type, not an interface: the event log takes any record of fields.
export type TraceEventFields = {
  readonly client: string;
  readonly req: number;
  /** "epoch:counter" once this node has seen the txn. */
  readonly zxid: string | null;
  /** Monotonic ms (3 decimals) per step this node took. */
  readonly s: Partial<Record<TraceStep, number>>;
  /** Leader: monotonic ms of the first ACK covering the write, per follower. */
  readonly acks?: Record<NodeId, number>;
};

// ------------------------------------------------------------------------------------- events

/** The events and their fields, without the stamp every event carries (t, node). */
export type NodeEventBody =
  // --- lifecycle (the server, or a target's translator) ---
  | {
      readonly ev: 'started';
      readonly pid?: number;
      readonly datacenter?: string;
      readonly peerPort?: number;
      readonly clientPort?: number;
      readonly httpPort?: number;
      readonly recovered?: Readonly<Record<string, unknown>>;
      /** GLIBC_TUNABLES as the node's own process read it (POLE; null: unset), for the self-check. */
      readonly glibcTunables?: string | null;
    }
  | { readonly ev: 'stopped' }
  | { readonly ev: 'fatal'; readonly error: string }
  | { readonly ev: 'log-error'; readonly message: string }
  // --- election ---
  | {
      readonly ev: 'election-started';
      readonly reason: string;
      readonly epoch?: number;
      readonly lastZxid?: string;
    }
  /**
   * A member's own proposal as an election starts, where its log says it (ZooKeeper: "New election.
   * My id = N, proposed zxid=0x…", its last logged zxid): what FLE compares, after the epoch.
   */
  | { readonly ev: 'candidate'; readonly sid: number; readonly zxid: string }
  /**
   * ZooKeeper's own measure of its election ("LEADING|FOLLOWING - LEADER ELECTION TOOK - N MS"),
   * logged once the member has built its leader or follower, after the decision (`elected`).
   */
  | { readonly ev: 'election-took'; readonly tookMs: number }
  /**
   * A vote this member received while it was looking (ZooKeeper's "Notification: my state:LOOKING;
   * n.sid:…"): FLE decides on the best vote it heard in its round, so these are what a leader's
   * election actually compared, where `candidate` is only what each member proposed.
   */
  | {
      readonly ev: 'vote-heard';
      /** Who sent it, and in what state (a member that already decided sends its decision). */
      readonly from: NodeId;
      readonly fromState: string;
      /** The member the vote is for, its sid, and FLE's order: peer epoch, then zxid, then sid. */
      readonly leader: NodeId;
      readonly leaderSid: number;
      readonly peerEpoch: number;
      readonly zxid: string;
      /** The sender's election round (logical clock): only the receiver's latest round counts. */
      readonly round: number;
    }
  | {
      readonly ev: 'elected';
      /** Who won; absent where the member does not know yet (a ZooKeeper follower). */
      readonly leader?: NodeId;
      readonly epoch?: number;
      readonly via?: string;
      /** Each candidate's score under the oracle (POLE). */
      readonly proposals?: Readonly<Record<NodeId, readonly number[]>>;
      /** ZooKeeper's own "LEADER ELECTION TOOK" figure, in runs recorded before `election-took`. */
      readonly tookMs?: number;
      // What bounded the election (POLE; ZooKeeper's log does not say, so its events have none):
      readonly reason?: ElectionEndReason;
      /** T, ms: how long the collection waits once a quorum has proposed. */
      readonly timeoutMs?: number;
      /** Proposal rounds the member sent in the deciding epoch: 1, plus one per retry before deciding. */
      readonly rounds?: number;
      /** Members it heard neither a proposal nor a vote from in that epoch. */
      readonly unheard?: readonly NodeId[];
      /** Members it took as down when it decided (waitFor live: not waited for). */
      readonly down?: readonly NodeId[];
    }
  | {
      readonly ev: 'oracle-fallback';
      readonly oracle: string;
      readonly fallback: string;
      readonly epoch: number;
      readonly measuredPeers: number;
      readonly needed: number;
      readonly reason: string;
    }
  | {
      readonly ev: 'join-failing';
      readonly failures: number;
      readonly backoffMs: number;
      readonly reason: string;
      readonly epoch: number;
      readonly acceptedEpoch: number;
    }
  // --- roles and phases ---
  | { readonly ev: 'leading'; readonly epoch: number; readonly lastZxid: string }
  | { readonly ev: 'following'; readonly leader?: NodeId; readonly epoch?: number; readonly address?: string }
  | { readonly ev: 'phase'; readonly phase?: string; readonly epoch?: number; readonly role?: string }
  | {
      readonly ev: 'serving';
      readonly epoch?: number;
      /** Absent on the leader's own event; a follower's names its leader. */
      readonly leader?: NodeId;
      readonly followers?: readonly NodeId[];
      readonly lastZxid?: string;
    }
  | { readonly ev: 'quorum'; readonly epoch: number; readonly sids: readonly number[] }
  | { readonly ev: 'first-commit'; readonly epoch: number; readonly zxid: string }
  /** The harness asked this leader to hand leadership to `to` (etcd's MoveLeader, --etcd-prefer). */
  | { readonly ev: 'transfer-asked'; readonly to: NodeId; readonly reason: string }
  | { readonly ev: 'leader-lost'; readonly leader?: NodeId; readonly epoch?: number; readonly reason: string }
  | {
      readonly ev: 'joined-established';
      readonly leader: NodeId;
      readonly epoch: number;
      readonly voted?: NodeId;
    }
  | { readonly ev: 'stepped-down'; readonly epoch?: number; readonly reason: string }
  | {
      readonly ev: 'resigned';
      readonly epoch: number;
      readonly successor: NodeId;
      readonly own: readonly number[];
      readonly successorScore: readonly number[];
      readonly gain: number;
      /** Consecutive checks the successor was better. */
      readonly checks: number;
    }
  // --- sync and snapshots ---
  | {
      readonly ev: 'fetch-history';
      readonly from: NodeId;
      readonly epoch: number;
      readonly have: string;
      readonly theirs: string;
    }
  | { readonly ev: 'sync-sent'; readonly to: NodeId; readonly kind: string; readonly txns: number }
  | {
      readonly ev: 'synced' | 'fetched';
      readonly from: NodeId;
      readonly kind: string;
      readonly txns: number;
      readonly lastZxid: string;
    }
  | { readonly ev: 'snapshot-sent'; readonly to: NodeId; readonly bytes: number; readonly zxid: string }
  | {
      readonly ev: 'snapshot-received';
      readonly from: NodeId;
      readonly why: string;
      readonly bytes: number;
      readonly zxid: string;
    }
  | { readonly ev: 'snapshot-taken'; readonly zxid: string; readonly bytes: number }
  /** The node's event loop ran nothing for `ms` (at least LOOP_STALL_MS, node/loop-stall-watch.ts): timers, heartbeats, I/O all waited. */
  | { readonly ev: 'loop-stalled'; readonly ms: number }
  // --- latency anatomy ---
  | ({ readonly ev: 'trace' } & TraceEventFields);

export type NodeEventName = NodeEventBody['ev'];

/** An event as collected: stamped with the member and the wall-clock ms, and where it came from. */
export type NodeEvent = NodeEventBody & {
  readonly t: number;
  readonly node: NodeId;
  /** Set by a target that translated it from something else (ZooKeeper: "zk-log"). */
  readonly src?: string;
  readonly logger?: string;
};

/** A member's event as a runtime collected it. */
export type ClusterEvent = NodeEvent;

/** The body of one kind of event. */
export type EventOf<E extends NodeEventName> = Extract<NodeEvent, { readonly ev: E }>;

/** Narrows an event (collected, or a core's body) to one kind: `events.filter(isEvent('elected'))`. */
export function isEvent<E extends NodeEventName>(
  ev: E,
): <T extends { readonly ev: string }>(e: T) => e is Extract<T, { readonly ev: E }> {
  return <T extends { readonly ev: string }>(e: T): e is Extract<T, { readonly ev: E }> => e.ev === ev;
}

/** A POLE node writes one event per line on stdout as JSON; every other line yields nothing. */
export function parseNodeEventLine(line: string): NodeEvent[] {
  if (!line.startsWith('{')) return [];
  try {
    const e = JSON.parse(line) as NodeEvent;
    return typeof e.ev === 'string' ? [e] : [];
  } catch {
    return [];
  }
}
