// src/node/core/: the node's protocol as pure state machines (no clock, socket, disk or randomness):
// POLE's election, the Zab-like replication, the replicated state and its snapshots, oracles/, measure/.
//
// One POLE node's protocol, pure: POLE election (election.ts) feeding a Zab-like replication
// protocol (discovery → catch-up fetch → sync → broadcast). Driven by inputs, it accumulates
// effects that the driver drains with ready(); see core-types.ts for the order they must be
// applied in. Time comes only from the `now` of each input.
import type { StateSnapshot } from './state-snapshot.js';
import type {
  CoreEvent,
  CoreInput,
  PeerSend,
  PersistOp,
  ClientReply,
  Ready,
  RecoveredState,
} from './core-types.js';
import { DataTree, requestKey, type ApplyResult } from './data-tree.js';
import type { ElectionDecision, ElectionOutput } from './election-types.js';
import { PoleElection, type ElectionWaitFor } from './election.js';
import type { HeartbeatMessage } from './measure/heartbeat-messages.js';
import {
  HeartbeatMonitor,
  type HeartbeatOptions,
  type PeerMeasurement,
} from './measure/heartbeat-monitor.js';
import { scoreGain, type Oracle, type ScoreContext } from './oracles/oracle.js';
import { TxnHistory } from './txn-history.js';
import type { Member, NodeId, Score, Txn } from './types.js';
import type { EpochRange, PeerMessage, SyncPlan, ZabMessage } from './zab-messages.js';
import { compareZxid, formatZxid, maxZxid, ZERO_ZXID, type Zxid } from '../../vocabulary/zxid.js';
import { majorityOf } from '../../util/majority.js';

/** `join-failing` is said at most this often per node, however often joining fails. */
const JOIN_FAILING_EVENT_EVERY_MS = 1000;

export interface CoreTimers {
  readonly tickMs: number;
  /** Ticks of silence after which a follower gives up on its leader (and a leader on a follower). */
  readonly syncLimit: number;
  /** Ticks allowed for discovery and sync before giving up on an epoch. */
  readonly initLimit: number;
  readonly electionTimeoutMs: number;
  readonly retryBaseMs: number;
}

export interface CoreConfig {
  readonly self: Member;
  readonly members: readonly Member[];
  readonly oracle: Oracle;
  /** Leader for the first epoch (the paper's runs start with a chosen leader). */
  readonly initialLeader?: NodeId;
  readonly timers: CoreTimers;
  /** Take a local snapshot every this many applied txns. */
  readonly snapshotEvery: number;
  /** A log further behind than this many txns is synced with a snapshot (default: never for that reason). */
  readonly syncDiffLimit?: number;
  /**
   * Applied txns kept in memory for DIFFs, the newest (default: all since the snapshot). With
   * `snapshotEvery` at 100,000 a node's live memory grew with every write: under `bench node` its
   * txns' buffers alone were 117 MB at 12 s, 41-63 MB with 10,000 kept (docs/benchmarks.md). A
   * log further behind than what is kept syncs by SNAP. The log on disk is not touched.
   */
  readonly logInMemory?: number;
  /** Most txns in one PROPOSAL; larger batches are split. */
  readonly maxBatch?: number;
  /** Whom a new leader behind its quorum catches up from, among equally up-to-date members. */
  readonly catchUpFrom?: CatchUpFrom;
  /** Whom an election's collection waits for before T (default 'live': see election.ts). */
  readonly electionWaitFor?: ElectionWaitFor;
  /** Heartbeats on the peer links (RTT_i, F_i for the measured oracles); none when absent. */
  readonly heartbeat?: HeartbeatOptions;
  /**
   * How long a fresh node with a measured oracle waits for RTTs to a quorum before its first
   * election; past it, it scores itself like history and says so (default: 10 heartbeat periods).
   */
  readonly measurementWaitMs?: number;
  /** Resignation (paper, section 5); off when absent. */
  readonly resign?: ResignOptions;
  /** Watches state changes (the simulator's invariant checks); never changes behaviour. */
  readonly observer?: CoreObserver;
}

/**
 * A new leader whose history is behind a member of the quorum that acknowledged its epoch first
 * fetches the missing state from the most up-to-date member of that quorum. Among equals:
 * - `first-answer`: the one whose acknowledgement came first, in practice the nearest, so a
 *   large state crosses as short a link as the quorum allows;
 * - `highest-id`: the one with the highest server id, the order in which ZooKeeper's election ranks
 *   equal votes, i.e. the member ZooKeeper's own election would have made leader. The paper's
 *   recovery experiment (Fig. 8a) grows with the RTT only if the state comes across the link,
 *   which this order makes happen (docs/paper.md).
 */
export type CatchUpFrom = 'first-answer' | 'highest-id';

/** leaderLost reasons that mean the leader is gone (dead, paused or cut off), not that it refused us. */
const LEADER_GONE: ReadonlySet<string> = new Set(['connection-lost', 'timeout', 'sync-timeout']);

/**
 * Most committed txns a follower applies in one turn. A follower restarted with 100,000 logged txns
 * learns they are committed in one UPTODATE; applying them at once held its event loop for over a
 * second in the soak (past syncLimit: its leader gave it up). At the 1.6-1.9 µs per apply that
 * `pole-bench bench state` measures, 2,000 are a few ms.
 */
const APPLY_TURN_TXNS = 2_000;

export interface ResignOptions {
  /** How much better a follower must score, as a fraction of the leader's score (0.1 = 10 %). */
  readonly margin: number;
  /** Consecutive heartbeat checks the follower must stay better for. */
  readonly checks: number;
  /**
   * A leader serves at least this long before it may resign, so noisy measurements cannot keep
   * leadership moving (each hand-over costs an election and a sync).
   */
  readonly holdMs: number;
}

export interface CoreObserver {
  applied(txn: Txn, result: ApplyResult): void;
  /** The state was replaced by a snapshot taken at `zxid` (SNAP sync). */
  installed(zxid: Zxid): void;
}

export type Role = 'looking' | 'following' | 'leading';
export type Phase = 'election' | 'discovery' | 'sync' | 'serving';

type FollowerStage = 'info' | 'epoch-acked' | 'syncing' | 'synced';

interface FollowerState {
  stage: FollowerStage;
  /** From ACKEPOCH: what the follower's log looks like. */
  currentEpoch: number;
  lastZxid: Zxid;
  ranges: readonly EpochRange[];
  /** Highest zxid the follower has acknowledged as logged (counted for commit once synced). */
  acked: Zxid;
  /** The NEWLEADER zxid sent to it. */
  newLeaderZxid: Zxid;
  lastHeard: number;
  /** When the leader last sent it anything (a PING is skipped while traffic flows both ways). */
  lastSent: number;
  /** The commit point it was last told (by a COMMIT, or carried in a PROPOSAL, PING or UPTODATE). */
  commitSent: Zxid;
  /**
   * The zxids of the writes it forwarded that it has not yet been told are committed, lowest
   * first: a client of its own waits on each (so each needs its COMMIT at once).
   */
  waiting: Zxid[];
}

interface LeaderState {
  readonly epoch: number;
  readonly since: number;
  readonly followers: Map<NodeId, FollowerState>;
  /** The member whose history the leader is fetching, while it does. */
  fetchingFrom?: NodeId;
  counter: number;
  /** Txns proposed since the last ready(): sent as one PROPOSAL per follower. */
  batch: Txn[];
  /** Requests proposed and not yet applied: key → zxid (a retry attaches instead of re-proposing). */
  inflight: Map<string, Zxid>;
  nextPingAt: number;
  firstCommitSeen: boolean;
  /** When this leader started serving (resignation waits a hold time from here). */
  servingSince?: number;
  /**
   * A quorum (this leader included) has given this epoch its first acknowledgement: no other
   * server can ever be established in it. Told to followers in LEADERINFO (see onLeaderInfo).
   */
  established: boolean;
  /** While not established: who answered V for another leader in this epoch or later, by (epoch, leader). */
  readonly rivalVotes: Map<string, Set<NodeId>>;
}

interface FollowerRole {
  readonly leader: NodeId;
  readonly epoch: number;
  readonly since: number;
  infoSent: boolean;
  lastHeard: number;
  needAck: boolean;
  /** SYNC applied: from here on our log is a prefix of the leader's, so its commit point applies to it. */
  synced: boolean;
  /** This attempt's number, echoed by the leader's LEADERINFO. */
  readonly session: number;
  /** The LEADERINFO of this attempt arrived: what follows on the link belongs to it. */
  inSession: boolean;
  /**
   * The selection took: a quorum with the leader answered V for it, or its LEADERINFO said it is
   * established, or its SYNC came (sent only past discovery). A newer election is then answered
   * with V instead of joined.
   */
  leaderEstablished: boolean;
}

