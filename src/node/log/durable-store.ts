// src/node/log/: a node's durable storage: the segmented, checksummed transaction log, the epochs file
// and snapshots on disk, written in group-committed flush rounds, and the recovery from them at start.
//
// A node's durable storage: applies the core's PersistOps to a segmented transaction log, an epochs
// file and snapshots, and rebuilds the core's RecoveredState from them at start.
//
// apply() is synchronous and does no I/O: it checks each op, updates the in-memory index of the
// log and queues the disk actions (appends are encoded into one buffer per op). flush() performs
// everything queued in one round (one writev per segment, made durable by O_DSYNC) and
// shares that round among all concurrent callers (group commit).
import { performance } from 'node:perf_hooks';
import type { EncodedSnapshot } from '../core/state-snapshot.js';
import type { PersistOp, RecoveredState } from '../core/core-types.js';
import type { Txn } from '../core/types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import { compareZxid, formatZxid, maxZxid } from '../../vocabulary/zxid.js';
import type { DiskAction } from './disk-actions.js';
import { DiskExecutor } from './disk-actions.js';
import type { Epochs } from './epoch-file.js';
import { encodeEpochs } from './epoch-file.js';
import { snapshotName } from './file-names.js';
import { encodeTxns } from './record-codec.js';
import type { RecoveredLayout, RecoveryReport } from './recovery.js';
import { recover } from './recovery.js';
import { SegmentIndex } from './segment-index.js';
import type { SnapshotMeta } from './snapshot-file.js';

export type { RecoveryReport } from './recovery.js';
export { LogCorruptionError } from './recovery.js';

export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

export interface StoreOptions {
  readonly dir: string;
  /** Durable (O_DSYNC writes, synced truncations and directories) before flush() resolves (default true). Off only where a power cut loses the disk anyway (tmpfs). */
  readonly fsync?: boolean;
  /** A segment that has reached this size is closed and appends go to a new one (default 64 MiB). */
  readonly segmentBytes?: number;
  /** Quiet this long, a round is written inline (default QUIET_MS; see RoundWriting). */
  readonly quietMs?: number;
}

/**
 * Who writes a round's records: the thread that flushes (inline), libuv's pool, or the thread when
 * the store has been quiet for QUIET_MS and the pool otherwise (disk-actions.ts says why).
 */
export type RoundWriting = 'inline' | 'pool' | 'inline when quiet';

/**
 * A round that follows the last by less than this goes through the pool. At rest (a follower of a
 * cluster taking 50 writes/s has a round every 20 ms) writing inline saves two wake-ups a round;
 * under load the pool's threads are awake anyway, and an inline write would hold the loop while the
 * disk, queued by every node's writes, takes its time: a follower inline under `bench node` made
 * kill → serving 6 ms slower in the median (docs/benchmarks.md).
 */
export const QUIET_MS = 5;

