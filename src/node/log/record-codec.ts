// Binary encoding of one logged txn. Each record is
//   u32 payloadLength | u32 crc32 | payload
// with the CRC taken over the length field and the payload, so a damaged length is caught too.
// The payload is
//   u32 epoch | u32 counter | f64 requestId | u32 dataLength | u16 clientIdLength | u16 pathLength |
//   u8 flags | clientId (utf8) | path (utf8) | data
// All integers little-endian. The data is copied raw: a 1 kB write costs one memcpy and one CRC.
//
// flags bit 0 (SYNC_POINT) marks the last record of one flush round in a segment. Recovery uses it
// to tell a torn final write (a power cut may persist its pages in any order, leaving holes) from
// real corruption of data that had already been made durable (a bad record with a later sync point
// and more data behind it).
import { crc32 } from 'node:zlib';
import type { Txn } from '../core/types.js';

export const RECORD_HEADER_BYTES = 8;
export const PAYLOAD_FIXED_BYTES = 25;
export const FLAG_SYNC_POINT = 1;
const MAX_U16 = 0xffff;
const MAX_U32 = 0xffffffff;

/** A batch of txns encoded back to back, with the offset of each record inside `buffer`. */
export interface EncodedBatch {
  readonly buffer: Buffer;
  readonly offsets: readonly number[];
}

export function encodedRecordSize(clientIdBytes: number, pathBytes: number, dataBytes: number): number {
  return RECORD_HEADER_BYTES + PAYLOAD_FIXED_BYTES + clientIdBytes + pathBytes + dataBytes;
}

function checkU32(what: string, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > MAX_U32) {
    throw new RangeError(`${what} must be an integer in [0, 2^32): ${value}`);
  }
}

/** Encode `txns` into one buffer (one allocation, one copy of each payload). */
export function encodeTxns(txns: readonly Txn[]): EncodedBatch {
  const clientIdLens = new Array<number>(txns.length);
  const pathLens = new Array<number>(txns.length);
  let total = 0;
  for (let i = 0; i < txns.length; i++) {
    const t = txns[i]!;
    checkU32('zxid epoch', t.zxid.epoch);
    checkU32('zxid counter', t.zxid.counter);
    const c = Buffer.byteLength(t.clientId, 'utf8');
    const p = Buffer.byteLength(t.path, 'utf8');
    if (c > MAX_U16) throw new RangeError(`clientId too long to log (${c} bytes)`);
    if (p > MAX_U16) throw new RangeError(`path too long to log (${p} bytes)`);
    clientIdLens[i] = c;
    pathLens[i] = p;
    total += encodedRecordSize(c, p, t.data.byteLength);
  }
  const buffer = Buffer.allocUnsafe(total);
  const offsets = new Array<number>(txns.length);
  let off = 0;
  for (let i = 0; i < txns.length; i++) {
    const t = txns[i]!;
    const c = clientIdLens[i]!;
    const p = pathLens[i]!;
    const payloadLen = PAYLOAD_FIXED_BYTES + c + p + t.data.byteLength;
    offsets[i] = off;
    buffer.writeUInt32LE(payloadLen, off);
    let q = off + RECORD_HEADER_BYTES;
    buffer.writeUInt32LE(t.zxid.epoch, q);
    buffer.writeUInt32LE(t.zxid.counter, q + 4);
    buffer.writeDoubleLE(t.requestId, q + 8);
    buffer.writeUInt32LE(t.data.byteLength, q + 16);
    buffer.writeUInt16LE(c, q + 20);
    buffer.writeUInt16LE(p, q + 22);
    buffer[q + 24] = 0;
    q += PAYLOAD_FIXED_BYTES;
    q += buffer.write(t.clientId, q, c, 'utf8');
    q += buffer.write(t.path, q, p, 'utf8');
    buffer.set(t.data, q);
    buffer.writeUInt32LE(recordCrc(buffer, off, payloadLen), off + 4);
    off += RECORD_HEADER_BYTES + payloadLen;
  }
  return { buffer, offsets };
}

// CRC-32 (zlib's: reflected, polynomial 0xEDB88320) a byte at a time, for the 4-byte length field:
// a second call into zlib per record, with its own view of the buffer, cost more than the CRC of
// the 1 kB payload itself (perf under `bench node`: recordCrc 2.8 % of the machine, zlib 2.2 %).
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

function lengthCrc(buf: Buffer, off: number): number {
  let c = -1;
  for (let i = off; i < off + 4; i++) c = (CRC_TABLE[(c ^ (buf[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

function recordCrc(buf: Buffer, off: number, payloadLen: number): number {
  const payload = off + RECORD_HEADER_BYTES;
  return crc32(buf.subarray(payload, payload + payloadLen), lengthCrc(buf, off));
}

/** Set the SYNC_POINT flag on the record at `off` and re-seal its CRC. */
export function markSyncPoint(buf: Buffer, off: number): void {
  const payloadLen = buf.readUInt32LE(off);
  const flagsAt = off + RECORD_HEADER_BYTES + 24;
  buf[flagsAt] = (buf[flagsAt] ?? 0) | FLAG_SYNC_POINT;
  buf.writeUInt32LE(recordCrc(buf, off, payloadLen), off + 4);
}

export type DecodeResult =
  | { readonly ok: true; readonly txn: Txn; readonly size: number; readonly syncPoint: boolean }
  | { readonly ok: false; readonly reason: string };

/**
 * Decode the record starting at `off`. The returned txn's strings are copied out, its data is a view
 * into `buf` (no copy). Never throws on bad input: says why the bytes are not a record.
 */
export function decodeRecordAt(buf: Buffer, off: number): DecodeResult {
  const avail = buf.length - off;
  if (avail < RECORD_HEADER_BYTES) return { ok: false, reason: `short record header (${avail} bytes)` };
  const payloadLen = buf.readUInt32LE(off);
  if (payloadLen < PAYLOAD_FIXED_BYTES)
    return { ok: false, reason: `impossible record length ${payloadLen}` };
  if (payloadLen > avail - RECORD_HEADER_BYTES) {
    return { ok: false, reason: `record length ${payloadLen} runs past the end of the file` };
  }
  const p = off + RECORD_HEADER_BYTES;
  const dataLen = buf.readUInt32LE(p + 16);
  const cLen = buf.readUInt16LE(p + 20);
  const pLen = buf.readUInt16LE(p + 22);
  if (PAYLOAD_FIXED_BYTES + cLen + pLen + dataLen !== payloadLen) {
    return { ok: false, reason: 'field lengths do not add up to the record length' };
  }
  const stored = buf.readUInt32LE(off + 4);
  if (recordCrc(buf, off, payloadLen) !== stored) return { ok: false, reason: 'CRC mismatch' };
  const flags = buf[p + 24] ?? 0;
  let q = p + PAYLOAD_FIXED_BYTES;
  const clientId = buf.toString('utf8', q, q + cLen);
  q += cLen;
  const path = buf.toString('utf8', q, q + pLen);
  q += pLen;
  const txn: Txn = {
    zxid: { epoch: buf.readUInt32LE(p), counter: buf.readUInt32LE(p + 4) },
    requestId: buf.readDoubleLE(p + 8),
    clientId,
    path,
    data: buf.subarray(q, q + dataLen),
  };
  return {
    ok: true,
    txn,
    size: RECORD_HEADER_BYTES + payloadLen,
    syncPoint: (flags & FLAG_SYNC_POINT) !== 0,
  };
}