export class NodeCore {
  private readonly cfg: CoreConfig;
  private readonly self: NodeId;
  private readonly n: number;
  private readonly quorum: number;
  private readonly election: PoleElection;

  private acceptedEpoch: number;
  private acceptedLeader: NodeId | undefined;
  private currentEpoch: number;
  private readonly history: TxnHistory;
  /** The highest txn the driver reported durable (recovered txns are). */
  private durableZxid: Zxid;
  private tree: DataTree;
  /** Highest zxid known committed; ≥ lastApplied, and applied as soon as it is logged. */
  private committed: Zxid;
  /** Committed and logged here, so to be applied: up to it a follower applies over several turns. */
  private applyTarget: Zxid = ZERO_ZXID;
  private appliedSinceSnapshot = 0;

  private roleName: Role = 'looking';
  private phaseName: Phase = 'election';
  private leaderState: LeaderState | undefined;
  private followerRole: FollowerRole | undefined;
  private readonly connected = new Set<NodeId>();
  /** FOLLOWERINFOs that arrived while this node was still electing in that epoch. */
  private readonly earlyInfos = new Map<NodeId, Extract<ZabMessage, { type: 'FOLLOWERINFO' }>>();
  /** Client requests waiting for their txn to be applied here: key → driver handles. */
  private readonly waiters = new Map<string, number[]>();
  /** Leader last seen serving, excluded from scores of the next election. */
  private lastLeader: NodeId | undefined;
  private sessionSeq = 0;
  /** Until when a fresh node waits for the configured initial leader before electing. */
  private startGate: number | undefined;
  /** Until when a fresh node waits for enough RTT samples before its first election. */
  private measureGate: number | undefined;
  private readonly monitor: HeartbeatMonitor | undefined;
  /** The latest `now` seen: scores are computed from measurements as of then. */
  private lastNow = 0;
  /**
   * How long this node did nothing before the current step. Its own timer wakes it every half
   * tick while it leads, so a longer gap is a stall (a frozen process, a long pause of its loop).
   */
  private idleMs = 0;
  /** The follower that has scored better than this leader, and for how many checks in a row. */
  private resignStreak: { id: NodeId; checks: number } | undefined;
  private fallbackAnnounced = false;
  /**
   * Consecutive attempts to lead or follow that ended before serving. Each one past the first
   * delays the next election (joinBackoffMs), so a node that cannot join never spins.
   */
  private joinFailures = 0;
  /** The highest epoch a member is known to have promised: the next election starts above it. */
  private epochFloor = 0;
  /** Until when this node backs off before its next election (undefined: no back-off). */
  private electionGate: number | undefined;
  private electionGateReason = '';
  /** When `join-failing` was last emitted: at most one a second, however often joining fails. */
  private joinFailingSaidAt = -Infinity;

  private persist: PersistOp[] = [];
  private sends: PeerSend[] = [];
  private beats: PeerSend[] = [];
  private replies: ClientReply[] = [];
  private events: CoreEvent[] = [];

  constructor(cfg: CoreConfig, recovered: RecoveredState) {
    this.cfg = cfg;
    this.self = cfg.self.id;
    this.n = cfg.members.length;
    this.quorum = majorityOf(this.n);
    this.acceptedEpoch = recovered.acceptedEpoch;
    this.acceptedLeader = recovered.acceptedLeader;
    this.currentEpoch = recovered.currentEpoch;
    const base = recovered.snapshot?.zxid ?? ZERO_ZXID;
    this.tree = recovered.snapshot ? DataTree.fromSnapshot(recovered.snapshot) : new DataTree();
    this.history = new TxnHistory(base);
    for (const t of recovered.txns) this.history.append(t);
    this.durableZxid = this.history.last;
    // Only the snapshot is known committed; the logged tail is confirmed by the next leader's sync.
    this.committed = base;
    this.monitor = cfg.heartbeat ? new HeartbeatMonitor(cfg.self.id, cfg.heartbeat) : undefined;
    this.election = new PoleElection({
      self: cfg.self,
      members: cfg.members,
      electionTimeoutMs: cfg.timers.electionTimeoutMs,
      retryBaseMs: cfg.timers.retryBaseMs,
      initialEpoch: Math.max(recovered.acceptedEpoch, recovered.currentEpoch),
      scoreFor: (epoch) => this.scoreFor(epoch),
      compareScores: (epoch, a, b) => this.compareScores(epoch, a, b),
      waitFor: cfg.electionWaitFor ?? 'live',
    });
  }

  // ---------------------------------------------------------------- observation

  get role(): Role {
    return this.roleName;
  }
  get phase(): Phase {
    return this.phaseName;
  }
  get epoch(): number {
    return this.leaderState?.epoch ?? this.followerRole?.epoch ?? this.election.epoch;
  }
  get leader(): NodeId | undefined {
    if (this.leaderState) return this.self;
    return this.followerRole?.leader;
  }
  get lastZxid(): Zxid {
    return this.history.last;
  }
  get commitZxid(): Zxid {
    return this.committed;
  }
  get lastApplied(): Zxid {
    return this.tree.lastApplied;
  }
  get epochs(): { accepted: number; current: number } {
    return { accepted: this.acceptedEpoch, current: this.currentEpoch };
  }
  /** Serving as leader: the role the simulator's "one leader per epoch" check looks at. */
  get servingLeaderEpoch(): number | undefined {
    return this.leaderState && this.phaseName === 'serving' ? this.leaderState.epoch : undefined;
  }
  read(path: string): ReturnType<DataTree['get']> {
    return this.tree.get(path);
  }
  /**
   * The state a client's READ is answered from now (what this member has applied), or undefined
   * while it answers none: only while it serves (the leader, or a follower synced with it). Before
   * its sync a member's tree may be its last snapshot alone (a restarted member's logged tail is
   * confirmed only by the next leader's sync), older than what it answered before it went down.
   */
  get clientReadable(): Zxid | undefined {
    return this.phaseName === 'serving' ? this.tree.lastApplied : undefined;
  }
  /** Logged txns after the snapshot point (for checkers and tests). */
  loggedTxns(): readonly Txn[] {
    return this.history.slice(this.history.base);
  }
  get logBase(): Zxid {
    return this.history.base;
  }
  /** This node's score for the next election under the configured oracle. */
  currentScore(): Score {
    return this.scoreWith(this.cfg.oracle);
  }

  /** This node's score for the next election under any oracle (for /status: explain an election). */
  scoreWith(oracle: Oracle): Score {
    return oracle.score(this.scoreContext(this.election.epoch + 1, this.leader));
  }

  /** RTT_i (self = 0, live peers only), F_i and per-peer detail; undefined without heartbeats. */
  measurements():
    | {
        rttMs: Map<NodeId, number>;
        requestRates: Map<NodeId, number>;
        peers: Record<NodeId, PeerMeasurement>;
      }
    | undefined {
    const m = this.monitor;
    if (!m) return undefined;
    return {
      rttMs: m.rttMs(this.lastNow),
      requestRates: m.requestRates(this.lastNow),
      peers: m.describe(this.lastNow),
    };
  }

  // ---------------------------------------------------------------- driving

  /** Start the node: the first election. */
  start(now: number): void {
    const t = this.cfg.timers;
    const fresh = this.acceptedEpoch === 0 && this.history.length === 0 && this.history.base.epoch === 0;
    this.lastNow = now;
    if (fresh && this.cfg.initialLeader !== undefined) {
      // A brand-new cluster with a chosen first leader: wait (up to initLimit) until we can hear
      // it, or a quorum would decide without its proposal whenever it starts a little late.
      if (this.cfg.initialLeader !== this.self) {
        this.startGate = now + t.initLimit * t.tickMs;
        return;
      }
    } else if (this.cfg.oracle.measured && this.monitor && !this.measurementsReady(now)) {
      // A measured oracle cannot score this node before it has round trips to a quorum: wait for
      // them (bounded), so the first election compares measured scores instead of placeholders.
      this.measureGate = now + (this.cfg.measurementWaitMs ?? 10 * this.monitor.opts.periodMs);
      return;
    }
    this.beginElection(now, 'startup');
  }

  private measurementsReady(now: number): boolean {
    return (this.monitor?.measuredPeers(now) ?? 0) + 1 >= this.quorum;
  }

  private openMeasureGate(now: number, reason: string): void {
    if (this.measureGate === undefined) return;
    this.measureGate = undefined;
    if (!this.election.running && this.election.leader === undefined && this.roleName === 'looking')
      this.beginElection(now, reason);
  }

  /** Leave the start gate: start the first election unless a peer's proposal already drew us in. */
  private openStartGate(now: number, reason: string): void {
    if (this.startGate === undefined) return;
    this.startGate = undefined;
    if (!this.election.running && this.election.leader === undefined && this.roleName === 'looking')
      this.beginElection(now, reason);
  }

