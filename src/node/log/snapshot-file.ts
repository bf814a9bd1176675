// Snapshot files, `snapshot.<epoch>.<counter>`:
//   "POLESNAP" | u32 version (1) | u32 epoch | u32 counter | u32 firstSeq | u32 flags |
//   f64 generation | f64 dataLength | data | u32 crc32 of everything before it
// flags bit 0: the snapshot replaced the whole log (SNAP from a leader) rather than compacting it.
// `firstSeq` is the first log segment that continues the history after this snapshot: recovery
// ignores older segments, which is what makes a SNAP replacement (whose discarded log may hold
// higher zxids from a dead epoch) safe even if deleting them did not survive a crash.
// `generation` grows by one per snapshot written, so "newest" does not depend on zxid order (a SNAP
// from a leader may carry a lower zxid than a local snapshot it replaces).
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Zxid } from '../../vocabulary/zxid.js';
import { snapshotName } from './file-names.js';
import { writeFileAtomicStream } from './fs-helpers.js';
import type { EncodedSnapshot } from '../core/state-snapshot.js';
import { formatZxid } from '../../vocabulary/zxid.js';

const MAGIC = Buffer.from('POLESNAP', 'latin1');
const VERSION = 1;
const HEADER_BYTES = 44;
const FLAG_REPLACES_LOG = 1;
const TRAILER_BYTES = 4;

export interface SnapshotMeta {
  readonly zxid: Zxid;
  readonly firstSeq: number;
  readonly generation: number;
  readonly replacesLog: boolean;
}

export interface LoadedSnapshot extends SnapshotMeta {
  readonly data: Uint8Array;
}

function encodeHeader(meta: SnapshotMeta, dataLength: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(h, 0);
  h.writeUInt32LE(VERSION, 8);
  h.writeUInt32LE(meta.zxid.epoch, 12);
  h.writeUInt32LE(meta.zxid.counter, 16);
  h.writeUInt32LE(meta.firstSeq, 20);
  h.writeUInt32LE(meta.replacesLog ? FLAG_REPLACES_LOG : 0, 24);
  h.writeDoubleLE(meta.generation, 28);
  h.writeDoubleLE(dataLength, 36);
  return h;
}

function decodeHeader(h: Buffer): (SnapshotMeta & { readonly dataLength: number }) | undefined {
  if (h.length < HEADER_BYTES || !h.subarray(0, 8).equals(MAGIC) || h.readUInt32LE(8) !== VERSION)
    return undefined;
  const generation = h.readDoubleLE(28);
  const dataLength = h.readDoubleLE(36);
  if (!Number.isSafeInteger(generation) || !Number.isSafeInteger(dataLength) || dataLength < 0)
    return undefined;
  return {
    zxid: { epoch: h.readUInt32LE(12), counter: h.readUInt32LE(16) },
    firstSeq: h.readUInt32LE(20),
    replacesLog: (h.readUInt32LE(24) & FLAG_REPLACES_LOG) !== 0,
    generation,
    dataLength,
  };
}

/**
 * Write a snapshot atomically; returns the bytes written. The snapshot is encoded, checksummed and
 * written a chunk at a time, each write awaited, so a large state never holds the event loop.
 */
export async function writeSnapshot(
  dir: string,
  meta: SnapshotMeta,
  snapshot: EncodedSnapshot,
  fsync: boolean,
): Promise<number> {
  const header = encodeHeader(meta, snapshot.byteLength);
  const written = await writeFileAtomicStream(
    dir,
    snapshotName(meta.zxid),
    (async function* () {
      yield header;
      let crc = crc32(header);
      let size = 0;
      for (const chunk of snapshot.chunks()) {
        crc = crc32(chunk, crc);
        size += chunk.byteLength;
        yield chunk;
      }
      if (size !== snapshot.byteLength) {
        throw new Error(
          `snapshot ${formatZxid(meta.zxid)} encoded to ${size} bytes, not the ${snapshot.byteLength} announced`,
        );
      }
      const trailer = Buffer.alloc(TRAILER_BYTES);
      trailer.writeUInt32LE(crc, 0);
      yield trailer;
    })(),
    fsync,
  );
  return written;
}

/** The header of a snapshot file, read cheaply to order candidates; undefined if it is not one. */
export async function readSnapshotMeta(dir: string, name: string): Promise<SnapshotMeta | undefined> {
  const handle = await open(join(dir, name), 'r');
  try {
    const h = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(h, 0, HEADER_BYTES, 0);
    return decodeHeader(h.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Read and verify a whole snapshot; undefined when its size or checksum is wrong. */
export async function readSnapshot(dir: string, name: string): Promise<LoadedSnapshot | undefined> {
  const buf = await readFile(join(dir, name));
  const meta = decodeHeader(buf);
  if (!meta || buf.length !== HEADER_BYTES + meta.dataLength + TRAILER_BYTES) return undefined;
  const end = HEADER_BYTES + meta.dataLength;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32LE(end)) return undefined;
  const { dataLength: _, ...rest } = meta;
  return { ...rest, data: buf.subarray(HEADER_BYTES, end) };
}
