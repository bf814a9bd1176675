// POLE leader selection (Algorithm 1 of Becker, Junqueira, Serafini, Middleware 2011), as a pure state
// machine: the driver feeds it `now`, messages and timer ticks; it returns the messages to send and,
// once, the decision. It never reads a clock or touches a socket. See
// shared/design/pole-algorithm.md for the clean reading of the algorithm this follows.
//
// Choices where the paper leaves room (each marked "choice:" below):
// - Idle until started: before the first newElection() (or joining a newer epoch) the node has no
//   proposal. It ignores P of an epoch ≤ its own (it cannot teach anything; its own newElection will
//   carry a higher epoch) and ignores V (it asked nobody). A P of a newer epoch makes it join that
//   election exactly like the e > epoch rule, and starts the retry timer as newElection would.
// - startEpoch stops a running election timer: the timer measures T from a quorum of proposals of
//   *this* epoch; one left over from an older epoch would decide without such a quorum.
// - V of any epoch counts, even older than ours (the paper's rule): a node that lost its leader and
//   started epoch e+1 while the others still follow l in epoch e must adopt (e, l) and lower its
//   epoch. Passing minEpoch to the next newElection() keeps epoch numbers from being reused.
// - Once settled (leader ≠ ⊥) the instance is over: P is answered with V, V is not adopted
//   (adopting a second leader behind the replication layer's back would help nobody; it calls
//   newElection() again if the chosen leader does not work out). A V naming another leader of the
//   same epoch is answered once per sender and epoch with our own V: a node that settled on itself
//   from stale proposals learns who the others settled on only from that leader's own vote (the
//   simulator found one that never got it: its P, held behind a slow disk, was not sent before it
//   had answered the leader's stale P with V(itself), so the leader never answered it).
// - Messages from self or from non-members, and proposals naming a non-member, are ignored.
// - waitFor 'live' (choice; 'all' is the paper): "heard from everybody" becomes "heard from every
//   member not known to be down", once a quorum has proposed. The driver says who is down
//   (setDown): a peer whose connection closed and was not re-established, or the leader whose loss
//   started this election. Waiting T for a proposal that cannot come only delays the decision.
//   Why safety does not depend on it: the election only picks whom to try. One serving leader per
//   epoch is the replication layer's rule (a leader is established only by a quorum's first
//   acknowledgement of its epoch, node-core.ts), whatever the election decided; and deciding
//   early is what the timer does anyway after T. A live member wrongly taken for dead loses only
//   the chance that its proposal is considered, exactly as when its P arrives after T.
import type {
  ElectionDecision,
  ElectionEndReason,
  ElectionMessage,
  ElectionOutput,
  ElectionSend,
  Proposal,
} from './election-types.js';
import { compareProposals, type ScoreCompare } from './proposal-order.js';
import type { Member, NodeId, Score } from './types.js';

export interface ElectionOptions {
  readonly self: Member;
  /** Every member, self included (n = members.length). */
  readonly members: readonly Member[];
  /** T: how long to wait for more proposals once a quorum has proposed. */
  readonly electionTimeoutMs: number;
  /** First retry interval t; doubles each retry (exponential back-off). */
  readonly retryBaseMs: number;
  /** getScore(epoch), called when an epoch starts for this node. */
  readonly scoreFor: (epoch: number) => Score;
  /** ≺θ, may depend on the epoch. */
  readonly compareScores: ScoreCompare;
  /** e.g. the persisted current epoch after a restart (default 0). */
  readonly initialEpoch?: number;
  /** Whom the collection waits for before T: every member (the paper, default) or every live one. */
  readonly waitFor?: ElectionWaitFor;
}

export type ElectionWaitFor = 'all' | 'live';

export class PoleElection {
  private readonly self: Member;
  private readonly sidOf: ReadonlyMap<NodeId, number>;
  private readonly peers: readonly NodeId[];
  private readonly n: number;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly scoreFor: (epoch: number) => Score;
  private readonly cmp: ScoreCompare;
  private readonly waitFor: ElectionWaitFor;
  /** Members the driver says are down (kept across epochs: it is about links, not elections). */
  private readonly down = new Set<NodeId>();

