// A node's in-memory log: the txns after its snapshot point (`base`), in zxid order. It also
// knows how to describe itself compactly (epoch ranges) and how to bring another log in line
// with it (DIFF, TRUNC + DIFF, or SNAP), which both sync directions use: leader → follower, and
// the most up-to-date follower → a new leader that lacks history.
import type { Txn } from './types.js';
import type { EpochRange, SyncPlan } from './zab-messages.js';
import { compareZxid, zxidEquals, type Zxid } from '../../vocabulary/zxid.js';
import type { StateSnapshot } from './state-snapshot.js';

/** A run of consecutive counters in one epoch among the txns held: an EpochRange that grows. */
type Run = { -readonly [K in keyof EpochRange]: EpochRange[K] };

export class TxnHistory {
  private txns: Txn[] = [];
  /**
   * The txns as runs (ranges() without the base), kept as they are appended: ranges() is on a
   * failover's path (every follower's ACKEPOCH), and walking 100k txns there held a follower's
   * event loop 15-20 ms under load (docs/benchmarks.md). Rebuilt on the rare cuts (truncate,
   * compact, reset).
   */
  private runs: Run[] = [];

  constructor(private baseZxid: Zxid) {}

  get base(): Zxid {
    return this.baseZxid;
  }

  get last(): Zxid {
    return this.txns.length > 0 ? this.txns[this.txns.length - 1]!.zxid : this.baseZxid;
  }

  get length(): number {
    return this.txns.length;
  }

  /**
   * Appends the next txn. A log holds every txn of each epoch it has from its first on, without a
   * hole: a leader numbers its epoch's txns 1, 2, 3… and a sync or a PROPOSAL only ever continues
   * a log. A txn that does not follow is refused, loudly: appended, the hole would be a committed
   * write this member never applies while it applies the ones after it (the fence of the final
   * read included), and no sync would see it, since a sync compares logs by their last txns.
   */
  append(txn: Txn): void {
    if (compareZxid(txn.zxid, this.last) <= 0) {
      throw new Error(
        `log append out of order: ${txn.zxid.epoch}:${txn.zxid.counter} after ${this.last.epoch}:${this.last.counter}`,
      );
    }
    if (!follows(this.last, txn.zxid)) {
      throw new Error(
        `log append with a hole: ${txn.zxid.epoch}:${txn.zxid.counter} after ${this.last.epoch}:${this.last.counter}`,
      );
    }
    this.txns.push(txn);
    this.extendRuns(txn.zxid);
  }

  private extendRuns(z: Zxid): void {
    const r = this.runs[this.runs.length - 1];
    if (r !== undefined && z.epoch === r.epoch && z.counter === r.last + 1) r.last = z.counter;
    else this.runs.push({ epoch: z.epoch, first: z.counter, last: z.counter });
  }

  private rebuildRuns(): void {
    this.runs = [];
    for (const t of this.txns) this.extendRuns(t.zxid);
  }