  step(input: CoreInput): void {
    this.idleMs = input.now - this.lastNow;
    this.lastNow = Math.max(this.lastNow, input.now);
    switch (input.type) {
      case 'tick':
        this.onTick(input.now);
        break;
      case 'message':
        this.onMessage(input.now, input.from, input.msg);
        break;
      case 'connected':
        this.connected.add(input.peer);
        this.monitor?.peerUp(input.peer, input.now);
        this.takeElection(input.now, this.election.setDown(input.peer, false));
        this.onConnected(input.now, input.peer);
        break;
      case 'heard':
        this.onHeard(input.now, input.peer);
        break;
      case 'disconnected':
        this.connected.delete(input.peer);
        this.monitor?.peerDown(input.peer);
        // Before onDisconnected: the election that a lost leader starts already knows it is down.
        this.takeElection(input.now, this.election.setDown(input.peer, true));
        this.onDisconnected(input.now, input.peer);
        break;
      case 'persisted':
        if (compareZxid(input.zxid, this.durableZxid) > 0) {
          this.durableZxid = input.zxid;
          this.recomputeCommit();
        }
        break;
      case 'write':
        this.monitor?.recordRequest(input.now);
        this.onWrite(input.now, input.handle, input.clientId, input.requestId, input.path, input.data);
        break;
    }
  }

  /** Drain the effects accumulated since the last call. */
  ready(): Ready {
    this.flushBatches();
    const r: Ready = {
      persist: this.persist,
      sends: this.sends,
      heartbeats: this.beats,
      replies: this.replies,
      events: this.events,
    };
    this.persist = [];
    this.sends = [];
    this.beats = [];
    this.replies = [];
    this.events = [];
    return r;
  }

  /** When the driver must call step({type:'tick'}) next, at the latest. */
  nextTimerAt(): number | undefined {
    const t = this.cfg.timers;
    const deadlines: number[] = [];
    if (this.startGate !== undefined) deadlines.push(this.startGate);
    if (this.measureGate !== undefined) deadlines.push(this.measureGate);
    if (this.electionGate !== undefined) deadlines.push(this.electionGate);
    const beat = this.monitor?.nextAt();
    if (beat !== undefined) deadlines.push(beat);
    const e = this.election.nextDeadline();
    if (e !== undefined) deadlines.push(e);
    const ls = this.leaderState;
    if (ls) {
      deadlines.push(ls.nextPingAt);
      if (this.phaseName !== 'serving') deadlines.push(ls.since + t.initLimit * t.tickMs);
    }
    const fr = this.followerRole;
    if (fr) {
      deadlines.push(fr.lastHeard + t.syncLimit * t.tickMs);
      if (this.phaseName !== 'serving') deadlines.push(fr.since + t.initLimit * t.tickMs);
    }
    // Committed txns still to apply: a tick at once, after whatever input is waiting.
    if (compareZxid(this.applyTarget, this.tree.lastApplied) > 0) deadlines.push(this.lastNow);
    return deadlines.length > 0 ? Math.min(...deadlines) : undefined;
  }

  // ---------------------------------------------------------------- election

  private scoreContext(epoch: number, exclude: NodeId | undefined): ScoreContext {
    const excluded = new Set<NodeId>();
    if (exclude !== undefined && exclude !== this.self) excluded.add(exclude);
    const m = this.monitor;
    const now = this.lastNow;
    return {
      self: this.self,
      selfSid: this.cfg.self.sid,
      epoch,
      members: this.cfg.members.map((x) => x.id),
      lastZxid: this.history.last,
      excluded,
      ...(m
        ? {
            rttMs: m.rttMs(now),
            requestRates: m.requestRates(now),
            measurementsReady: this.measurementsReady(now),
          }
        : {}),
    };
  }

  private usesInitialLeader(epoch: number): boolean {
    // Only a brand-new cluster (nothing ever accepted) starts with the operator's chosen leader.
    return this.cfg.initialLeader !== undefined && epoch === 1;
  }

  private scoreFor(epoch: number): Score {
    if (this.usesInitialLeader(epoch)) return [this.self === this.cfg.initialLeader ? 1 : 0];
    const ctx = this.scoreContext(epoch, this.lastLeader);
    if (this.cfg.oracle.measured && ctx.measurementsReady !== true) {
      // Said once per incarnation: the scores in `elected` show which elections it affected.
      if (!this.fallbackAnnounced) {
        this.fallbackAnnounced = true;
        this.emit({
          ev: 'oracle-fallback',
          oracle: this.cfg.oracle.name,
          fallback: 'history',
          epoch,
          measuredPeers: this.monitor?.measuredPeers(this.lastNow) ?? 0,
          needed: this.quorum - 1,
          reason: this.monitor ? 'too few RTT samples' : 'heartbeats are off',
        });
      }
    } else {
      this.fallbackAnnounced = false;
    }
    return this.cfg.oracle.score(ctx);
  }

  private compareScores(epoch: number, a: Score, b: Score): number {
    if (this.usesInitialLeader(epoch)) return (a[0] ?? 0) - (b[0] ?? 0);
    return this.cfg.oracle.compare(a, b);
  }

  /**
   * Leave whatever role this node had and elect. `failed`: the role being left never reached
   * serving (a candidate without a quorum, a follower its leader did not take, a decision for an
   * epoch this node cannot lead). Failures in a row back off before the next election.
   */
  private beginElection(now: number, reason: string, vote?: Member, failed = this.attemptFailed()): void {
    this.abandonRole(now);
    this.roleName = 'looking';
    this.setPhase('election');
    this.startGate = undefined;
    this.measureGate = undefined;
    this.resignStreak = undefined;
    this.joinFailures = failed ? this.joinFailures + 1 : 0;
    const backoff = this.joinBackoffMs();
    if (backoff > 0 && vote === undefined) {
      this.electionGate = now + backoff;
      this.electionGateReason = reason;
      // Idle meanwhile: no retries, and no V for a decision that did not work out. A newer
      // election by someone else still draws this node in (onDecided then drops the gate).
      this.election.idle();
      if (now - this.joinFailingSaidAt >= JOIN_FAILING_EVENT_EVERY_MS) {
        this.joinFailingSaidAt = now;
        this.emit({
          ev: 'join-failing',
          failures: this.joinFailures,
          backoffMs: backoff,
          reason,
          epoch: this.election.epoch,
          acceptedEpoch: this.acceptedEpoch,
        });
      }
      return;
    }
    this.startElection(now, reason, vote);
  }

  /** Whether the role this node is leaving ended before it served (see beginElection). */
  private attemptFailed(): boolean {
    if (this.roleName === 'looking') return this.election.leader !== undefined; // decided, could not act on it
    return this.phaseName !== 'serving';
  }

  /**
   * No delay for the first failure (a lost race in an ordinary failover), then the retry base,
   * doubling, capped at initLimit ticks: the time a candidate is given to gather its quorum.
   */
  private joinBackoffMs(): number {
    if (this.joinFailures <= 1) return 0;
    const t = this.cfg.timers;
    return Math.min(t.retryBaseMs * 2 ** (this.joinFailures - 2), t.initLimit * t.tickMs);
  }

  private openElectionGate(now: number): void {
    if (this.electionGate === undefined) return;
    this.electionGate = undefined;
    if (!this.election.running && this.election.leader === undefined && this.roleName === 'looking')
      this.startElection(now, `backed-off:${this.electionGateReason}`);
  }

  private startElection(now: number, reason: string, vote?: Member): void {
    this.electionGate = undefined;
    const out = this.election.newElection(
      now,
      Math.max(this.acceptedEpoch, this.epochFloor) + 1,
      vote
        ? { id: vote.id, sid: vote.sid, score: this.monitor?.peerScores(now).get(vote.id) ?? [] }
        : undefined,
    );
    this.emit({
      ev: 'election-started',
      reason,
      epoch: this.election.epoch,
      lastZxid: formatZxid(this.history.last),
    });
    this.takeElection(now, out);
  }

  private takeElection(now: number, out: ElectionOutput): void {
    for (const s of out.sends) this.sends.push({ to: s.to, msg: s.msg });
    if (out.decided) this.onDecided(now, out.decided);
  }

  private onDecided(now: number, d: ElectionDecision): void {
    this.electionGate = undefined; // drawn into someone's election while backing off: it decided
    this.emit({
      ev: 'elected',
      leader: d.leader,
      epoch: d.epoch,
      via: d.via,
      proposals: Object.fromEntries(d.proposals.map((p) => [p.id, p.score])),
      // What bounded the election, for the report's recovery explanation (report/recovery-explain.ts).
      reason: d.reason,
      timeoutMs: d.timeoutMs,
      rounds: d.rounds,
      unheard: d.unheard,
      down: d.down,
    });
    if (d.leader === this.self) this.lead(now, d.epoch);
    else this.follow(now, d.leader, d.epoch, d.via === 'votes');
  }

