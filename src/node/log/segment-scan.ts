// Reading a segment file back: the run of valid records from its start, and, if it stops before
// the end of the file, whether what follows is a torn final write or damage to durable data.
//
// Only the last flush round can be torn: the next round starts once this one is durable (its O_DSYNC
// write returned). A power cut may persist that round's pages in any order, so valid records can
// follow a hole inside it.
// But a round ends with a SYNC_POINT record, so a bad record followed by a valid sync point *and*
// more valid data behind it lies in a round that had completed: that is corruption, not a tear.
import type { Txn } from '../core/types.js';
import { decodeRecordAt } from './record-codec.js';

export interface ScannedRecord {
  readonly txn: Txn;
  readonly offset: number;
  readonly size: number;
}

export interface SegmentScan {
  readonly records: ScannedRecord[];
  /**
   * Where the valid prefix ends: the file's length when the whole file is valid, less any zeros
   * after the last record.
   */
  readonly validEnd: number;
  /** The first bad record, if the file does not end cleanly. */
  readonly bad?: {
    readonly offset: number;
    readonly reason: string;
    readonly followedByDurableData: boolean;
    /** Where the file's last byte that is not zero ends: zeros after it were never data. */
    readonly dataEnd: number;
  };
}

export function scanSegment(buf: Buffer): SegmentScan {
  const records: ScannedRecord[] = [];
  let off = 0;
  while (off < buf.length) {
    const r = decodeRecordAt(buf, off);
    if (!r.ok) {
      // Zeros to the end: the file's zero-filled room ahead of its records (disk-actions.ts), or a
      // write of which only the file's new size persisted. Either way the records end here.
      if (dataEnd(buf) <= off) return { records, validEnd: off };
      return {
        records,
        validEnd: off,
        bad: {
          offset: off,
          reason: r.reason,
          followedByDurableData: durableDataFollows(buf, off + 1),
          dataEnd: dataEnd(buf),
        },
      };
    }
    records.push({ txn: r.txn, offset: off, size: r.size });
    off += r.size;
  }
  return { records, validEnd: off };
}

/** One past the last byte of `buf` that is not zero (0 when every byte is). */
export function dataEnd(buf: Buffer): number {
  let end = buf.length;
  while (end > 0 && buf[end - 1] === 0) end--;
  return end;
}

/** True when, from `from` on, a valid sync-point record is followed by another valid record. */
function durableDataFollows(buf: Buffer, from: number): boolean {
  let sawSyncPoint = false;
  let off = from;
  while (off < buf.length) {
    const r = decodeRecordAt(buf, off);
    if (!r.ok) {
      off++; // resynchronise byte by byte: the damage may have any length
      continue;
    }
    if (sawSyncPoint) return true;
    if (r.syncPoint) sawSyncPoint = true;
    off += r.size;
  }
  return false;
}

/** Whether a valid record starts anywhere in `buf` (used for segments after a damaged one). */
export function hasValidRecord(buf: Buffer): boolean {
  for (let off = 0; off < buf.length; off++) if (decodeRecordAt(buf, off).ok) return true;
  return false;
}
