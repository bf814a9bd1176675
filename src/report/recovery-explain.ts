// What bounded each phase of a recovery, read from the members' own events: how the fault was
// detected (the leader's connection closed, or a member timed out on it), what ended the election
// (every member proposed, or the timer T ran out) and after how many rounds, and how the new leader
// synced its followers on its way to serving. `recovery` says how long each phase took; this says
// why, so a reader does not have to guess that 200 of 234 ms were T. Pure: built from the events,
// the fault instant and the elected leader, so it is tested on made-up events.
//
// Events are taken in the order collected, with the same rules recovery's numbers are found by
// (recovery-figures.ts): the first `leader-lost` at or after the fault is the detection, the elected
// leader's first `elected` naming itself is the election. So the explanation and the table above
// it in report.md always speak of the same events.
import {
  ELECTION_END_REASONS,
  type ElectionEndReason,
  type EventOf,
  type NodeEvent,
} from '../vocabulary/node-events.js';
import type { DETECTION_KINDS } from '../vocabulary/result-schema.js';

/** How a member detected the fault (vocabulary/result-schema.ts lists and explains them). */
export type DetectionKind = (typeof DETECTION_KINDS)[number];

export { ELECTION_END_REASONS, type ElectionEndReason };

/** Times in ms since the fault, as in the rest of `recovery`. */
export interface DetectionExplain {
  /** The member that noticed first. */
  readonly node: string;
  /** The leader it lost; null when its event does not name it (ZooKeeper). */
  readonly leader: string | null;
  readonly kind: DetectionKind;
  /** As the member said it, e.g. "connection-lost", "timeout", "zk:exception when following the leader". */
  readonly reason: string;
  readonly atMs: number;
}

export interface ElectionExplain {
  /** The new leader, whose own decision this is. */
  readonly leader: string;
  readonly atMs: number;
  /** Null wherever the target does not report it (ZooKeeper's log says none of it). */
  readonly reason: ElectionEndReason | null;
  /** T, ms: how long the collection waits once a quorum has proposed. */
  readonly timeoutMs: number | null;
  /** Proposal rounds in the deciding epoch: 1, plus one per retry before the decision. */
  readonly rounds: number | null;
  /** Members the new leader heard neither a proposal nor a vote from before deciding. */
  readonly unheard: readonly string[] | null;
  /** Members the new leader took as down and did not wait for (waitFor live); null where not reported. */
  readonly down: readonly string[] | null;
  /** ZooKeeper's own "LEADER ELECTION TOOK" figure; null where there is none (POLE). */
  readonly tookMs: number | null;
  /**
   * When, by the leader's log, that figure starts and ends, ms from the fault. ZooKeeper 3.8 takes
   * its start (FastLeaderElection's start_fle) after its "LOOKING" line (tookLookingMs) and before
   * its "New election" line (tookFromMs); between the two it may load its database from disk. It
   * takes the end just before its "TOOK" line (tookLoggedMs). So tookMs lies between TOOK − New
   * election and TOOK − LOOKING, to the log's millisecond: the self-check holds it there, a check on
   * the times the run gives ZooKeeper's events. Null where not logged (POLE, older runs).
   */
  readonly tookFromMs: number | null;
  readonly tookLoggedMs: number | null;
  readonly tookLookingMs: number | null;
}

export interface FollowerSync {
  readonly node: string;
  /** DIFF, TRUNC or SNAP, as the leader chose it. */
  readonly kind: string;
  /** Transactions sent with it. */
  readonly txns: number;
  readonly atMs: number;
}

export interface SyncExplain {
  /**
   * Each follower's first sync in this leadership, in the order sent; null when the target
   * reports no syncs at all (ZooKeeper), as opposed to an empty list: none were sent.
   */
  readonly followers: readonly FollowerSync[] | null;
  /** History the new leader lacked and fetched from a member before syncing anyone; null: none. */
  readonly fetched: { readonly from: string; readonly kind: string; readonly txns: number } | null;
  /** Elected to the sync phase: a quorum acknowledging the new epoch (and any fetch). */
  readonly discoveryMs: number | null;
  /** Sync phase to serving: a quorum acknowledging what it was sent. */
  readonly syncMs: number | null;
  readonly servingAfterElectedMs: number | null;
}

export interface RecoveryExplain {
  /** Null when no member reported losing its leader after the fault. */
  readonly detection: DetectionExplain | null;
  readonly election: ElectionExplain;
  readonly sync: SyncExplain;
}

/** A `leader-lost` reason (free text, see node-core.ts and zk-log-events.ts) as one of a few kinds. */
export function detectionKind(reason: string): DetectionKind {
  // 'connection-lost' is the POLE node's word for the link to its leader breaking.
  if (reason === 'connection-lost' || reason === 'connection-closed') return 'connection-closed';
  // 'sync-timeout': the leader went silent while still syncing this member (initLimit, not syncLimit).
  if (reason === 'timeout' || reason === 'sync-timeout') return 'timeout';
  if (reason.startsWith('zk:')) return 'unreported';
  return 'other';
}