  private epochNo: number;
  private leaderId: NodeId | undefined;
  private current: Proposal;
  /** Whether an epoch has started in this incarnation (newElection() or joining a newer epoch). */
  private started = false;
  private readonly proposalSet = new Set<NodeId>();
  /**
   * Members that sent a P this epoch (self included). Unlike proposalSet it leaves out members
   * heard only by their V: those have settled on a leader and are not electing, so an election
   * that "heard every live member" through them has not heard what it waits T for.
   */
  private readonly proposers = new Set<NodeId>();
  /** voteSet, grouped by (epoch, leader): the voters of each. */
  private readonly votes = new Map<string, Set<NodeId>>();
  /** Senders of a rival V this epoch that we answered with our own (once each). */
  private readonly toldOfVote = new Set<NodeId>();
  /** Best score seen this epoch for each proposed server. */
  private readonly seen = new Map<NodeId, Score>();
  private electionDeadline: number | undefined;
  private retryDeadline: number | undefined;
  private retryInterval: number;
  /** Proposal rounds sent in this epoch (the first, then one per retry), for the decision. */
  private rounds = 1;

  // Effects of the call in progress, drained by flush().
  private sends: ElectionSend[] = [];
  private decision: ElectionDecision | undefined;

  constructor(opts: ElectionOptions) {
    const sidOf = new Map<NodeId, number>();
    const sids = new Set<number>();
    for (const m of opts.members) {
      if (sidOf.has(m.id)) throw new Error(`election: member ${m.id} listed twice`);
      if (sids.has(m.sid)) throw new Error(`election: server id ${m.sid} used twice (ties need unique ids)`);
      sidOf.set(m.id, m.sid);
      sids.add(m.sid);
    }
    if (sidOf.get(opts.self.id) !== opts.self.sid) {
      throw new Error(`election: self ${opts.self.id} (sid ${opts.self.sid}) is not among the members`);
    }
    if (!Number.isFinite(opts.electionTimeoutMs) || opts.electionTimeoutMs < 0) {
      throw new Error(
        `election: electionTimeoutMs must be a finite number ≥ 0, got ${opts.electionTimeoutMs}`,
      );
    }
    // > 0, or the doubling back-off would retry in a busy loop.
    if (!Number.isFinite(opts.retryBaseMs) || opts.retryBaseMs <= 0) {
      throw new Error(`election: retryBaseMs must be a finite number > 0, got ${opts.retryBaseMs}`);
    }
    const initialEpoch = opts.initialEpoch ?? 0;
    if (!Number.isSafeInteger(initialEpoch) || initialEpoch < 0) {
      throw new Error(`election: initialEpoch must be an integer ≥ 0, got ${initialEpoch}`);
    }
    this.self = opts.self;
    this.sidOf = sidOf;
    this.peers = opts.members.map((m) => m.id).filter((id) => id !== opts.self.id);
    this.n = opts.members.length;
    this.timeoutMs = opts.electionTimeoutMs;
    this.retryBaseMs = opts.retryBaseMs;
    this.retryInterval = opts.retryBaseMs;
    this.scoreFor = opts.scoreFor;
    this.cmp = opts.compareScores;
    this.waitFor = opts.waitFor ?? 'all';
    this.epochNo = initialEpoch;
    // Placeholder until an epoch starts (choice: getScore is only asked when an epoch starts); it is
    // never compared, since an idle node ignores every P that would need it.
    this.current = { score: [], id: opts.self.id, sid: opts.self.sid };
  }

  get epoch(): number {
    return this.epochNo;
  }

  get leader(): NodeId | undefined {
    return this.leaderId;
  }

  get proposal(): Proposal {
    return this.current;
  }

  get running(): boolean {
    return this.started && this.leaderId === undefined;
  }

  /** newElection(): epoch = max(epoch, minEpoch - 1) + 1, fresh proposal, startEpoch(). */
  /**
   * `vote`: propose another server instead of this one (a resigning leader backs the server it
   * resigned for; choice: the paper's resignation leaves the mechanism open).
   */
  newElection(now: number, minEpoch?: number, vote?: Proposal): ElectionOutput {
    const floor = minEpoch === undefined ? this.epochNo : Math.max(this.epochNo, minEpoch - 1);
    this.beginEpoch(floor + 1);
    if (vote !== undefined && this.sidOf.get(vote.id) === vote.sid) {
      this.current = vote;
      this.noteSeen(vote);
    }
    this.started = true;
    // The paper's t ← T and the retry loop: first retry t after the start, then 2t, 4t, ...
    this.retryInterval = this.retryBaseMs;
    this.retryDeadline = now + this.retryInterval;
    this.sendProposalToAll(now);
    return this.flush();
  }