  /** Leave the current role: pending client requests get an explicit error. */
  private abandonRole(_now: number): void {
    // Proposed this turn and not yet flushed (flushBatches runs at ready()): in the history, so
    // logged as every txn there is. Dropped with the role, a leader that stepped down in the turn
    // it proposed kept the txn in memory, led again, had it committed from there, and lost it from
    // its own log at its next restart (a hole between epochs: docker, the fears, p4).
    const unflushed = this.leaderState?.batch;
    if (unflushed && unflushed.length > 0) this.persist.push({ op: 'append', txns: unflushed });
    if (this.leaderState || this.followerRole) {
      for (const [, handles] of this.waiters) {
        for (const h of handles) this.replies.push({ handle: h, ok: false, code: 'LEADER_LOST' });
      }
      this.waiters.clear();
    }
    this.leaderState = undefined;
    this.followerRole = undefined;
  }

  private setPhase(p: Phase): void {
    if (this.phaseName === p) return;
    this.phaseName = p;
    this.emit({ ev: 'phase', phase: p, epoch: this.epoch });
  }

  // ---------------------------------------------------------------- leader

  private lead(now: number, epoch: number): void {
    if (epoch <= this.acceptedEpoch) {
      // Someone else may already hold this epoch: never reuse it.
      this.beginElection(now, `stale-epoch:${epoch}<=${this.acceptedEpoch}`);
      return;
    }
    this.acceptedEpoch = epoch;
    this.acceptedLeader = this.self;
    this.persistEpochs();
    this.roleName = 'leading';
    this.leaderState = {
      epoch,
      since: now,
      followers: new Map(),
      counter: 0,
      batch: [],
      inflight: new Map(),
      nextPingAt: now,
      firstCommitSeen: false,
      established: false,
      rivalVotes: new Map(),
    };
    this.emit({ ev: 'leading', epoch, lastZxid: formatZxid(this.history.last) });
    this.setPhase('discovery');
    const early = [...this.earlyInfos];
    this.earlyInfos.clear();
    for (const [from, info] of early) this.onFollowerInfo(now, from, info);
    this.maybeFinishDiscovery(now);
  }

  private onFollowerInfo(now: number, from: NodeId, m: Extract<ZabMessage, { type: 'FOLLOWERINFO' }>): void {
    const ls = this.leaderState;
    if (!ls || m.epoch !== ls.epoch) {
      if (!ls && this.roleName === 'looking' && m.epoch === this.election.epoch) {
        this.earlyInfos.set(from, m); // we may be about to lead this epoch
        return;
      }
      this.send(from, {
        type: 'REJECT',
        epoch: m.epoch,
        acceptedEpoch: this.acceptedEpoch,
        reason: 'not-leading',
      });
      return;
    }
    ls.followers.set(from, {
      stage: 'info',
      currentEpoch: 0,
      lastZxid: m.lastZxid,
      ranges: [],
      acked: ZERO_ZXID,
      newLeaderZxid: ZERO_ZXID,
      lastHeard: now,
      lastSent: now,
      commitSent: ZERO_ZXID,
      waiting: [],
    });
    this.send(from, { type: 'LEADERINFO', epoch: ls.epoch, session: m.session, established: ls.established });
  }

  private onAckEpoch(now: number, from: NodeId, m: Extract<ZabMessage, { type: 'ACKEPOCH' }>): void {
    const ls = this.leaderState;
    const f = ls?.followers.get(from);
    if (!ls || !f || m.epoch !== ls.epoch || f.stage !== 'info') return;
    f.stage = 'epoch-acked';
    f.currentEpoch = m.currentEpoch;
    f.lastZxid = m.lastZxid;
    f.ranges = m.ranges;
    if (this.phaseName === 'discovery') this.maybeFinishDiscovery(now);
    else if (this.phaseName === 'sync' || this.phaseName === 'serving') this.syncFollower(from, f);
  }

  /** With a quorum of ACKEPOCH: catch up from the most up-to-date member of it, then sync. */
  private maybeFinishDiscovery(now: number): void {
    const ls = this.leaderState;
    if (!ls || this.phaseName !== 'discovery' || ls.fetchingFrom !== undefined) return;
    const acked = [...ls.followers].filter(([, f]) => f.stage === 'epoch-acked');
    if (acked.length + 1 < this.quorum) return;
    // Only first acknowledgements reach this point: a LEADERINFO that lets a follower acknowledge
    // a second leader in an epoch says `established`, which this leader only says from here on.
    ls.established = true;
    let best: NodeId = this.self;
    let bestEpoch = this.currentEpoch;
    let bestZxid = this.history.last;
    const byId = this.cfg.catchUpFrom === 'highest-id';
    for (const [id, f] of acked) {
      const c = f.currentEpoch !== bestEpoch ? f.currentEpoch - bestEpoch : compareZxid(f.lastZxid, bestZxid);
      // Never in favour of an equal member over itself: catching up from an equal costs a transfer for nothing.
      if (
        c > 0 ||
        (c === 0 && byId && best !== this.self && (this.sidOf(id) ?? -1) > (this.sidOf(best) ?? -1))
      ) {
        best = id;
        bestEpoch = f.currentEpoch;
        bestZxid = f.lastZxid;
      }
    }
    if (best !== this.self) {
      ls.fetchingFrom = best;
      this.emit({
        ev: 'fetch-history',
        from: best,
        epoch: ls.epoch,
        have: formatZxid(this.history.last),
        theirs: formatZxid(bestZxid),
      });
      this.send(best, {
        type: 'FETCH',
        epoch: ls.epoch,
        ranges: this.history.ranges(),
        lastZxid: this.history.last,
      });
      return;
    }
    this.startSync(now);
  }

  /** The member's numeric server id (ties go to the higher); undefined for a non-member. */
  private sidOf(id: NodeId): number | undefined {
    return this.cfg.members.find((x) => x.id === id)?.sid;
  }

  private onFetched(now: number, from: NodeId, m: Extract<ZabMessage, { type: 'FETCHED' }>): void {
    const ls = this.leaderState;
    if (!ls || m.epoch !== ls.epoch || ls.fetchingFrom !== from) return;
    this.applyPlan(m.plan, from, 'fetched');
    ls.fetchingFrom = undefined;
    this.startSync(now);
  }

  private startSync(_now: number): void {
    const ls = this.leaderState;
    if (!ls) return;
    this.setPhase('sync');
    for (const [id, f] of ls.followers) if (f.stage === 'epoch-acked') this.syncFollower(id, f);
    this.maybeServe();
  }

  private syncFollower(id: NodeId, f: FollowerState): void {
    const ls = this.leaderState;
    if (!ls) return;
    const plan = this.history.planSync(
      f.ranges,
      f.lastZxid,
      () => this.snapshotNow(),
      this.cfg.syncDiffLimit,
    );
    f.stage = 'syncing';
    f.newLeaderZxid = this.history.last;
    this.emit({
      ev: 'sync-sent',
      to: id,
      kind: plan.snapshot ? 'SNAP' : plan.truncateTo ? 'TRUNC' : 'DIFF',
      txns: plan.txns.length,
      ...(plan.truncateTo ? { truncateTo: formatZxid(plan.truncateTo) } : {}),
    });
    if (plan.snapshot)
      this.emit({
        ev: 'snapshot-sent',
        to: id,
        bytes: plan.snapshot.byteLength,
        zxid: formatZxid(plan.snapshot.zxid),
      });
    this.send(id, { type: 'SYNC', epoch: ls.epoch, plan });
    this.send(id, { type: 'NEWLEADER', epoch: ls.epoch, lastZxid: f.newLeaderZxid });
  }

  private onAckNewLeader(now: number, from: NodeId, m: Extract<ZabMessage, { type: 'ACKNEWLEADER' }>): void {
    const ls = this.leaderState;
    const f = ls?.followers.get(from);
    if (!ls || !f || m.epoch !== ls.epoch || f.stage !== 'syncing') return;
    f.stage = 'synced';
    f.acked = maxZxid(f.acked, f.newLeaderZxid);
    f.lastHeard = now;
    if (this.phaseName === 'serving') {
      this.send(from, { type: 'UPTODATE', epoch: ls.epoch, commitZxid: this.committed });
      this.recomputeCommit();
    } else {
      this.maybeServe();
    }
  }