/**
 * Why the recovery from the fault at `faultAt` (wall ms) to the deciding election `won` (one of
 * `events`, a member's `elected` naming itself) took what it took; null when there is nothing to
 * explain (no fault took the leader out, or no election decided it).
 */
export function explainRecovery(
  events: readonly NodeEvent[],
  faultAt: number | null,
  won: EventOf<'elected'> | null,
): RecoveryExplain | null {
  if (faultAt === null || won === null) return null;
  const rel = (e: NodeEvent): number => e.t - faultAt;
  const electedAt = events.indexOf(won);
  if (electedAt < 0 || won.leader !== won.node) return null;
  const elected = won.node;
  const { proposed, looking } = ownProposal(events, electedAt, elected, faultAt);

  const lost = events.find((e): e is EventOf<'leader-lost'> => e.t >= faultAt && e.ev === 'leader-lost');
  const detection: DetectionExplain | null = lost
    ? {
        node: lost.node,
        leader: lost.leader ?? null,
        kind: detectionKind(lost.reason),
        reason: lost.reason,
        atMs: rel(lost),
      }
    : null;

  const own = ownLeadership(events, electedAt, elected);
  const servingAt = own.findIndex((e) => e.ev === 'serving' && e.leader === undefined);
  const serving = servingAt < 0 ? undefined : own[servingAt];
  const beforeServing = servingAt < 0 ? own : own.slice(0, servingAt);
  const syncPhase = beforeServing.find(
    (e) => e.ev === 'phase' && (e.phase === 'sync' || e.phase === 'synchronization'),
  );
  // `synced` and `fetched` share one shape in the union, so EventOf<'fetched'> would be empty.
  const fetched = beforeServing.find(
    (e): e is Extract<NodeEvent, { ev: 'synced' | 'fetched' }> => e.ev === 'fetched',
  );

  const syncs: FollowerSync[] = [];
  for (const e of own) {
    if (e.ev !== 'sync-sent' || syncs.some((s) => s.node === e.to)) continue;
    syncs.push({ node: e.to, kind: e.kind, txns: e.txns, atMs: rel(e) });
  }
  // A target that says why its election ended also says how it synced: without either, an empty
  // list would claim "no follower synced" where the truth is "not reported".
  const reports = won.reason !== undefined || syncs.length > 0;
  const took = own.find((e): e is EventOf<'election-took'> => e.ev === 'election-took');

  return {
    detection,
    election: {
      leader: elected,
      atMs: rel(won),
      reason: won.reason ?? null,
      timeoutMs: won.timeoutMs ?? null,
      rounds: won.rounds ?? null,
      unheard: won.unheard ? [...won.unheard] : null,
      down: won.down ? [...won.down] : null,
      // ZooKeeper's own figure, logged after its decision (older runs carry it on `elected`).
      tookMs: took?.tookMs ?? won.tookMs ?? null,
      tookFromMs: took && proposed ? rel(proposed) : null,
      tookLoggedMs: took && proposed ? rel(took) : null,
      tookLookingMs: took && proposed && looking ? rel(looking) : null,
    },
    sync: {
      followers: reports ? syncs : null,
      fetched: fetched ? { from: fetched.from, kind: fetched.kind, txns: fetched.txns } : null,
      discoveryMs: syncPhase ? syncPhase.t - won.t : null,
      syncMs: syncPhase && serving ? serving.t - syncPhase.t : null,
      servingAfterElectedMs: serving ? serving.t - won.t : null,
    },
  };
}

/**
 * The leader's own proposal of this election (ZooKeeper's "New election"): its last before
 * deciding, searched back from the decision without copying a run's worth of events; and its
 * "LOOKING" line before that proposal, where this election's start can be at the earliest.
 */
function ownProposal(
  events: readonly NodeEvent[],
  electedAt: number,
  elected: string,
  faultAt: number,
): { proposed: EventOf<'candidate'> | undefined; looking: EventOf<'election-started'> | undefined } {
  let proposed: EventOf<'candidate'> | undefined;
  let i = electedAt - 1;
  for (; i >= 0 && proposed === undefined; i--) {
    const e = events[i]!;
    if (e.node === elected && e.ev === 'candidate' && e.t >= faultAt) proposed = e;
  }
  let looking: EventOf<'election-started'> | undefined;
  for (; proposed !== undefined && i >= 0 && looking === undefined; i--) {
    const e = events[i]!;
    if (e.node !== elected || e.t < faultAt) continue;
    // An earlier proposal of its own first: this election's LOOKING is not in the log.
    if (e.ev === 'candidate') break;
    if (e.ev === 'election-started') looking = e;
  }
  return { proposed, looking };
}

/**
 * The new leader's own events from its decision on (one member's events keep their order), up to
 * the end of this leadership: a later election of its own belongs to another recovery.
 */
function ownLeadership(events: readonly NodeEvent[], electedAt: number, elected: string): NodeEvent[] {
  const own: NodeEvent[] = [];
  for (const e of events.slice(electedAt + 1)) {
    if (e.node !== elected) continue;
    if (e.ev === 'election-started' || e.ev === 'stepped-down' || e.ev === 'elected') break;
    own.push(e);
  }
  return own;
}
