// Rebuilding a node's state from its data directory: the newest valid snapshot, then the txns
// after it from the log segments in order. Everything is checked before anything is changed on
// disk; only then are torn tails cut off and leftovers (temp files, stale segments and snapshots)
// removed.
import { EncodedState } from '../core/state-snapshot.js';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecoveredState } from '../core/core-types.js';
import type { Txn } from '../core/types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import { compareZxid, formatZxid, zxidEquals } from '../../vocabulary/zxid.js';
import { readEpochs } from './epoch-file.js';
import {
  CORRUPT_SUFFIX,
  TMP_SUFFIX,
  parseSegmentName,
  parseSnapshotName,
  segmentName,
} from './file-names.js';
import { fsyncDir } from './fs-helpers.js';
import { dataEnd, scanSegment, hasValidRecord } from './segment-scan.js';
import { SegmentIndex } from './segment-index.js';
import type { LoadedSnapshot, SnapshotMeta } from './snapshot-file.js';
import { readSnapshot, readSnapshotMeta } from './snapshot-file.js';

export interface RecoveryReport {
  /** Txns recovered from the log (after the snapshot). */
  readonly txns: number;
  readonly snapshotZxid?: Zxid;
  /** Bytes cut off the end of the log: a write torn by a crash. */
  readonly tornTailBytes: number;
  /** Log segment files read. */
  readonly segments: number;
  /** Things recovery repaired or set aside that an operator may want to know (e.g. a corrupt snapshot). */
  readonly warnings: readonly string[];
}

/** The log or a snapshot is damaged in a way recovery must not paper over. */
export class LogCorruptionError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly offset?: number,
  ) {
    super(message);
    this.name = 'LogCorruptionError';
  }
}

/** What the store needs to carry on where the previous process stopped. */
export interface RecoveredLayout {
  readonly state: RecoveredState;
  readonly report: RecoveryReport;
  readonly snapshot?: SnapshotMeta;
  /** Segments holding the live log, in order; the last is the one to append to. Never empty. */
  readonly segments: SegmentIndex[];
  readonly nextSeq: number;
  readonly nextGeneration: number;
}

interface SnapshotChoice {
  readonly chosen?: LoadedSnapshot;
  readonly corrupt: string[];
  readonly older: string[];
}

async function chooseSnapshot(dir: string, names: readonly string[]): Promise<SnapshotChoice> {
  const metas: { name: string; meta?: SnapshotMeta }[] = [];
  for (const name of names) metas.push({ name, meta: await readSnapshotMeta(dir, name) });
  // Newest generation first; unreadable headers count as newest (they may well be).
  const generation = (m?: SnapshotMeta): number => m?.generation ?? Number.MAX_VALUE;
  metas.sort((a, b) => generation(b.meta) - generation(a.meta));
  const corrupt: string[] = [];
  const older: string[] = [];
  let chosen: LoadedSnapshot | undefined;
  for (const { name, meta } of metas) {
    if (chosen) {
      older.push(name);
      continue;
    }
    const loaded = meta ? await readSnapshot(dir, name) : undefined;
    const named = parseSnapshotName(name);
    if (loaded && named && zxidEquals(named, loaded.zxid)) {
      chosen = loaded;
      continue;
    }
    // Falling back to an older snapshot is sound only if the damaged one merely compacted the
    // log: after a SNAP replacement the old segments may still be there, holding a dead history.
    if (!meta || meta.replacesLog) {
      const file = join(dir, name);
      const why = meta ? 'it replaced the whole log (SNAP)' : 'its header is unreadable';
      throw new LogCorruptionError(
        `snapshot ${file} failed its checksum and ${why}, so no older state can be trusted`,
        file,
      );
    }
    corrupt.push(name);
  }
  return { chosen, corrupt, older };
}

interface LogContents {
  /** Index of each live segment, in order. */
  readonly segments: SegmentIndex[];
  /** Txns after the snapshot. */
  readonly txns: Txn[];
  /** Files to cut back to a length (torn tails), applied once everything has been checked. */
  readonly cuts: { readonly file: string; readonly length: number }[];
  readonly tornTailBytes: number;
}