  private maybeServe(): void {
    const ls = this.leaderState;
    if (!ls || this.phaseName !== 'sync') return;
    const synced = [...ls.followers].filter(([, f]) => f.stage === 'synced');
    if (synced.length + 1 < this.quorum) return;
    // A quorum holds our history and has accepted us: all of it is committed now.
    this.currentEpoch = ls.epoch;
    this.persistEpochs();
    this.commitUpTo(this.history.last);
    ls.servingSince = this.lastNow;
    this.joinFailures = 0;
    this.setPhase('serving');
    this.emit({
      ev: 'serving',
      epoch: ls.epoch,
      followers: synced.map(([id]) => id),
      lastZxid: formatZxid(this.history.last),
    });
    for (const [id] of synced)
      this.send(id, { type: 'UPTODATE', epoch: ls.epoch, commitZxid: this.committed });
  }

  private propose(clientId: string, requestId: number, path: string, data: Uint8Array): Zxid {
    const ls = this.leaderState!;
    ls.counter += 1;
    const txn: Txn = { zxid: { epoch: ls.epoch, counter: ls.counter }, path, data, clientId, requestId };
    this.history.append(txn);
    ls.batch.push(txn);
    ls.inflight.set(requestKey(clientId, requestId), txn.zxid);
    return txn.zxid;
  }

  /**
   * Leader side of a write, local or forwarded: propose unless it is a retry. Returns the zxid whose
   * commit answers it (for a retry of an applied write, the commit point: a follower's waiter is
   * answered once its own tree holds the write, which that point covers).
   */
  private leaderAccept(
    now: number,
    clientId: string,
    requestId: number,
    path: string,
    data: Uint8Array,
  ): Zxid {
    const ls = this.leaderState!;
    // Applied or on its way: the waiter is answered on apply.
    if (this.tree.lookupDone(clientId, requestId)) return this.committed;
    return ls.inflight.get(requestKey(clientId, requestId)) ?? this.propose(clientId, requestId, path, data);
  }

  private onAck(from: NodeId, m: Extract<ZabMessage, { type: 'ACK' }>): void {
    const ls = this.leaderState;
    const f = ls?.followers.get(from);
    if (!ls || !f || m.epoch !== ls.epoch) return;
    if (compareZxid(m.zxid, f.acked) > 0) f.acked = m.zxid;
    if (f.stage === 'synced' && this.phaseName === 'serving') this.recomputeCommit();
  }

  private recomputeCommit(): void {
    const ls = this.leaderState;
    if (!ls || this.phaseName !== 'serving') return;
    // The leader's own vote covers only what its disk holds: PROPOSALs leave before its fsync
    // (send-order.ts). After a truncation durableZxid may name a txn no longer in the history;
    // the min keeps the vote to what is both logged and durable (every later append is newer).
    const own = compareZxid(this.durableZxid, this.history.last) < 0 ? this.durableZxid : this.history.last;
    const acks: Zxid[] = [own];
    for (const f of ls.followers.values()) if (f.stage === 'synced') acks.push(f.acked);
    if (acks.length < this.quorum) return;
    acks.sort((a, b) => compareZxid(b, a));
    const candidate = acks[this.quorum - 1]!;
    // Only this epoch's proposals commit by counting; older ones committed with NEWLEADER.
    if (candidate.epoch === ls.epoch && compareZxid(candidate, this.committed) > 0) {
      this.commitUpTo(candidate);
      if (!ls.firstCommitSeen) {
        ls.firstCommitSeen = true;
        this.emit({ ev: 'first-commit', epoch: ls.epoch, zxid: formatZxid(candidate) });
      }
    }
  }

  // ---------------------------------------------------------------- follower

  /** `byVotes`: a quorum, the leader among it, answered that it leads (the selection took). */
  private follow(now: number, leader: NodeId, epoch: number, byVotes: boolean): void {
    this.roleName = 'following';
    this.sessionSeq += 1;
    this.followerRole = {
      leader,
      epoch,
      since: now,
      infoSent: false,
      lastHeard: now,
      needAck: false,
      synced: false,
      session: this.sessionSeq,
      inSession: false,
      leaderEstablished: byVotes,
    };
    // Whoever asked to follow us in this epoch must look elsewhere now.
    for (const [from, info] of this.earlyInfos) {
      this.send(from, {
        type: 'REJECT',
        epoch: info.epoch,
        acceptedEpoch: this.acceptedEpoch,
        reason: 'following-another',
      });
    }
    this.earlyInfos.clear();
    this.lastLeader = leader;
    this.emit({ ev: 'following', leader, epoch });
    this.setPhase('discovery');
    this.sendFollowerInfo();
  }

  private sendFollowerInfo(): void {
    const fr = this.followerRole;
    if (!fr || fr.infoSent || !this.connected.has(fr.leader)) return;
    fr.infoSent = true;
    this.send(fr.leader, {
      type: 'FOLLOWERINFO',
      epoch: fr.epoch,
      acceptedEpoch: this.acceptedEpoch,
      lastZxid: this.history.last,
      session: fr.session,
    });
  }

  private leaderLost(now: number, reason: string): void {
    const fr = this.followerRole;
    this.emit({ ev: 'leader-lost', leader: fr?.leader, epoch: fr?.epoch, reason });
    // The leader whose loss starts this election is not waited for (election.waitFor live), even
    // where its connection stays open (paused, or timed out): anything heard from it undoes that.
    // (A leader that refused us is alive: not taken as down.)
    if (fr && LEADER_GONE.has(reason)) this.takeElection(now, this.election.setDown(fr.leader, true));
    this.beginElection(now, `leader-lost:${reason}`);
  }

  /**
   * Whether to acknowledge the epoch a leader offers. The rule, and why at most one leader can be
   * established (and so serve) per epoch:
   *
   * - A node's *first* acknowledgement of an epoch e (its ACKEPOCH, or a candidate's own lead(e))
   *   is its vote in e; it is persisted as (acceptedEpoch = e, acceptedLeader) before it leaves.
   *   A node acknowledges e > acceptedEpoch (a first vote), or e = acceptedEpoch again for the
   *   leader it voted for (a follower that lost the link and comes back), never an epoch below
   *   acceptedEpoch (that would break its promise to a newer leader: Zab's acceptedEpoch).
   * - A leader becomes *established* in e once a quorum, itself included, has given e its first
   *   acknowledgement (maybeFinishDiscovery). Each node votes once per epoch and quorums
   *   intersect, so at most one server is ever established in e.
   * - A node that voted for another server in e (a candidate that failed to gather a quorum,
   *   itself included) may acknowledge e to a leader only if that leader says it is
   *   established. That acknowledgement is not a vote: it cannot help anyone become established
   *   (the one who receives it already is), so the argument above stands, and the node joins the
   *   serving leader instead of starting elections that the rest of the cluster answers with the
   *   leader it just refused (the livelock of issue 9: 20,000 rejections in 8 s).
   *
   * ZooKeeper (Learner.registerWithLeader) acknowledges an equal epoch from any leader; it can,
   * because its leader picks the epoch only after a quorum has joined it (getEpochToPropose:
   * max of their acceptedEpochs + 1). Here POLE picks the epoch before anyone joins, so a
   * candidate may hold one without a quorum, and the `established` flag carries what ZooKeeper's
   * ordering gives it for free.
   */
  private onLeaderInfo(now: number, m: Extract<ZabMessage, { type: 'LEADERINFO' }>): void {
    const fr = this.followerRole!;
    const refusal =
      m.epoch !== fr.epoch
        ? `epoch-mismatch:${m.epoch}!=${fr.epoch}`
        : m.epoch < this.acceptedEpoch
          ? `rejected-epoch:${m.epoch}<${this.acceptedEpoch}`
          : m.epoch === this.acceptedEpoch && this.acceptedLeader !== fr.leader && !m.established
            ? `rejected-epoch:${m.epoch}-voted-${this.acceptedLeader ?? 'unknown'}`
            : undefined;
    if (refusal !== undefined) {
      this.send(fr.leader, {
        type: 'REJECT',
        epoch: m.epoch,
        acceptedEpoch: this.acceptedEpoch,
        reason: 'stale-epoch',
      });
      this.leaderLost(now, refusal);
      return;
    }
    if (m.epoch === this.acceptedEpoch && this.acceptedLeader !== fr.leader)
      this.emit({ ev: 'joined-established', leader: fr.leader, epoch: m.epoch, voted: this.acceptedLeader });
    this.acceptedEpoch = m.epoch;
    this.acceptedLeader = fr.leader;
    fr.inSession = true;
    if (m.established) fr.leaderEstablished = true;
    this.persistEpochs();
    this.send(fr.leader, {
      type: 'ACKEPOCH',
      epoch: m.epoch,
      currentEpoch: this.currentEpoch,
      lastZxid: this.history.last,
      ranges: this.history.ranges(),
    });
  }

