// The safety properties the simulator checks after every event:
// 1. at most one node serves as leader in any epoch;
// 2. every write acknowledged to a client is, at the same zxid, in the history of every leader
//    that serves after the acknowledgement in its epoch or a newer one (checked when each leader
//    starts serving, and at the end). A leader of an older epoch can still come to serve late, on
//    acknowledgements that waited in a cut or behind its own pause while a quorum moved on (as a
//    ZooKeeper leader can): it commits nothing more, since that quorum no longer answers its
//    epoch, and it steps down within syncLimit ticks; until then its reads are a deposed leader's;
// 3. all nodes apply one and the same sequence of txns (their committed logs are prefixes of one
//    another), checked txn by txn as each node applies, including after snapshots and restarts;
// 4. the same request is never acknowledged at two different zxids (retries apply once);
// 5. no node starts more than a set number of elections in any second (a node that cannot join
//    must back off, not spin), and no core asks for a tick at one instant over and over.
// Liveness (one leader, every live node rejoined it, a write committed) is checked by the
// simulator once faults stop.
import type { ApplyResult } from '../core/data-tree.js';
import { requestKey } from '../core/data-tree.js';
import type { NodeCore } from '../core/node-core.js';
import type { NodeId, Txn } from '../core/types.js';
import { compareZxid, formatZxid, zxidEquals, type Zxid } from '../../vocabulary/zxid.js';

export class InvariantChecker {
  readonly violations: string[] = [];
  private readonly leaderOfEpoch = new Map<number, NodeId>();
  /** Leaders (node@epoch) already checked against the acknowledged writes. */
  private readonly verifiedLeaders = new Set<string>();
  /** Every acknowledged write: request key → zxid, in acknowledgement order. */
  private readonly acks = new Map<string, Zxid>();
  /** The one global sequence of applied txns, and where each zxid stands in it. */
  private readonly sequence: { zxid: Zxid; key: string }[] = [];
  private readonly position = new Map<string, number>();
  /** Per node: index in `sequence` of the next txn it must apply. */
  private readonly next = new Map<NodeId, number>();
  /** The newest state each member could answer a read from so far. */
  private readonly readFrom = new Map<NodeId, Zxid>();
  private readonly timerSpins = new Map<NodeId, { at: number; count: number }>();
  /** Per node: start times of its elections in the last second. */
  private readonly electionStarts = new Map<NodeId, number[]>();
  /** The most elections any node started within one second, over the whole run. */
  maxElectionsInASecond = 0;
  /** The serving leaders' commit point, and since when it has stood (for commitHeard). */
  private leaderCommit: { leader: NodeId; zxid: Zxid; since: number } | undefined;

  constructor(
    nodes: readonly NodeId[],
    private readonly maxElectionsPerSecond: number,
  ) {
    for (const id of nodes) this.next.set(id, 0);
  }

  electionStarted(node: NodeId, now: number): void {
    const recent = (this.electionStarts.get(node) ?? []).filter((t) => now - t < 1000);
    recent.push(now);
    this.electionStarts.set(node, recent);
    this.maxElectionsInASecond = Math.max(this.maxElectionsInASecond, recent.length);
    if (recent.length === this.maxElectionsPerSecond + 1)
      this.fail(
        `election rate: ${node} started ${recent.length} elections within one second (at most ${this.maxElectionsPerSecond})`,
      );
  }

  /** The simulation's clock must never go back: an event put in the past is the simulator's bug. */
  eventAt(at: number, now: number): void {
    if (at < now) this.fail(`simulation clock: an event at ${at} after ${now}`);
  }

  get leadersSeen(): number {
    return this.leaderOfEpoch.size;
  }

  private fail(msg: string): void {
    if (this.violations.length < 5) this.violations.push(msg);
  }

  applied(node: NodeId, txn: Txn, _r: ApplyResult): void {
    const key = requestKey(txn.clientId, txn.requestId);
    const i = this.next.get(node) ?? 0;
    const expected = this.sequence[i];
    if (!expected) {
      this.sequence.push({ zxid: txn.zxid, key });
      this.position.set(formatZxid(txn.zxid), i);
    } else if (!zxidEquals(expected.zxid, txn.zxid) || expected.key !== key) {
      this.fail(
        `prefix: ${node} applied ${formatZxid(txn.zxid)} (${key}) at position ${i} where others applied ${formatZxid(expected.zxid)} (${expected.key})`,
      );
    }
    this.next.set(node, i + 1);
  }

  /** The node's state is now a snapshot at `zxid`: it continues right after that point. */
  installed(node: NodeId, zxid: Zxid): void {
    if (zxid.epoch === 0 && zxid.counter === 0) {
      this.next.set(node, 0);
      return;
    }
    const i = this.position.get(formatZxid(zxid));
    if (i === undefined)
      this.fail(`prefix: ${node} installed a snapshot at ${formatZxid(zxid)}, which no node has applied`);
    else this.next.set(node, i + 1);
  }