/** Read the live segments in order, checking CRCs and zxid order; only the tail may be torn. */
async function readLog(
  dir: string,
  live: readonly number[],
  snapZxid: Zxid | undefined,
): Promise<LogContents> {
  const segments: SegmentIndex[] = [];
  const txns: Txn[] = [];
  const cuts: { file: string; length: number }[] = [];
  let tornTailBytes = 0;
  let prev: { zxid: Zxid; file: string; offset: number } | undefined;
  const read = (seq: number): Promise<Buffer> => readFile(join(dir, segmentName(seq)));
  for (let i = 0; i < live.length; i++) {
    const seq = live[i]!;
    const file = join(dir, segmentName(seq));
    const buf = await read(seq);
    const scan = scanSegment(buf);
    const index = new SegmentIndex(seq);
    for (const r of scan.records) {
      if (prev && compareZxid(r.txn.zxid, prev.zxid) <= 0) {
        throw new LogCorruptionError(
          `log record ${formatZxid(r.txn.zxid)} in ${file} at offset ${r.offset} does not follow ${formatZxid(prev.zxid)} (${prev.file} at offset ${prev.offset})`,
          file,
          r.offset,
        );
      }
      prev = { zxid: r.txn.zxid, file, offset: r.offset };
      index.push(r.txn.zxid, r.size);
      if (!snapZxid || compareZxid(r.txn.zxid, snapZxid) > 0) txns.push(r.txn);
    }
    segments.push(index);
    if (!scan.bad) continue;
    const later = await Promise.all(live.slice(i + 1).map(read));
    if (scan.bad.followedByDurableData || later.some(hasValidRecord)) {
      throw new LogCorruptionError(
        `corrupt log record in ${file} at offset ${scan.bad.offset}: ${scan.bad.reason}; valid records follow it, so this is not a torn write`,
        file,
        scan.bad.offset,
      );
    }
    // A torn tail: cut it, and empty any later segment (none holds a valid record). Counted up to
    // the last byte that is not zero: zeros after it are room written ahead (disk-actions.ts).
    tornTailBytes += scan.bad.dataEnd - scan.validEnd;
    cuts.push({ file, length: scan.validEnd });
    live.slice(i + 1).forEach((laterSeq, k) => {
      tornTailBytes += dataEnd(later[k]!);
      cuts.push({ file: join(dir, segmentName(laterSeq)), length: 0 });
      segments.push(new SegmentIndex(laterSeq));
    });
    break;
  }
  return { segments, txns, cuts, tornTailBytes };
}

export async function recover(dir: string, fsync: boolean): Promise<RecoveredLayout> {
  await mkdir(dir, { recursive: true });
  const names = (await readdir(dir)).sort();
  const tmpFiles = names.filter((n) => n.endsWith(TMP_SUFFIX));
  const epochs = await readEpochs(dir);
  const snaps = await chooseSnapshot(
    dir,
    names.filter((n) => parseSnapshotName(n) !== undefined),
  );
  const snapshot = snaps.chosen;
  const warnings = snaps.corrupt.map(
    (n) => `snapshot ${join(dir, n)} failed its checksum; renamed to ${n}${CORRUPT_SUFFIX}`,
  );

  const allSeqs = names
    .map(parseSegmentName)
    .filter((s): s is number => s !== undefined)
    .sort((a, b) => a - b);
  const firstSeq = snapshot?.firstSeq ?? 1;
  const stale = allSeqs.filter((s) => s < firstSeq);
  const live = allSeqs.filter((s) => s >= firstSeq);
  live.forEach((seq, i) => {
    if (seq !== firstSeq + i) {
      const missing = segmentName(firstSeq + i);
      const after = snapshot ? `after snapshot ${formatZxid(snapshot.zxid)}` : 'with no snapshot';
      throw new LogCorruptionError(
        `log segment ${join(dir, missing)} is missing (the log ${after} starts at ${segmentName(firstSeq)})`,
        join(dir, missing),
      );
    }
  });

  const log = await readLog(dir, live, snapshot?.zxid);
  const { segments, txns, cuts, tornTailBytes } = log;

  // Everything checked: now repair and tidy.
  for (const cut of cuts) {
    const h = await open(cut.file, 'r+');
    try {
      await h.truncate(cut.length);
      if (fsync) await h.datasync();
    } finally {
      await h.close();
    }
    warnings.push(`cut ${cut.file} to ${cut.length} bytes (torn write)`);
  }
  for (const n of tmpFiles) await unlink(join(dir, n));
  for (const n of snaps.corrupt) await rename(join(dir, n), join(dir, n + CORRUPT_SUFFIX));
  for (const n of snaps.older) await unlink(join(dir, n));
  for (const s of stale) await unlink(join(dir, segmentName(s)));
  let changedDir = tmpFiles.length + snaps.corrupt.length + snaps.older.length + stale.length > 0;
  if (segments.length === 0) {
    const h = await open(join(dir, segmentName(firstSeq)), 'wx');
    await h.close();
    segments.push(new SegmentIndex(firstSeq));
    changedDir = true;
  }
  if (changedDir && fsync) await fsyncDir(dir);

  const meta: SnapshotMeta | undefined = snapshot && {
    zxid: snapshot.zxid,
    firstSeq: snapshot.firstSeq,
    generation: snapshot.generation,
    replacesLog: snapshot.replacesLog,
  };
  const state: RecoveredState = {
    acceptedEpoch: epochs.acceptedEpoch,
    currentEpoch: epochs.currentEpoch,
    ...(epochs.acceptedLeader !== undefined ? { acceptedLeader: epochs.acceptedLeader } : {}),
    ...(snapshot ? { snapshot: new EncodedState(snapshot.zxid, snapshot.data) } : {}),
    txns,
  };
  return {
    state,
    report: {
      txns: txns.length,
      ...(snapshot ? { snapshotZxid: snapshot.zxid } : {}),
      tornTailBytes,
      segments: live.length,
      warnings,
    },
    ...(meta ? { snapshot: meta } : {}),
    segments,
    nextSeq: Math.max(firstSeq, ...allSeqs) + 1,
    nextGeneration: (snapshot?.generation ?? 0) + 1,
  };
}
