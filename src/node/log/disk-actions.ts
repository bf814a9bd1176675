// The physical steps a flush round performs, in the order the ops were applied. DurableStore.apply()
// turns ops into these at once (updating its in-memory index), so a flush only does I/O.
import type { EncodedSnapshot } from '../core/state-snapshot.js';
import type { FileHandle } from 'node:fs/promises';
import { constants, writevSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Epochs } from './epoch-file.js';
import { EpochsFile } from './epoch-file.js';
import { segmentName } from './file-names.js';
import { fsyncDir, unlinkIfExists } from './fs-helpers.js';
import { markSyncPoint } from './record-codec.js';
import type { SnapshotMeta } from './snapshot-file.js';
import { writeSnapshot } from './snapshot-file.js';

export type DiskAction =
  /** Write encoded records at `position` of segment `seq`; one writev for all chunks. */
  | {
      readonly kind: 'write';
      readonly seq: number;
      readonly position: number;
      readonly chunks: Buffer[];
      /** Offset, inside the last chunk, of its last record (gets the sync-point flag). */
      lastRecordOffset: number;
      bytes: number;
    }
  /** Start segment `seq`; `fromSeq` stops receiving appends (synced first unless it is being discarded). */
  | { readonly kind: 'roll'; readonly fromSeq: number; readonly seq: number }
  /** Delete segments `deleteSeqs` (newest first), then cut segment `seq` to `length` bytes. */
  | {
      readonly kind: 'truncate';
      readonly seq: number;
      readonly length: number;
      readonly deleteSeqs: readonly number[];
    }
  | { readonly kind: 'epochs'; readonly epochs: Epochs }
  /** Write a snapshot; once it is durable, delete the segments and snapshot files it makes obsolete. */
  | {
      readonly kind: 'snapshot';
      readonly meta: SnapshotMeta;
      readonly snapshot: EncodedSnapshot;
      readonly deleteSeqs: readonly number[];
      readonly deleteSnapshots: readonly string[];
    };

/**
 * Mark the last record written to a segment before each point where that segment is synced (a
 * roll, a truncate, the end of the round). Recovery relies on every such flag being a true sync
 * point, so a write followed by another write to the same segment with no sync between is not marked.
 */
function markSyncPoints(actions: readonly DiskAction[]): void {
  const pending = new Map<number, DiskAction & { kind: 'write' }>();
  const mark = (seq: number): void => {
    const w = pending.get(seq);
    if (w) markSyncPoint(w.chunks[w.chunks.length - 1]!, w.lastRecordOffset);
    pending.delete(seq);
  };
  for (const a of actions) {
    if (a.kind === 'write') pending.set(a.seq, a);
    else if (a.kind === 'roll') mark(a.fromSeq);
    else if (a.kind === 'truncate') mark(a.seq);
  }
  for (const seq of [...pending.keys()]) mark(seq);
}

// With fsync on, segments are opened O_DSYNC: a write returns once its data is on disk, as a write
// followed by fdatasync would, but in one system call instead of two, and a round is usually one
// write. On the 2-core machine the nodes' CPU per write went from 1,138-1,205
// to 1,032-1,175 µs (bench cost, docs/benchmarks.md). Truncation is not a write and is still synced.
const SEGMENT_FLAGS = constants.O_RDWR;
const NEW_SEGMENT_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL;

// With fsync on, a segment's file is kept zero-filled ahead of its records. An O_DSYNC write that
// grows a file must make its new size durable too: on ext4 that is a journal commit per write.
// Over blocks already written (the zeros) a write changes nothing fdatasync keeps but the data, so
// it is the data's write alone. On the 2-core VM's ext4 (`node scripts/dsync-probe.js`, 2,000
// O_DSYNC writes of 1,100 bytes, six rounds): 260-355 µs a write growing the file against 178-248
// over zeros; 114-155 µs of the writer's CPU against 78-109; 2.6-3.1 context switches against
// 1.9-2.0. The zeros go out in the same writev as the records that cross into them,
// ZERO_AHEAD_BYTES at a time (one O_DSYNC write of 1 MiB of zeros took 1.4-2.4 ms there, of 4 MiB
// 22 ms), and recovery reads a run of zeros after the last record as the log's end
// (segment-scan.ts). ZooKeeper pads its log files for the same reason.
export const ZERO_AHEAD_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(ZERO_AHEAD_BYTES);

// A round's records may be written by the event loop's own thread (writevSync), blocking it for
// the O_DSYNC write (~0.2 ms over zeros here), instead of by libuv's thread pool. Through the pool
// each round wakes a pool thread and then the loop again (an eventfd) when it is done: two wake-ups
// of sleeping threads per round, the dearest thing a node does on this VM at rest (a follower at 50
// writes/s woke its loop ~210 times a second and its pool threads ~230, docs/benchmarks.md). The
// pool lets the loop work while the disk writes, which a busy node needs: the store chooses by how
// long it has been quiet (durable-store.ts QUIET_MS). Inline, it starts a round only once the
// turn's I/O is read, so one write still serves every message of the turn.

/** Performs flush rounds for one data directory; owns the open segment file handles. */
export class DiskExecutor {
  bytesWritten = 0;
  private readonly handles = new Map<number, FileHandle>();
  /** Per open segment, its file's size: where the zeros written ahead of its records end. */
  private readonly fileEnds = new Map<number, number>();
  /**
   * A local snapshot being written beside the rounds: it only compacts the log (the segments it
   * replaces stay until it is durable, so a crash meanwhile recovers from the older snapshot and
   * the whole log), and writing hundreds of MB must not hold up the appends that clients wait for.
   */
  private background: Promise<void> | undefined;
  private backgroundError: { readonly err: unknown } | undefined;