  private onFetch(from: NodeId, m: Extract<ZabMessage, { type: 'FETCH' }>): void {
    const fr = this.followerRole;
    if (!fr || fr.leader !== from || fr.epoch !== m.epoch) return;
    const plan = this.history.planSync(
      m.ranges,
      m.lastZxid,
      () => this.snapshotNow(),
      this.cfg.syncDiffLimit,
    );
    if (plan.snapshot)
      this.emit({
        ev: 'snapshot-sent',
        to: from,
        bytes: plan.snapshot.byteLength,
        zxid: formatZxid(plan.snapshot.zxid),
      });
    this.send(from, { type: 'FETCHED', epoch: m.epoch, plan });
  }

  private onSync(from: NodeId, m: Extract<ZabMessage, { type: 'SYNC' }>): void {
    this.followerRole!.leaderEstablished = true;
    this.setPhase('sync');
    this.applyPlan(m.plan, from, 'sync');
    this.followerRole!.synced = true;
  }

  private onNewLeader(m: Extract<ZabMessage, { type: 'NEWLEADER' }>): void {
    const fr = this.followerRole!;
    this.currentEpoch = m.epoch;
    this.persistEpochs();
    this.send(fr.leader, { type: 'ACKNEWLEADER', epoch: m.epoch });
  }

  private onUpToDate(m: Extract<ZabMessage, { type: 'UPTODATE' }>): void {
    this.learnCommit(m.commitZxid);
    this.joinFailures = 0;
    this.setPhase('serving');
    this.emit({
      ev: 'serving',
      epoch: m.epoch,
      leader: this.followerRole?.leader,
      lastZxid: formatZxid(this.history.last),
    });
  }

  private onProposal(m: Extract<ZabMessage, { type: 'PROPOSAL' }>): void {
    const fr = this.followerRole!;
    const fresh: Txn[] = [];
    for (const t of m.txns) {
      if (compareZxid(t.zxid, this.history.last) <= 0) continue; // already logged via SYNC
      this.history.append(t);
      fresh.push(t);
    }
    if (fresh.length > 0) this.persist.push({ op: 'append', txns: fresh });
    fr.needAck = true;
  }

  // ---------------------------------------------------------------- both roles

  /** Bring this log in line with a plan (a SYNC from the leader or a FETCHED from a follower). */
  private applyPlan(plan: SyncPlan, from: NodeId, why: 'sync' | 'fetched'): void {
    if (plan.snapshot) {
      this.tree = DataTree.fromSnapshot(plan.snapshot);
      this.applyTarget = plan.snapshot.zxid;
      this.cfg.observer?.installed(plan.snapshot.zxid);
      this.history.reset(plan.snapshot.zxid);
      this.committed = plan.snapshot.zxid;
      this.appliedSinceSnapshot = 0;
      // Whatever form it came in (chunks parsed as they arrived, or the sender's own copy in the
      // simulator), the snapshot is a picture of its own, which the new tree does not share.
      this.persist.push({ op: 'snapshot', snapshot: plan.snapshot, replacesLog: true });
      this.emit({
        ev: 'snapshot-received',
        from,
        why,
        bytes: plan.snapshot.byteLength,
        zxid: formatZxid(plan.snapshot.zxid),
      });
    }
    if (plan.truncateTo) {
      if (compareZxid(plan.truncateTo, this.tree.lastApplied) < 0) {
        // Never happens if the protocol is right: committed txns are never truncated.
        throw new Error(
          `asked to truncate to ${formatZxid(plan.truncateTo)} below applied ${formatZxid(this.tree.lastApplied)}`,
        );
      }
      this.history.truncateAfter(plan.truncateTo);
      this.persist.push({ op: 'truncate', after: plan.truncateTo });
    }
    const fresh: Txn[] = [];
    for (const t of plan.txns) {
      if (compareZxid(t.zxid, this.history.last) <= 0) continue;
      this.history.append(t);
      fresh.push(t);
    }
    if (fresh.length > 0) this.persist.push({ op: 'append', txns: fresh });
    this.emit({
      ev: why === 'sync' ? 'synced' : 'fetched',
      from,
      kind: plan.snapshot ? 'SNAP' : plan.truncateTo ? 'TRUNC' : 'DIFF',
      txns: plan.txns.length,
      lastZxid: formatZxid(this.history.last),
    });
  }

  private learnCommit(z: Zxid): void {
    // Before SYNC our tail may hold txns the leader never committed: its commit point says nothing of them.
    if (this.followerRole && !this.followerRole.synced) return;
    const upTo = compareZxid(z, this.history.last) <= 0 ? z : this.history.last;
    if (compareZxid(z, this.committed) > 0) this.committed = z;
    // A follower answers nobody but its own clients from its tree (the leader dedupes retries with
    // its own, fully applied one), so what it cannot apply now it applies over the next turns.
    this.applyUpTo(upTo, APPLY_TURN_TXNS);
  }

  /** Leader: mark committed and apply. */
  private commitUpTo(z: Zxid): void {
    if (compareZxid(z, this.committed) > 0) this.committed = z;
    this.applyUpTo(z);
  }

  /**
   * Apply what is committed up to `z`, at most `budget` txns now; the rest on the next ticks. A
   * leader applies everything at once: it dedupes retried requests against its tree.
   */
  private applyUpTo(z: Zxid, budget = Infinity): void {
    if (compareZxid(z, this.applyTarget) > 0) this.applyTarget = z;
    this.applyPending(budget);
  }

  private applyPending(budget: number): void {
    const z = this.applyTarget;
    if (compareZxid(z, this.tree.lastApplied) <= 0) return;
    const ls = this.leaderState;
    for (const t of this.history.slice(this.tree.lastApplied, z, budget)) {
      const r = this.tree.apply(t);
      this.cfg.observer?.applied(t, r);
      const key = requestKey(t.clientId, t.requestId);
      ls?.inflight.delete(key);
      const handles = this.waiters.get(key);
      if (handles) {
        this.waiters.delete(key);
        for (const h of handles) this.replies.push({ handle: h, ok: true, zxid: r.zxid });
      }
      this.appliedSinceSnapshot += 1;
    }
    if (this.appliedSinceSnapshot >= this.cfg.snapshotEvery) this.takeLocalSnapshot();
    else if (this.cfg.logInMemory !== undefined)
      this.history.keepNewest(this.cfg.logInMemory, this.tree.lastApplied);
  }

  /** The state now; encoded later, a chunk at a time, by whoever sends or writes it. */
  private snapshotNow(): StateSnapshot {
    return this.tree.freeze();
  }

  private takeLocalSnapshot(): void {
    const snap = this.snapshotNow();
    this.persist.push({ op: 'snapshot', snapshot: snap, replacesLog: false });
    this.history.compactTo(snap.zxid);
    this.appliedSinceSnapshot = 0;
    this.emit({ ev: 'snapshot-taken', zxid: formatZxid(snap.zxid), bytes: snap.byteLength });
  }

  private onWrite(
    now: number,
    handle: number,
    clientId: string,
    requestId: number,
    path: string,
    data: Uint8Array,
  ): void {
    if (this.phaseName !== 'serving') {
      this.replies.push({ handle, ok: false, code: 'NOT_LEADER_YET' });
      return;
    }
    const done = this.tree.lookupDone(clientId, requestId);
    if (done) {
      this.replies.push({ handle, ok: true, zxid: done });
      return;
    }
    const key = requestKey(clientId, requestId);
    const waiting = this.waiters.get(key);
    if (waiting) waiting.push(handle);
    else this.waiters.set(key, [handle]);
    if (this.leaderState) {
      this.leaderAccept(now, clientId, requestId, path, data);
    } else if (this.followerRole && !waiting) {
      this.send(this.followerRole.leader, {
        type: 'REQUEST',
        epoch: this.followerRole.epoch,
        clientId,
        requestId,
        path,
        data,
      });
    }
  }