interface Waiter {
  readonly target: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class DurableStore {
  private readonly executor: DiskExecutor;
  private readonly segmentBytes: number;
  private readonly quietMs: number;
  private segments: SegmentIndex[];
  private snapshot: SnapshotMeta | undefined;
  /** Snapshot files on disk (or queued to be) other than ones already queued for deletion. */
  private snapshotFiles: string[];
  private nextSeq: number;
  private nextGeneration: number;
  /** Highest zxid the log or snapshot holds: every append must go past it. */
  private last: Zxid | undefined;

  private queue: DiskAction[] = [];
  private applied = 0;
  private durable = 0;
  private rounds = 0;
  private writing: RoundWriting = 'inline when quiet';
  private lastRoundEnd = -Infinity;
  private waiters: Waiter[] = [];
  private running: Promise<void> | undefined;
  private failure: unknown;
  private closed = false;
  private closing: Promise<void> | undefined;

  private constructor(opts: StoreOptions, layout: RecoveredLayout) {
    this.executor = new DiskExecutor(opts.dir, opts.fsync ?? true);
    this.segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.quietMs = opts.quietMs ?? QUIET_MS;
    this.segments = layout.segments;
    this.snapshot = layout.snapshot;
    this.snapshotFiles = layout.snapshot ? [snapshotName(layout.snapshot.zxid)] : [];
    this.nextSeq = layout.nextSeq;
    this.nextGeneration = layout.nextGeneration;
    this.last = this.computeLast();
  }

  static async open(
    opts: StoreOptions,
  ): Promise<{ store: DurableStore; recovered: RecoveredState; report: RecoveryReport }> {
    const layout = await recover(opts.dir, opts.fsync ?? true);
    return { store: new DurableStore(opts, layout), recovered: layout.state, report: layout.report };
  }

  /** Flush rounds performed (each one O_DSYNC writev per segment touched): group commit shares them. */
  get flushRounds(): number {
    return this.rounds;
  }

  /** Bytes written to the data directory by this store (log records, snapshots, epochs). */
  get bytesWritten(): number {
    return this.executor.bytesWritten;
  }

  /**
   * Apply ops in order (append / truncate / epochs / snapshot). Buffers; nothing is durable until
   * flush(). Throws on an op that would break the log's invariants (an append not past the last
   * zxid, a local snapshot older than the current one): those are bugs in the caller, and the ops
   * before the bad one stay applied. A snapshot is encoded (a chunk at a time) during the flush.
   */
  apply(ops: readonly PersistOp[]): void {
    this.checkUsable();
    for (const op of ops) {
      switch (op.op) {
        case 'append':
          this.append(op.txns);
          break;
        case 'truncate':
          this.truncate(op.after);
          break;
        case 'epochs':
          this.setEpochs({
            acceptedEpoch: op.acceptedEpoch,
            currentEpoch: op.currentEpoch,
            ...(op.acceptedLeader !== undefined ? { acceptedLeader: op.acceptedLeader } : {}),
          });
          break;
        case 'snapshot':
          this.recordSnapshot(op.snapshot, op.replacesLog);
          break;
      }
      this.applied++;
    }
  }

  /**
   * Write everything buffered, durably when fsync is on (O_DSYNC). Group commit:
   * concurrent callers share one flush; resolves when all ops applied before the call are durable,
   * except a local snapshot (replacesLog false), which is written beside the rounds (see
   * DiskExecutor.background): nothing depends on it being durable, since the log it compacts stays
   * until it is. snapshotsWritten() waits for it; close() does too.
   */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('DurableStore is closed'));
    const target = this.applied;
    if (this.durable >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      this.running ??= this.startRounds();
    });
  }

  /** Resolves once every snapshot applied so far is on disk (after flush() of the ops before). */
  async snapshotsWritten(): Promise<void> {
    await this.flush();
    try {
      await this.executor.settleBackground();
    } catch (err) {
      // As for a failed round: the disk state is unknown, so no further work.
      this.failure ??= err;
      throw err;
    }
  }

  /**
   * Flush what is buffered, then close the files. apply() fails from the moment close() is called,
   * flush() once it has finished. Rejects if that last flush fails (the files are closed anyway).
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    try {
      if (this.failure === undefined) await this.flush();
    } finally {
      this.closed = true;
      await this.running;
      await this.executor.closeAll();
    }
  }

  private checkUsable(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.closing) throw new Error('DurableStore is closed');
  }

  /** How rounds from now on are written (disk-actions.ts): by default inline when quiet. */
  writeRounds(how: RoundWriting): void {
    this.writing = how;
  }

  /**
   * Starts the rounds for a flush. Inline, a round blocks the thread while it writes: started in
   * the check phase, after every I/O callback of this turn has applied its ops, it takes all of them
   * in one write. Through the pool it starts at once, and what comes meanwhile joins the next round.
   */
  private startRounds(): Promise<void> {
    const inline =
      this.writing === 'inline' ||
      (this.writing === 'inline when quiet' && performance.now() - this.lastRoundEnd >= this.quietMs);
    if (!inline) return this.drain(false);
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain(true));
  }

  /** Flush rounds until no caller is waiting; each round takes everything queued when it starts. */
  private async drain(inline: boolean): Promise<void> {
    try {
      while (this.waiters.length > 0) {
        const actions = this.queue;
        const upTo = this.applied;
        this.queue = [];
        await this.executor.run(actions, inline);
        this.lastRoundEnd = performance.now();
        this.rounds++;
        this.durable = upTo;
        const still: Waiter[] = [];
        for (const w of this.waiters) {
          if (w.target <= upTo) w.resolve();
          else still.push(w);
        }
        this.waiters = still;
      }
    } catch (err) {
      // The disk state is now unknown: refuse all further work rather than guess.
      this.failure = err;
      for (const w of this.waiters) w.reject(err);
      this.waiters = [];
    } finally {
      this.running = undefined;
    }
  }

  private get active(): SegmentIndex {
    return this.segments[this.segments.length - 1]!;
  }

  private computeLast(): Zxid | undefined {
    let last: Zxid | undefined;
    for (let i = this.segments.length - 1; i >= 0 && !last; i--) last = this.segments[i]!.lastZxid();
    const snap = this.snapshot?.zxid;
    if (!last) return snap;
    return snap ? maxZxid(last, snap) : last;
  }

  private roll(): SegmentIndex {
    const next = new SegmentIndex(this.nextSeq++);
    this.queue.push({ kind: 'roll', fromSeq: this.active.seq, seq: next.seq });
    return next;
  }

  private append(txns: readonly Txn[]): void {
    if (txns.length === 0) return;
    let prev = this.last;
    for (const t of txns) {
      if (prev && compareZxid(t.zxid, prev) <= 0) {
        throw new Error(`append out of order: ${formatZxid(t.zxid)} does not follow ${formatZxid(prev)}`);
      }
      prev = t.zxid;
    }
    const { buffer, offsets } = encodeTxns(txns);
    if (this.active.count > 0 && this.active.size >= this.segmentBytes) this.segments.push(this.roll());
    const seg = this.active;
    const position = seg.size;
    for (let i = 0; i < txns.length; i++) {
      const end = i + 1 < offsets.length ? offsets[i + 1]! : buffer.length;
      seg.push(txns[i]!.zxid, end - offsets[i]!);
    }
    this.last = prev;
    const lastRecordOffset = offsets[offsets.length - 1]!;
    const tail = this.queue[this.queue.length - 1];
    if (tail?.kind === 'write' && tail.seq === seg.seq && tail.position + tail.bytes === position) {
      tail.chunks.push(buffer);
      tail.bytes += buffer.length;
      tail.lastRecordOffset = lastRecordOffset;
    } else {
      this.queue.push({
        kind: 'write',
        seq: seg.seq,
        position,
        chunks: [buffer],
        lastRecordOffset,
        bytes: buffer.length,
      });
    }
  }

  private truncate(after: Zxid): void {
    // The segment holding the first record past `after`: walk back from the newest non-empty one.
    let i = -1;
    for (let j = this.segments.length - 1; j >= 0; j--) {
      const last = this.segments[j]!.lastZxid();
      if (last === undefined) continue;
      if (compareZxid(last, after) <= 0) break;
      i = j;
    }
    if (i < 0) return; // nothing logged after `after`
    const seg = this.segments[i]!;
    const keep = seg.firstAfter(after);
    const deleteSeqs = this.segments.slice(i + 1).map((s) => s.seq);
    this.segments.length = i + 1;
    const length = seg.cut(keep);
    // The deleted names are free again: keeping segment numbers contiguous is what recovery checks.
    if (deleteSeqs.length > 0) this.nextSeq = seg.seq + 1;
    this.queue.push({ kind: 'truncate', seq: seg.seq, length, deleteSeqs });
    this.last = this.computeLast();
  }

  private setEpochs(epochs: Epochs): void {
    encodeEpochs(epochs); // throws now, not in the middle of a flush, on a value the file cannot hold
    const tail = this.queue[this.queue.length - 1];
    // Only the latest of consecutive epoch changes needs writing.
    if (tail?.kind === 'epochs') this.queue[this.queue.length - 1] = { kind: 'epochs', epochs };
    else this.queue.push({ kind: 'epochs', epochs });
  }

  private recordSnapshot(snapshot: EncodedSnapshot, replacesLog: boolean): void {
    const zxid = snapshot.zxid;
    for (const v of [zxid.epoch, zxid.counter]) {
      if (!Number.isInteger(v) || v < 0 || v > 0xffffffff)
        throw new RangeError(`snapshot zxid out of range: ${formatZxid(zxid)}`);
    }
    if (!replacesLog && this.snapshot && compareZxid(zxid, this.snapshot.zxid) < 0) {
      throw new Error(
        `local snapshot at ${formatZxid(zxid)} is older than the current one at ${formatZxid(this.snapshot.zxid)}`,
      );
    }
    const fresh = this.roll();
    // The log after the snapshot starts at the first segment still holding a txn past `zxid`.
    let k = replacesLog ? this.segments.length : 0;
    while (k < this.segments.length && compareZxid(this.segments[k]!.lastZxid() ?? zxid, zxid) <= 0) k++;
    const kept = this.segments.slice(k);
    const deleteSeqs = this.segments.slice(0, k).map((s) => s.seq);
    const meta: SnapshotMeta = {
      zxid,
      firstSeq: kept[0]?.seq ?? fresh.seq,
      generation: this.nextGeneration++,
      replacesLog,
    };
    const name = snapshotName(zxid);
    const deleteSnapshots = this.snapshotFiles.filter((n) => n !== name);
    this.queue.push({ kind: 'snapshot', meta, snapshot, deleteSeqs, deleteSnapshots });
    this.segments = [...kept, fresh];
    this.snapshot = meta;
    this.snapshotFiles = [name];
    this.last = this.computeLast();
  }
}