  private readonly syncFlag: number;
  private readonly epochs: EpochsFile;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
  ) {
    this.syncFlag = fsync ? constants.O_DSYNC : 0;
    this.epochs = new EpochsFile(dir, fsync);
  }

  /**
   * Perform `actions` in order; with fsync on, all of it is durable when this resolves. `inline`:
   * the records are written by the calling thread (see the note above), else by libuv's pool.
   */
  async run(actions: readonly DiskAction[], inline: boolean): Promise<void> {
    this.throwBackgroundError();
    markSyncPoints(actions);
    for (const a of actions) {
      switch (a.kind) {
        case 'write': {
          const h = await this.handle(a.seq);
          const pad = await this.zerosAhead(a.seq, h, a.position + a.bytes);
          const chunks = pad > 0 ? [...a.chunks, ZEROS.subarray(0, pad)] : a.chunks;
          const bytesWritten = inline
            ? writevSync(h.fd, chunks, a.position)
            : (await h.writev(chunks, a.position)).bytesWritten;
          if (bytesWritten !== a.bytes + pad) {
            throw new Error(`short write to ${this.path(a.seq)}: ${bytesWritten} of ${a.bytes + pad} bytes`);
          }
          if (pad > 0) this.fileEnds.set(a.seq, a.position + bytesWritten);
          this.bytesWritten += bytesWritten;
          break;
        }
        case 'roll': {
          // Nothing to sync in the segment left behind: with fsync on its writes were O_DSYNC.
          await this.closeHandle(a.fromSeq);
          // O_EXCL: a segment name is never live twice; an existing file means a bookkeeping bug.
          this.handles.set(a.seq, await open(this.path(a.seq), NEW_SEGMENT_FLAGS | this.syncFlag, 0o644));
          this.fileEnds.set(a.seq, 0);
          if (this.fsync) await fsyncDir(this.dir);
          break;
        }
        case 'truncate': {
          // Deletions stay in order with a snapshot's.
          await this.settleBackground();
          // Newest first: a crash part-way leaves a prefix of the old log, never a log with a hole.
          for (const seq of [...a.deleteSeqs].sort((x, y) => y - x)) {
            await this.closeHandle(seq);
            await unlink(this.path(seq));
          }
          if (this.fsync && a.deleteSeqs.length > 0) await fsyncDir(this.dir);
          const h = await this.handle(a.seq);
          await h.truncate(a.length);
          this.fileEnds.set(a.seq, a.length);
          // Synced before anything is written over the cut, so a power cut cannot leave new
          // records followed by remnants of the old ones.
          if (this.fsync) await h.datasync();
          break;
        }
        case 'epochs':
          this.bytesWritten += await this.epochs.write(a.epochs);
          break;
        case 'snapshot': {
          // One snapshot at a time: each deletes the one before.
          await this.settleBackground();
          if (a.meta.replacesLog) {
            // A SNAP's state is what the log after it continues from: durable before anything else.
            await this.snapshot(a);
          } else {
            this.background = this.snapshot(a).catch((err: unknown) => {
              this.backgroundError = { err };
            });
          }
          break;
        }
      }
    }
  }

  async closeAll(): Promise<void> {
    await this.background;
    for (const seq of [...this.handles.keys()]) await this.closeHandle(seq);
    await this.epochs.close();
    this.throwBackgroundError();
  }

  /** Waits for a local snapshot being written, if any; throws if writing it failed. */
  async settleBackground(): Promise<void> {
    await this.background;
    this.background = undefined;
    this.throwBackgroundError();
  }

  private throwBackgroundError(): void {
    if (this.backgroundError) throw this.backgroundError.err;
  }

  private async snapshot(a: DiskAction & { kind: 'snapshot' }): Promise<void> {
    this.bytesWritten += await writeSnapshot(this.dir, a.meta, a.snapshot, this.fsync);
    for (const seq of a.deleteSeqs) {
      await this.closeHandle(seq);
      await unlinkIfExists(this.path(seq));
    }
    for (const name of a.deleteSnapshots) await unlinkIfExists(join(this.dir, name));
    // Made durable so that at most two snapshots (this one and the one before) ever coexist:
    // recovery may fall back one generation, never to a state older than that.
    if (this.fsync && a.deleteSeqs.length + a.deleteSnapshots.length > 0) await fsyncDir(this.dir);
  }

  private path(seq: number): string {
    return join(this.dir, segmentName(seq));
  }

  private async handle(seq: number): Promise<FileHandle> {
    let h = this.handles.get(seq);
    if (!h) {
      h = await open(this.path(seq), SEGMENT_FLAGS | this.syncFlag);
      this.handles.set(seq, h);
    }
    return h;
  }

  /**
   * How many zeros to write after records that end at `end` so that the file stays zero-filled
   * ahead of them: none while it already is (or with fsync off, where nothing is gained).
   */
  private async zerosAhead(seq: number, h: FileHandle, end: number): Promise<number> {
    if (!this.fsync) return 0;
    let fileEnd = this.fileEnds.get(seq);
    if (fileEnd === undefined) {
      fileEnd = (await h.stat()).size;
      this.fileEnds.set(seq, fileEnd);
    }
    return end > fileEnd ? ZERO_AHEAD_BYTES : 0;
  }

  private async closeHandle(seq: number): Promise<void> {
    const h = this.handles.get(seq);
    this.handles.delete(seq);
    this.fileEnds.delete(seq);
    await h?.close();
  }
}