  restarted(node: NodeId, snapshot: Zxid | undefined): void {
    this.installed(node, snapshot ?? { epoch: 0, counter: 0 });
  }

  acked(key: string, zxid: Zxid, _now: number): void {
    const earlier = this.acks.get(key);
    if (earlier && !zxidEquals(earlier, zxid)) {
      this.fail(
        `exactly-once: request ${JSON.stringify(key)} acknowledged at ${formatZxid(earlier)} and again at ${formatZxid(zxid)}`,
      );
    }
    const pos = this.position.get(formatZxid(zxid));
    if (pos === undefined || this.sequence[pos]!.key !== key) {
      this.fail(
        `ack: ${JSON.stringify(key)} acknowledged at ${formatZxid(zxid)}, which is not that request in the applied sequence`,
      );
    }
    this.acks.set(key, zxid);
  }

  /** A core whose timer keeps firing at one instant without moving on is spinning: a bug. */
  timerFired(node: NodeId, now: number): void {
    const s = this.timerSpins.get(node);
    if (s && s.at === now) {
      s.count += 1;
      if (s.count === 1000) this.fail(`timer spin: ${node} asked for a tick at ${now} a thousand times`);
    } else {
      this.timerSpins.set(node, { at: now, count: 1 });
    }
  }

  afterStep(now: number, cores: ReadonlyMap<NodeId, NodeCore>): void {
    for (const [id, core] of cores) this.readsForward(id, core);
    for (const [id, core] of cores) {
      const epoch = core.servingLeaderEpoch;
      if (epoch === undefined) continue;
      const c = this.leaderCommit;
      if (!c || c.leader !== id || !zxidEquals(c.zxid, core.commitZxid))
        this.leaderCommit = { leader: id, zxid: core.commitZxid, since: now };
      const holder = this.leaderOfEpoch.get(epoch);
      if (holder === undefined) this.leaderOfEpoch.set(epoch, id);
      else if (holder !== id)
        this.fail(`one leader per epoch: ${holder} and ${id} both served as leader of epoch ${epoch}`);
      const tag = `${id}@${epoch}`;
      if (!this.verifiedLeaders.has(tag)) {
        this.verifiedLeaders.add(tag);
        this.checkAcksIn(id, core);
      }
    }
  }

  /**
   * Reads never go back in time on one member, across its restarts: whatever a client's READ would
   * be answered from now (core.clientReadable) is at least as new as anything it could be answered
   * from before. Checked after every step, so at every moment a read could arrive.
   */
  private readsForward(id: NodeId, core: NodeCore): void {
    const z = core.clientReadable;
    if (z === undefined) return;
    const before = this.readFrom.get(id);
    if (before && compareZxid(z, before) < 0)
      this.fail(
        `reads go forward: ${id} would answer a read from ${formatZxid(z)} after answering from ${formatZxid(before)}`,
      );
    else this.readFrom.set(id, z);
  }

  /**
   * Liveness of what followers know: once `leader`'s commit point has stood for `withinMs`, every
   * node following it has heard of it (a follower with no client waiting hears of it from the next
   * PROPOSAL or PING, node-core.ts announceCommit). The caller says when all follow it.
   */
  commitHeard(now: number, leader: NodeId, cores: ReadonlyMap<NodeId, NodeCore>, withinMs: number): void {
    const c = this.leaderCommit;
    if (!c || c.leader !== leader || now - c.since < withinMs) return;
    for (const [id, core] of cores)
      if (id !== leader && compareZxid(core.commitZxid, c.zxid) < 0)
        this.fail(
          `commit heard: ${id} knows ${formatZxid(core.commitZxid)} committed, ${Math.round(now - c.since)} ms after leader ${leader} committed ${formatZxid(c.zxid)} (within ${withinMs} ms)`,
        );
  }

  finalCheck(cores: ReadonlyMap<NodeId, NodeCore>): void {
    for (const [id, core] of cores) if (core.servingLeaderEpoch !== undefined) this.checkAcksIn(id, core);
  }

  /** Every acknowledged write must be in this leader's history at the same zxid. */
  private checkAcksIn(id: NodeId, core: NodeCore): void {
    const logged = new Map<string, string>();
    for (const t of core.loggedTxns()) logged.set(formatZxid(t.zxid), requestKey(t.clientId, t.requestId));
    const base = core.logBase;
    for (const [key, zxid] of this.acks) {
      if (zxid.epoch > core.epoch) continue; // acknowledged in an epoch that deposed this leader
      if (compareZxid(zxid, base) <= 0) {
        // Compacted into the snapshot: the position check (3) shows the leader applied it in order.
        continue;
      }
      const there = logged.get(formatZxid(zxid));
      if (there !== key) {
        this.fail(
          `lost write: ${JSON.stringify(key)} acknowledged at ${formatZxid(zxid)} is ${there ? `replaced by ${JSON.stringify(there)}` : 'missing'} in the history of leader ${id} (epoch ${core.epoch}, last ${formatZxid(core.lastZxid)})`,
        );
        return;
      }
    }
  }
}