  private onTick(now: number): void {
    this.applyPending(APPLY_TURN_TXNS);
    if (this.startGate !== undefined && now >= this.startGate)
      this.openStartGate(now, 'startup:initial-leader-not-heard');
    if (this.measureGate !== undefined && now >= this.measureGate)
      this.openMeasureGate(now, 'startup:measurements-incomplete');
    if (this.electionGate !== undefined && now >= this.electionGate) this.openElectionGate(now);
    const m = this.monitor;
    if (m) {
      const beats = m.tick(now, () => this.resignationScore());
      if (beats.length > 0) {
        for (const b of beats) this.beats.push(b);
        if (this.checkResignation(now)) return;
      }
    }
    this.takeElection(now, this.election.tick(now));
    const t = this.cfg.timers;
    const ls = this.leaderState;
    if (ls) {
      // Frozen for longer than a follower waits to hear from its leader, a leader still gathering
      // its quorum cannot tell which of the ACKEPOCHs and ACKNEWLEADERs queued meanwhile come from
      // followers that have given it up since: counted, they made it serve an epoch a newer one had
      // already replaced (a pause of the leader in the simulator's fears). Serving, it finds out
      // below: every follower was last heard before the stall.
      if (this.phaseName !== 'serving' && this.idleMs > t.syncLimit * t.tickMs) {
        this.stepDown(now, `stalled:${this.phaseName}`);
        return;
      }
      if (this.phaseName !== 'serving' && now >= ls.since + t.initLimit * t.tickMs) {
        this.stepDown(now, `no-quorum-within-initLimit:${this.phaseName}`);
        return;
      }
      if (this.phaseName === 'serving') {
        let inTouch = 1;
        for (const f of ls.followers.values())
          if (f.stage === 'synced' && now - f.lastHeard <= t.syncLimit * t.tickMs) inTouch += 1;
        if (inTouch < this.quorum) {
          this.stepDown(now, 'lost-quorum');
          return;
        }
      }
      if (now >= ls.nextPingAt) {
        const every = t.tickMs / 2;
        ls.nextPingAt = now + every;
        // A PING and its PONG say "still here" both ways, and the PING carries the commit point.
        // A synced follower we sent something to (a PROPOSAL or a COMMIT, which carry the commit
        // point too) and heard from (an ACK) within the last half tick learns nothing from them:
        // under load they were most of the messages of a quiet run (at 50 writes/s, 20 PINGs and
        // 20 PONGs a second per follower, each a wake-up of two processes and, across data
        // centers, of the relay). Skipped, the silence either way is at most a tick, still far
        // under syncLimit ticks; a follower that stops answering (a stuck disk) is pinged again,
        // as a quiet one is. Which timeouts fire and when may move; what a node may accept or
        // commit does not (safety never rests on a timer).
        for (const [id, f] of ls.followers)
          if (f.stage !== 'synced' || now - f.lastSent >= every || now - f.lastHeard >= every)
            this.send(id, { type: 'PING', epoch: ls.epoch, commitZxid: this.committed });
      }
    }
    const fr = this.followerRole;
    if (fr) {
      // Same expressions as nextTimerAt(), so a timer set for a deadline always finds it due.
      if (now >= fr.lastHeard + t.syncLimit * t.tickMs) this.leaderLost(now, 'timeout');
      else if (this.phaseName !== 'serving' && now >= fr.since + t.initLimit * t.tickMs)
        this.leaderLost(now, 'sync-timeout');
    }
  }

  /**
   * A leader streaming a snapshot of hundreds of MB to us sends nothing else until it is through
   * (its PINGs wait behind it, in order): the chunks arriving are what says it is alive. As
   * ZooKeeper's learner reads a snapshot under initLimit, not syncLimit, the sync is bounded by
   * initLimit all the same.
   */
  private onHeard(now: number, peer: NodeId): void {
    const fr = this.followerRole;
    if (fr && fr.leader === peer) fr.lastHeard = Math.max(fr.lastHeard, now);
    const f = this.leaderState?.followers.get(peer);
    if (f) f.lastHeard = Math.max(f.lastHeard, now);
  }

  private onHeartbeat(now: number, from: NodeId, msg: HeartbeatMessage): void {
    const m = this.monitor;
    if (!m) return;
    m.onMessage(from, msg, now);
    if (this.measureGate !== undefined && this.measurementsReady(now)) this.openMeasureGate(now, 'startup');
  }

  /** The score heartbeats carry: nobody excluded, the live leader included (section 5). */
  private resignationScore(): Score {
    if (!this.cfg.resign) return [];
    return this.cfg.oracle.score(this.scoreContext(this.election.epoch + 1, undefined));
  }

  /**
   * Resignation (paper, section 5): a serving leader that sees a follower score better by the
   * margin for `checks` heartbeats in a row steps down and backs that follower in the election.
   * Returns whether it resigned.
   */
  private checkResignation(now: number): boolean {
    const r = this.cfg.resign;
    const ls = this.leaderState;
    if (!r || !ls || this.phaseName !== 'serving' || !this.monitor) return false;
    if (ls.servingSince === undefined || now - ls.servingSince < r.holdMs) return false;
    const own = this.resignationScore();
    let best: { id: NodeId; sid: number; score: Score } | undefined;
    for (const [id, score] of this.monitor.peerScores(now)) {
      const sid = this.sidOf(id);
      if (ls.followers.get(id)?.stage !== 'synced' || sid === undefined) continue;
      // Ties go to the higher sid, as in the election's own proposal order.
      const c = best ? this.cfg.oracle.compare(score, best.score) : 1;
      if (c > 0 || (c === 0 && best && sid > best.sid)) best = { id, sid, score };
    }
    const gain = best ? scoreGain(this.cfg.oracle, best.score, own) : 0;
    if (!best || gain < r.margin || gain <= 0) {
      this.resignStreak = undefined;
      return false;
    }
    const checks = this.resignStreak?.id === best.id ? this.resignStreak.checks + 1 : 1;
    this.resignStreak = { id: best.id, checks };
    if (checks < r.checks) return false;
    const successor = this.cfg.members.find((x) => x.id === best.id);
    if (!successor) return false;
    this.emit({
      ev: 'resigned',
      epoch: ls.epoch,
      successor: best.id,
      own,
      successorScore: best.score,
      gain,
      checks,
    });
    // Followers start the next election at once instead of timing out on a silent leader.
    for (const id of ls.followers.keys())
      this.send(id, {
        type: 'REJECT',
        epoch: ls.epoch,
        acceptedEpoch: this.acceptedEpoch,
        reason: 'resigned',
      });
    this.beginElection(now, `resigned:${best.id}`, successor);
    return true;
  }

  /**
   * A candidate that is not established yet hears V for another leader in its epoch (or a later
   * one): the answers to the proposals it sent before it decided. Once a quorum, that leader
   * among it, has settled on the other leader, this candidate can never gather its quorum of
   * first acknowledgements: step down now and join that leader, instead of waiting out initLimit
   * (issue 9: a leader that froze and woke as a candidate of its successor's epoch). Stepping
   * down is always safe.
   */
  private onRivalVote(now: number, from: NodeId, v: Extract<PeerMessage, { type: 'V' }>): void {
    const ls = this.leaderState;
    if (!ls || ls.established || v.leader === this.self || v.epoch < ls.epoch) return;
    const key = `${v.epoch}\u0000${v.leader}`;
    const voters = ls.rivalVotes.get(key) ?? new Set<NodeId>();
    ls.rivalVotes.set(key, voters);
    voters.add(from);
    if (voters.size < this.quorum || !voters.has(v.leader)) return;
    this.stepDown(now, `rival-leader:${v.leader}@${v.epoch}`);
  }

  /**
   * A member has promised `promised` > our epoch (it acknowledged a candidate that never
   * gathered a quorum): it may never acknowledge our epoch, and every election it starts is
   * answered with us. Like a Raft leader that sees a higher term, hand over to a new election
   * above that epoch, telling the followers at once; the sid and scores decide who leads it (with
   * history, usually this node again). Rare: it takes a partition that leaves a candidate a
   * minority of acknowledgements.
   */
  private makeRoomForNewerEpoch(now: number, member: NodeId, promised: number): void {
    const ls = this.leaderState!;
    this.emit({ ev: 'stepped-down', epoch: ls.epoch, reason: `member-ahead:${member}@${promised}` });
    for (const id of ls.followers.keys())
      this.send(id, {
        type: 'REJECT',
        epoch: ls.epoch,
        acceptedEpoch: this.acceptedEpoch,
        reason: 'member-ahead',
      });
    this.epochFloor = Math.max(this.epochFloor, promised);
    this.beginElection(now, `stepped-down:member-ahead:${member}@${promised}`);
  }

  private stepDown(now: number, reason: string): void {
    this.emit({ ev: 'stepped-down', epoch: this.leaderState?.epoch, reason });
    this.beginElection(now, `stepped-down:${reason}`);
  }

  private onConnected(now: number, peer: NodeId): void {
    if (peer === this.cfg.initialLeader) this.openStartGate(now, 'startup');
    if (this.followerRole?.leader === peer) this.sendFollowerInfo();
    // A proposal sent while the link was down was lost: repeat it now rather than wait for the
    // retry timer (start-up, where every link comes up after the first proposals, is the common case).
    if (this.election.running)
      this.send(peer, { type: 'P', epoch: this.election.epoch, proposal: this.election.proposal });
  }