  /** Index of the first txn with zxid > z. */
  private upperBound(z: Zxid): number {
    let lo = 0;
    let hi = this.txns.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareZxid(this.txns[mid]!.zxid, z) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** True when z is the base or a logged txn. */
  has(z: Zxid): boolean {
    if (zxidEquals(z, this.baseZxid)) return true;
    const i = this.upperBound(z) - 1;
    return i >= 0 && zxidEquals(this.txns[i]!.zxid, z);
  }

  /** Txns with zxid in (from, to]; `to` defaults to the end. */
  /** The txns after `from` up to `to` (default: the last), at most `limit` of them. */
  slice(from: Zxid, to?: Zxid, limit = Infinity): Txn[] {
    const start = this.upperBound(from);
    const end = to ? this.upperBound(to) : this.txns.length;
    return this.txns.slice(start, Math.min(end, start + limit));
  }

  get(z: Zxid): Txn | undefined {
    const i = this.upperBound(z) - 1;
    const t = this.txns[i];
    return t && zxidEquals(t.zxid, z) ? t : undefined;
  }

  truncateAfter(z: Zxid): void {
    if (compareZxid(z, this.baseZxid) < 0) throw new Error('cannot truncate below the snapshot');
    this.txns.length = this.upperBound(z);
    this.rebuildRuns();
  }

  /** Forget txns up to z (they are in a snapshot now). */
  compactTo(z: Zxid): void {
    const i = this.upperBound(z);
    this.txns = this.txns.slice(i);
    if (compareZxid(z, this.baseZxid) > 0) this.baseZxid = z;
    this.rebuildRuns();
  }

  /**
   * Forget the oldest txns beyond the newest `keep`, but none after `notAfter` (what is not yet
   * applied stays). Cut in steps of a quarter of `keep`, so that the copy a cut makes costs a
   * few element moves per append. A log further behind than what is kept then syncs by SNAP,
   * the path of a log that shares nothing with this one (planSync). Returns whether it cut.
   */
  keepNewest(keep: number, notAfter: Zxid): boolean {
    if (this.txns.length <= keep + Math.max(1, keep >> 2)) return false;
    const cut = this.txns[this.txns.length - keep - 1]!.zxid;
    const to = compareZxid(cut, notAfter) <= 0 ? cut : notAfter;
    if (compareZxid(to, this.baseZxid) <= 0) return false;
    this.compactTo(to);
    return true;
  }

  /** Start over from a snapshot at z. */
  reset(z: Zxid): void {
    this.txns = [];
    this.runs = [];
    this.baseZxid = z;
  }

  /**
   * The log as runs of consecutive counters per epoch, the base included. Two logs that hold the
   * same zxid agree on everything before it (one leader per epoch), so these runs are enough to
   * find the common prefix of two logs.
   */
  ranges(): EpochRange[] {
    const base = { epoch: this.baseZxid.epoch, first: this.baseZxid.counter, last: this.baseZxid.counter };
    const out: EpochRange[] = [base];
    for (const r of this.runs) {
      // The first run continues the base when its counters follow on in the same epoch.
      if (out.length === 1 && r.epoch === base.epoch && r.first === base.last + 1) base.last = r.last;
      else out.push({ epoch: r.epoch, first: r.first, last: r.last });
    }
    return out;
  }

  /**
   * The newest zxid held by both this log and the one described by (ranges, last), or undefined
   * when they share nothing this log still holds (its history is only in its snapshot).
   */
  commonPoint(ranges: readonly EpochRange[], last: Zxid): Zxid | undefined {
    let best: Zxid | undefined;
    const consider = (z: Zxid): void => {
      if (compareZxid(z, last) <= 0 && (!best || compareZxid(z, best) > 0)) best = z;
    };
    // Both bases are committed state; a snapshot point we are past is on the other log's path too.
    const otherBase = ranges[0];
    if (otherBase && compareZxid(this.baseZxid, { epoch: otherBase.epoch, counter: otherBase.first }) <= 0) {
      // The other log starts at or after our base: our base is in its (snapshotted) past.
      consider(this.baseZxid);
    }
    for (const r of ranges) {
      if (
        r.epoch === this.baseZxid.epoch &&
        this.baseZxid.counter >= r.first &&
        this.baseZxid.counter <= r.last
      ) {
        consider(this.baseZxid);
      }
      // Our newest txn in [(epoch, first), (epoch, last)]; our runs within an epoch are gap-free
      // after the base, so if it exists everything from the range start up to it is shared.
      const hi = this.upperBound({ epoch: r.epoch, counter: r.last }) - 1;
      const t = this.txns[hi];
      if (t && t.zxid.epoch === r.epoch && t.zxid.counter >= r.first) consider(t.zxid);
    }
    return best;
  }

  /**
   * How to bring the log described by (ranges, last) in line with this one. `snapshot` is called
   * only when a SNAP is needed and must return this node's state at some zxid ≥ base (with the
   * txns after that zxid following in the plan).
   */
  planSync(
    ranges: readonly EpochRange[],
    last: Zxid,
    snapshot: () => StateSnapshot,
    diffLimit = Infinity,
  ): SyncPlan {
    const common = this.commonPoint(ranges, last);
    const otherBase = ranges[0];
    const otherBaseZxid = otherBase ? { epoch: otherBase.epoch, counter: otherBase.first } : undefined;
    // Past `diffLimit` txns behind, a snapshot rather than the txns (ZooKeeper 3.4 did so past the
    // 500 proposals it keeps in memory): the same path as a log that shares nothing with ours.
    const tooOld =
      common === undefined ||
      compareZxid(common, this.baseZxid) < 0 ||
      (otherBaseZxid !== undefined && compareZxid(common, otherBaseZxid) < 0) ||
      this.txns.length - this.upperBound(common) > diffLimit;
    if (tooOld) {
      const snap = snapshot();
      return { snapshot: snap, txns: this.slice(snap.zxid) };
    }
    const txns = this.slice(common);
    return zxidEquals(common, last) ? { txns } : { truncateTo: common, txns };
  }
}

/** Whether `next` may come right after `last` in a log: the next of its epoch, or a newer epoch's first. */
function follows(last: Zxid, next: Zxid): boolean {
  return next.epoch === last.epoch ? next.counter === last.counter + 1 : next.counter === 1;
}