  /**
   * Back to idle, as before the first newElection(): no proposal out, no decision held, no timers.
   * The node core calls it while it backs off after failing to join a leader, so the instance
   * neither retries nor keeps answering V for a leader it could not join; a P of a newer epoch
   * still draws it into that election (the idle rule).
   */
  idle(): void {
    this.started = false;
    this.leaderId = undefined;
    this.electionDeadline = undefined;
    this.retryDeadline = undefined;
  }

  onMessage(now: number, from: NodeId, msg: ElectionMessage): ElectionOutput {
    if (from === this.self.id || !this.sidOf.has(from) || !Number.isSafeInteger(msg.epoch) || msg.epoch < 0) {
      return this.flush();
    }
    if (msg.type === 'P') this.onPropose(now, from, msg.epoch, msg.proposal);
    else this.onVote(now, from, msg.epoch, msg.leader);
    return this.flush();
  }

  /**
   * The driver's view of a member: down (its connection closed and is not back, or it is the
   * leader whose loss started this election) or up again. With waitFor 'live' a member going down
   * may leave nobody to wait for: the collection ends now.
   */
  isDown(id: NodeId): boolean {
    return this.down.has(id);
  }

  setDown(id: NodeId, down: boolean): ElectionOutput {
    if (id === this.self.id || !this.sidOf.has(id)) return this.flush();
    if (!down) {
      this.down.delete(id);
      return this.flush();
    }
    this.down.add(id);
    if (this.running && this.heardAllLive()) this.fireElectionTimer('all-live');
    return this.flush();
  }

  /** Fire due timers (election timer, retry timer). */
  tick(now: number): ElectionOutput {
    if (this.electionDeadline !== undefined && now >= this.electionDeadline) {
      this.fireElectionTimer('timer');
    } else if (this.retryDeadline !== undefined && now >= this.retryDeadline && this.leaderId === undefined) {
      this.rounds += 1;
      this.sendProposalToAll(now);
      this.retryInterval *= 2;
      // Restarted from the firing, like the paper's retry-timer: a late tick does not bunch retries up.
      this.retryDeadline = now + this.retryInterval;
    }
    return this.flush();
  }

  /** Earliest time tick() has something to do, or undefined. Lets the driver set one precise timer. */
  nextDeadline(): number | undefined {
    const a = this.electionDeadline;
    // Retries stop once the instance is settled; a stale deadline would make the driver spin.
    const b = this.leaderId === undefined ? this.retryDeadline : undefined;
    if (a === undefined) return b;
    if (b === undefined) return a;
    return Math.min(a, b);
  }

  /**
   * The best proposal seen for each server this epoch (for the `elected` event), in member order.
   * Keyed by the proposed server, not the sender: a P carries the proposal its sender currently
   * backs, so a server that adopted a better proposal before broadcasting its own is absent.
   */
  proposalsSeen(): ReadonlyArray<{ id: NodeId; score: Score }> {
    const out: { id: NodeId; score: Score }[] = [];
    for (const id of this.sidOf.keys()) {
      const score = this.seen.get(id);
      if (score !== undefined) out.push({ id, score });
    }
    return out;
  }

  // ---- Algorithm 1 ----

  private onPropose(now: number, j: NodeId, e: number, p: Proposal): void {
    if (this.leaderId !== undefined) {
      // Already settled: tell j who leads (line 35).
      this.send(j, { type: 'V', epoch: this.epochNo, leader: this.leaderId });
      return;
    }
    if (this.sidOf.get(p.id) !== p.sid) return; // a proposal for a non-member (or a wrong sid)
    if (!this.started && e <= this.epochNo) return; // choice: idle, nothing to teach
    if (e === this.epochNo) this.noteSeen(p);
    if (compareProposals(this.cmp, e, p, this.epochNo, this.current) < 0) {
      // j is behind (older epoch or worse proposal): teach it.
      this.send(j, { type: 'P', epoch: this.epochNo, proposal: this.current });
    } else if (e === this.epochNo) {
      if (compareProposals(this.cmp, e, this.current, e, p) < 0) {
        this.current = p;
        this.sendProposalToAll(now);
      }
    } else {
      // e > epoch: join the newer election, with our own fresh score unless p beats it.
      this.beginEpoch(e);
      this.noteSeen(p);
      if (compareProposals(this.cmp, e, this.current, e, p) < 0) this.current = p;
      if (!this.started) {
        this.started = true;
        this.retryInterval = this.retryBaseMs;
        this.retryDeadline = now + this.retryInterval;
      }
      this.sendProposalToAll(now);
    }
    this.proposers.add(j); // after a newer epoch was joined (which clears it): j is electing
    this.startTimerIfQuorum(now, j);
  }

