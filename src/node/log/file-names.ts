// Names of the files in a node's data directory:
//   log.<seq>                 log segments, seq zero-padded so a plain sort orders them
//   snapshot.<epoch>.<counter> snapshots, named by the zxid they were taken at
//   epochs                    acceptedEpoch and currentEpoch
//   *.tmp                     a file being written before its atomic rename (removed at open)
import type { Zxid } from '../../vocabulary/zxid.js';

export const EPOCHS_FILE = 'epochs';
export const TMP_SUFFIX = '.tmp';
/** Suffix given to a snapshot whose checksum failed, so it is kept for inspection but never read again. */
export const CORRUPT_SUFFIX = '.corrupt';

export function segmentName(seq: number): string {
  return `log.${String(seq).padStart(10, '0')}`;
}

export function parseSegmentName(name: string): number | undefined {
  const m = /^log\.(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

export function snapshotName(z: Zxid): string {
  return `snapshot.${z.epoch}.${z.counter}`;
}

export function parseSnapshotName(name: string): Zxid | undefined {
  const m = /^snapshot\.(\d+)\.(\d+)$/.exec(name);
  return m ? { epoch: Number(m[1]), counter: Number(m[2]) } : undefined;
}
