// The `epochs` file: acceptedEpoch, currentEpoch and the leader the accepted epoch came from:
//   "POLEEPOC" | u32 acceptedEpoch | u32 currentEpoch | u8 hasLeader | u16 leaderLength |
//   leader (utf8) | u32 crc32 of everything before it
// It is only ever replaced atomically, so a bad checksum means the disk damaged it: an error.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { NodeId } from '../core/types.js';
import { EPOCHS_FILE } from './file-names.js';
import { writeFileAtomic } from './fs-helpers.js';

const MAGIC = Buffer.from('POLEEPOC', 'latin1');
const FIXED = 19;

export interface Epochs {
  readonly acceptedEpoch: number;
  readonly currentEpoch: number;
  readonly acceptedLeader?: NodeId;
}

/** Encode the file's contents; throws RangeError on values it cannot hold. */
export function encodeEpochs(e: Epochs): Buffer {
  for (const [what, v] of [
    ['acceptedEpoch', e.acceptedEpoch],
    ['currentEpoch', e.currentEpoch],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${what} must be a u32: ${v}`);
  }
  const leader = e.acceptedLeader === undefined ? undefined : Buffer.from(e.acceptedLeader, 'utf8');
  if (leader && leader.length > 0xffff)
    throw new RangeError(`acceptedLeader too long (${leader.length} bytes)`);
  const len = leader?.length ?? 0;
  const buf = Buffer.alloc(FIXED + len + 4);
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(e.acceptedEpoch, 8);
  buf.writeUInt32LE(e.currentEpoch, 12);
  buf[16] = leader ? 1 : 0;
  buf.writeUInt16LE(len, 17);
  leader?.copy(buf, FIXED);
  buf.writeUInt32LE(crc32(buf.subarray(0, FIXED + len)), FIXED + len);
  return buf;
}

export function decodeEpochs(buf: Buffer, file: string): Epochs {
  const len = buf.length >= FIXED ? buf.readUInt16LE(17) : -1;
  const end = FIXED + len;
  if (
    len < 0 ||
    buf.length !== end + 4 ||
    !buf.subarray(0, 8).equals(MAGIC) ||
    crc32(buf.subarray(0, end)) !== buf.readUInt32LE(end)
  ) {
    throw new Error(`corrupt epochs file ${file} (${buf.length} bytes, bad magic, size or checksum)`);
  }
  return {
    acceptedEpoch: buf.readUInt32LE(8),
    currentEpoch: buf.readUInt32LE(12),
    ...(buf[16] === 1 ? { acceptedLeader: buf.toString('utf8', FIXED, end) } : {}),
  };
}

/** Read the epochs file of `dir`; a missing file means a fresh node (both epochs 0). */
export async function readEpochs(dir: string): Promise<Epochs> {
  const file = join(dir, EPOCHS_FILE);
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { acceptedEpoch: 0, currentEpoch: 0 };
    throw err;
  }
  return decodeEpochs(buf, file);
}

export function writeEpochs(dir: string, e: Epochs, fsync: boolean): Promise<number> {
  return writeFileAtomic(dir, EPOCHS_FILE, [encodeEpochs(e)], fsync);
}