  private onDisconnected(now: number, peer: NodeId): void {
    this.earlyInfos.delete(peer);
    if (this.followerRole?.leader === peer) {
      this.leaderLost(now, 'connection-lost');
      return;
    }
    const ls = this.leaderState;
    if (ls?.followers.delete(peer)) {
      if (ls.fetchingFrom === peer) {
        this.stepDown(now, 'fetch-source-lost');
        return;
      }
      if (this.phaseName === 'serving') {
        const synced = [...ls.followers.values()].filter((f) => f.stage === 'synced').length;
        if (synced + 1 < this.quorum) this.stepDown(now, 'lost-quorum');
      }
    }
  }

  private onMessage(now: number, from: NodeId, msg: PeerMessage): void {
    if (this.election.isDown(from) && this.connected.has(from))
      this.takeElection(now, this.election.setDown(from, false));
    if (msg.type === 'HEARTBEAT') return this.onHeartbeat(now, from, msg);
    // The vote still goes to the election below: the one a step-down starts counts it.
    if (msg.type === 'V') this.onRivalVote(now, from, msg);
    if (msg.type === 'P' || msg.type === 'V') {
      if (
        msg.type === 'P' &&
        msg.epoch > this.election.epoch &&
        this.roleName !== 'looking' &&
        this.phaseName !== 'serving' &&
        !this.followerRole?.leaderEstablished &&
        !this.leaderState?.established
      ) {
        // Someone started a newer election while our own epoch has not been established: the
        // selection we acted on did not take (POLE's selection is unreliable), so join theirs
        // rather than answer with a leader nobody follows. Once the epoch is established (a
        // quorum acknowledged it), it did take: answer V as a serving node would, so the other
        // node joins too instead of the two pulling each other into elections back and forth.
        this.emit({
          ev: 'leader-lost',
          leader: this.leader,
          epoch: this.epoch,
          reason: `newer-election:${msg.epoch}`,
        });
        this.abandonRole(now);
        this.roleName = 'looking';
        this.setPhase('election');
        const out = this.election.newElection(now, Math.max(msg.epoch, this.acceptedEpoch + 1));
        this.emit({
          ev: 'election-started',
          reason: 'newer-election',
          epoch: this.election.epoch,
          lastZxid: formatZxid(this.history.last),
        });
        this.takeElection(now, out);
      }
      this.takeElection(now, this.election.onMessage(now, from, msg));
      return;
    }
    const fr = this.followerRole;
    if (fr && from === fr.leader && msg.epoch === fr.epoch) {
      fr.lastHeard = now;
      if (msg.type === 'LEADERINFO') {
        if (msg.session === fr.session && !fr.inSession) this.onLeaderInfo(now, msg);
        return;
      }
      if (!fr.inSession) return; // left over from an earlier attempt to follow this leader
      switch (msg.type) {
        case 'FETCH':
          return this.onFetch(from, msg);
        case 'SYNC':
          return this.onSync(from, msg);
        case 'NEWLEADER':
          return this.onNewLeader(msg);
        case 'UPTODATE':
          return this.onUpToDate(msg);
        case 'PROPOSAL':
          this.onProposal(msg);
          return this.learnCommit(msg.commitZxid);
        case 'COMMIT':
          return this.learnCommit(msg.zxid);
        case 'PING':
          this.learnCommit(msg.commitZxid);
          this.send(from, { type: 'PONG', epoch: msg.epoch });
          return;
        case 'REJECT':
          return this.leaderLost(now, `rejected:${msg.reason}`);
        default:
          return;
      }
    }
    const ls = this.leaderState;
    if (msg.type === 'FOLLOWERINFO') return this.onFollowerInfo(now, from, msg);
    if (!ls || msg.epoch !== ls.epoch) return; // stale: from an old epoch or for a role we left
    const f = ls.followers.get(from);
    if (f) f.lastHeard = now;
    switch (msg.type) {
      case 'ACKEPOCH':
        return this.onAckEpoch(now, from, msg);
      case 'FETCHED':
        return this.onFetched(now, from, msg);
      case 'ACKNEWLEADER':
        return this.onAckNewLeader(now, from, msg);
      case 'ACK':
        return this.onAck(from, msg);
      case 'REQUEST':
        if (this.phaseName === 'serving') {
          const z = this.leaderAccept(now, msg.clientId, msg.requestId, msg.path, msg.data);
          if (f && compareZxid(z, f.commitSent) > 0) waitOn(f.waiting, z);
        }
        return;
      case 'REJECT':
        if (msg.reason === 'stale-epoch' && msg.acceptedEpoch > ls.epoch) {
          this.makeRoomForNewerEpoch(now, from, msg.acceptedEpoch);
          return;
        }
        if (ls.followers.delete(from) && ls.fetchingFrom === from)
          this.stepDown(now, 'fetch-source-rejected');
        return;
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- effects

  /** Per ready(): one PROPOSAL per follower for the batch, one COMMIT, one ACK. */
  private flushBatches(): void {
    const ls = this.leaderState;
    if (ls) {
      if (ls.batch.length > 0) {
        const batch = ls.batch;
        ls.batch = [];
        this.persist.push({ op: 'append', txns: batch });
        const max = this.cfg.maxBatch ?? 1000;
        for (let i = 0; i < batch.length; i += max) {
          // One message object for every follower: the network encodes it once (peer-network.ts).
          const proposal: PeerMessage = {
            type: 'PROPOSAL',
            epoch: ls.epoch,
            txns: batch.slice(i, i + max),
            commitZxid: this.committed,
          };
          for (const [id, f] of ls.followers) {
            if (f.stage === 'syncing' || f.stage === 'synced') this.send(id, proposal);
          }
        }
        // A leader alone in a quorum of one commits what it has just logged.
        this.recomputeCommit();
      }
      if (this.phaseName === 'serving') this.announceCommit();
    }
    const fr = this.followerRole;
    if (fr?.needAck) {
      fr.needAck = false;
      this.send(fr.leader, { type: 'ACK', epoch: fr.epoch, zxid: this.history.last });
    }
  }

  /**
   * Tells followers the commit point. A follower with a client waiting on a write now committed
   * (one it forwarded), or one still syncing, gets a COMMIT at once: the write's latency runs
   * through it. The others learn the point from the next PROPOSAL or PING, which carry it. A PING
   * goes to a follower at the latest a tick after the last message to it (tick()), so such a
   * follower lags the leader's commit point by at most about a tick plus the link's delay (the
   * simulator checks that every follower hears of it: InvariantChecker.commitHeard).
   *
   * At 50 writes/s the COMMITs to followers that wait for nothing were a fifth of a run's peer
   * messages, each a wake-up of a follower and, across data centers, two of the relay. What a
   * follower knows as committed only lags; what is committed does not change (a quorum logged it,
   * and a new leader commits its whole history), so safety does not rest on when a follower hears
   * of it. Its tree lags as much for its own readers, as ZooKeeper allows a follower's reads to.
   */
  private announceCommit(): void {
    const ls = this.leaderState!;
    for (const [id, f] of ls.followers) {
      if ((f.stage !== 'syncing' && f.stage !== 'synced') || compareZxid(this.committed, f.commitSent) <= 0)
        continue;
      const waits = f.waiting.length > 0 && compareZxid(f.waiting[0]!, this.committed) <= 0;
      if (waits || f.stage === 'syncing')
        this.send(id, { type: 'COMMIT', epoch: ls.epoch, zxid: this.committed });
    }
  }

  private persistEpochs(): void {
    this.persist.push({
      op: 'epochs',
      acceptedEpoch: this.acceptedEpoch,
      currentEpoch: this.currentEpoch,
      ...(this.acceptedLeader !== undefined ? { acceptedLeader: this.acceptedLeader } : {}),
    });
  }

  private send(to: NodeId, msg: PeerMessage): void {
    this.sends.push({ to, msg });
    const f = this.leaderState?.followers.get(to);
    if (f) {
      f.lastSent = this.lastNow;
      const told = commitCarried(msg);
      if (told && compareZxid(told, f.commitSent) > 0) {
        f.commitSent = told;
        while (f.waiting.length > 0 && compareZxid(f.waiting[0]!, told) <= 0) f.waiting.shift();
      }
    }
  }

  private emit(e: CoreEvent): void {
    this.events.push(e);
  }
}

/** Adds `z` to `waiting`, kept lowest first (a retry may wait on a zxid below the last). */
function waitOn(waiting: Zxid[], z: Zxid): void {
  let i = waiting.length;
  while (i > 0 && compareZxid(waiting[i - 1]!, z) > 0) i--;
  if (i > 0 && compareZxid(waiting[i - 1]!, z) === 0) return;
  waiting.splice(i, 0, z);
}

/** The commit point a message tells its follower, if it tells one. */
function commitCarried(msg: PeerMessage): Zxid | undefined {
  switch (msg.type) {
    case 'COMMIT':
      return msg.zxid;
    case 'PROPOSAL':
    case 'PING':
    case 'UPTODATE':
      return msg.commitZxid;
    default:
      return undefined;
  }
}