  private onVote(now: number, j: NodeId, e: number, l: NodeId): void {
    if (this.leaderId !== undefined && e === this.epochNo && l !== this.leaderId && !this.toldOfVote.has(j)) {
      // choice: see header. Once per sender and epoch, so two settled nodes cannot ping-pong.
      this.toldOfVote.add(j);
      this.send(j, { type: 'V', epoch: this.epochNo, leader: this.leaderId });
    }
    if (!this.started || this.leaderId !== undefined || !this.sidOf.has(l)) return; // choice: see header
    const key = `${e}\u0000${l}`;
    let voters = this.votes.get(key);
    if (voters === undefined) {
      voters = new Set();
      this.votes.set(key, voters);
    }
    voters.add(j);
    // Only the group just grown can newly qualify. l's own vote must be in it: votes for a leader
    // that crashed (and so cannot vote) are never adopted.
    if (2 * voters.size > this.n && voters.has(l)) {
      this.decide('votes', 'votes', l, e);
    } else {
      this.startTimerIfQuorum(now, j);
    }
  }

  /** start-timer?(j). */
  private startTimerIfQuorum(now: number, j: NodeId): void {
    if (this.leaderId !== undefined) return;
    this.proposalSet.add(j);
    if (this.proposalSet.size >= this.n) {
      // Heard from everybody: nothing left to wait for (the paper's "start election-timer with T+1").
      this.fireElectionTimer('all-proposals');
    } else if (this.heardAllLive()) {
      this.fireElectionTimer('all-live');
    } else if (2 * this.proposalSet.size > this.n && this.electionDeadline === undefined) {
      this.electionDeadline = now + this.timeoutMs;
    }
  }

  /** waitFor 'live': a quorum has proposed and every member not known to be down among them. */
  private heardAllLive(): boolean {
    if (this.waitFor !== 'live' || 2 * this.proposalSet.size <= this.n) return false;
    for (const id of this.sidOf.keys()) if (!this.proposers.has(id) && !this.down.has(id)) return false;
    return true;
  }

  private fireElectionTimer(reason: 'all-proposals' | 'all-live' | 'timer'): void {
    this.decide('timer', reason, this.current.id, this.epochNo);
  }

  /** The state half of start-epoch (plus a fresh own proposal); the caller then broadcasts. */
  private beginEpoch(e: number): void {
    this.epochNo = e;
    this.leaderId = undefined;
    this.current = { score: this.scoreFor(e), id: this.self.id, sid: this.self.sid };
    this.proposalSet.clear();
    this.proposers.clear();
    this.proposers.add(this.self.id);
    this.votes.clear();
    this.toldOfVote.clear();
    this.seen.clear();
    this.rounds = 1;
    this.noteSeen(this.current);
    this.electionDeadline = undefined; // choice: see header
  }

  /** send ⟨P, epoch, proposal⟩ to all: peers get a message, self-delivery is handled in place. */
  private sendProposalToAll(now: number): void {
    const msg: ElectionMessage = { type: 'P', epoch: this.epochNo, proposal: this.current };
    for (const peer of this.peers) this.send(peer, msg);
    // Our own P, delivered to ourselves: leader is ⊥ and (epoch, proposal) equals ours, so the P rule
    // reduces to start-timer?(self).
    this.startTimerIfQuorum(now, this.self.id);
  }

  private decide(
    via: ElectionDecision['via'],
    reason: ElectionEndReason,
    leader: NodeId,
    epoch: number,
  ): void {
    this.leaderId = leader;
    this.epochNo = epoch;
    this.electionDeadline = undefined;
    this.retryDeadline = undefined;
    this.decision = {
      leader,
      epoch,
      via,
      proposals: this.proposalsSeen(),
      reason,
      timeoutMs: this.timeoutMs,
      rounds: this.rounds,
      unheard: [...this.sidOf.keys()].filter((id) => !this.proposalSet.has(id)),
      down: [...this.sidOf.keys()].filter((id) => this.down.has(id)),
    };
  }

  private noteSeen(p: Proposal): void {
    const prev = this.seen.get(p.id);
    if (prev === undefined || this.cmp(this.epochNo, p.score, prev) > 0) this.seen.set(p.id, p.score);
  }

  private send(to: NodeId, msg: ElectionMessage): void {
    this.sends.push({ to, msg });
  }

  private flush(): ElectionOutput {
    const out: ElectionOutput =
      this.decision === undefined ? { sends: this.sends } : { sends: this.sends, decided: this.decision };
    this.sends = [];
    this.decision = undefined;
    return out;
  }
}
