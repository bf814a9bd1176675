// Wire encoding of PeerMessage (one message per frame).
//
// The first byte says how the rest is encoded. The hot messages of steady-state replication
// (PROPOSAL, ACK, COMMIT, REQUEST, PING, PONG) and the two that carry whole histories (SYNC,
// FETCHED) have a hand-written binary layout: fixed-width integers, length-prefixed strings and
// raw bytes, no JSON at all. Every other message goes through the generic form: JSON for the
// structure, with each Uint8Array lifted out as a raw blob appended after the JSON (the JSON
// holds `{"$bin": index}` in its place), so binary data is never base64'd or expanded into
// number arrays. New message types therefore work without touching this file, just not as fast.
//
// Decoded Uint8Arrays are plain Uint8Array views into the frame (no copy).
//
// A SYNC or FETCHED that carries a snapshot is several frames: the snapshot's bytes first, as
// SNAPCHUNK frames of about a megabyte (encoded lazily, one at a time, by encodeSnapshotFrames),
// then the message itself with only the snapshot's zxid and size. A PeerFrameReader (one per
// connection) parses the chunks as they arrive and hands the finished snapshot to the message
// that follows them: neither side ever holds the event loop for a whole state.
import type { PeerMessage, SyncPlan, ZabMessage } from '../core/zab-messages.js';
import type { Txn } from '../core/types.js';
import { zxidEquals, type Zxid } from '../../vocabulary/zxid.js';
import { DEFAULT_CHUNK_BYTES, SnapshotDecoder, type StateSnapshot } from '../core/state-snapshot.js';
import { BinaryReader, BinaryWriter, DecodeError } from '../../util/wire/binary-io.js';

export { DecodeError };

const Kind = {
  Generic: 0,
  Proposal: 1,
  Ack: 2,
  Commit: 3,
  Request: 4,
  Ping: 5,
  Pong: 6,
  Sync: 7,
  Fetched: 8,
  Heartbeat: 9,
  SnapChunk: 10,
} as const;

type Of<T extends PeerMessage['type']> = Extract<PeerMessage, { type: T }>;

/** Encodes a message as a frame payload. */
export function encodePeerMessage(msg: PeerMessage): Buffer {
  return encodeInto(msg, false).finish();
}

/** Encodes a message as a whole frame, length prefix included, built in one buffer. */
export function encodePeerFrame(msg: PeerMessage): Buffer {
  return encodeInto(msg, true).finishFrame();
}

/** The snapshot a SYNC or FETCHED carries, if any: it travels ahead of the message, in chunks. */
export function snapshotOf(msg: PeerMessage): StateSnapshot | undefined {
  return msg.type === 'SYNC' || msg.type === 'FETCHED' ? msg.plan.snapshot : undefined;
}

/**
 * The SNAPCHUNK frames of a snapshot, each made when asked for. Send them all, in order and with
 * nothing but other chunk-free frames between, before the message that carries the snapshot.
 */
export function* encodeSnapshotFrames(
  snapshot: StateSnapshot,
  chunkBytes = DEFAULT_CHUNK_BYTES,
): Generator<Buffer> {
  for (const chunk of snapshot.chunks(chunkBytes)) {
    const w = new BinaryWriter(16 + chunk.byteLength, true);
    w.u8(Kind.SnapChunk).bytes(chunk);
    yield w.finishFrame();
  }
}

/** Reads one connection's frames: keeps the snapshot being received between them. */
export class PeerFrameReader {
  private snapshot: SnapshotDecoder | undefined;

  /** The message a frame holds, or undefined for a snapshot chunk (kept for the message after it). */
  read(frame: Uint8Array): PeerMessage | undefined {
    if (frame[0] === Kind.SnapChunk) {
      const r = new BinaryReader(frame);
      r.u8();
      const bytes = r.bytes();
      r.end();
      this.snapshot ??= new SnapshotDecoder();
      try {
        this.snapshot.push(bytes);
      } catch (e) {
        throw new DecodeError(`bad snapshot chunk: ${(e as Error).message}`);
      }
      return undefined;
    }
    return decodeFrame(frame, (zxid, byteLength) => {
      const d = this.snapshot;
      this.snapshot = undefined;
      if (!d) throw new DecodeError('a snapshot with no chunks before it');
      if (d.bytes !== byteLength)
        throw new DecodeError(`snapshot of ${d.bytes} bytes, announced ${byteLength}`);
      let s: StateSnapshot;
      try {
        s = d.finish();
      } catch (e) {
        throw new DecodeError((e as Error).message);
      }
      if (!zxidEquals(s.zxid, zxid)) throw new DecodeError('snapshot chunks for another zxid');
      return s;
    });
  }
}

/**
 * Decodes a frame payload that is a whole message (a SYNC or FETCHED with a snapshot needs a
 * PeerFrameReader instead); throws DecodeError on anything malformed.
 */
export function decodePeerMessage(buf: Uint8Array): PeerMessage {
  return decodeFrame(buf, () => {
    throw new DecodeError('a snapshot with no chunks before it');
  });
}

type TakeSnapshot = (zxid: Zxid, byteLength: number) => StateSnapshot;

function decodeFrame(buf: Uint8Array, takeSnapshot: TakeSnapshot): PeerMessage {
  const r = new BinaryReader(buf);
  const kind = r.u8();
  let msg: PeerMessage;
  switch (kind) {
    case Kind.Proposal:
      msg = { type: 'PROPOSAL', epoch: r.u32(), commitZxid: readZxid(r), txns: readTxns(r) };
      break;
    case Kind.Ack:
      msg = { type: 'ACK', epoch: r.u32(), zxid: readZxid(r) };
      break;
    case Kind.Commit:
      msg = { type: 'COMMIT', epoch: r.u32(), zxid: readZxid(r) };
      break;
    case Kind.Heartbeat: {
      const seq = r.u32();
      const sentAt = r.f64();
      const rate = r.f64();
      const hasEcho = r.u8();
      if (hasEcho > 1) throw new DecodeError(`bad heartbeat echo flag ${hasEcho}`);
      const echo = hasEcho ? { sentAt: r.f64(), heldMs: r.f64() } : undefined;
      const n = r.u32();
      if (n * 8 > r.remaining) throw new DecodeError(`score length ${n} exceeds the frame`);
      const score: number[] = [];
      for (let i = 0; i < n; i++) score.push(r.f64());
      msg = { type: 'HEARTBEAT', seq, sentAt, rate, score, ...(echo ? { echo } : {}) };
      break;
    }
    case Kind.Request:
      msg = {
        type: 'REQUEST',
        epoch: r.u32(),
        clientId: r.str(),
        requestId: r.f64(),
        path: r.str(),
        data: r.bytes(),
      };
      break;
    case Kind.Ping:
      msg = { type: 'PING', epoch: r.u32(), commitZxid: readZxid(r) };
      break;
    case Kind.Pong:
      msg = { type: 'PONG', epoch: r.u32() };
      break;
    case Kind.Sync:
      msg = { type: 'SYNC', epoch: r.u32(), plan: readPlan(r, takeSnapshot) };
      break;
    case Kind.Fetched:
      msg = { type: 'FETCHED', epoch: r.u32(), plan: readPlan(r, takeSnapshot) };
      break;
    case Kind.Generic:
      msg = readGeneric(r);
      break;
    default:
      throw new DecodeError(`unknown peer message kind ${kind}`);
  }
  r.end();
  return msg;
}

function encodeInto(msg: PeerMessage, framed: boolean): BinaryWriter {
  switch (msg.type) {
    case 'PROPOSAL': {
      const w = new BinaryWriter(24 + txnsSize(msg.txns), framed);
      w.u8(Kind.Proposal).u32(msg.epoch);
      writeZxid(w, msg.commitZxid);
      writeTxns(w, msg.txns);
      return w;
    }
    case 'ACK':
    case 'COMMIT': {
      const w = new BinaryWriter(13, framed);
      w.u8(msg.type === 'ACK' ? Kind.Ack : Kind.Commit).u32(msg.epoch);
      writeZxid(w, msg.zxid);
      return w;
    }
    case 'REQUEST':
      return writeRequest(
        new BinaryWriter(32 + msg.data.length + 3 * (msg.path.length + msg.clientId.length), framed),
        msg,
      );
    case 'PING': {
      const w = new BinaryWriter(13, framed);
      w.u8(Kind.Ping).u32(msg.epoch);
      writeZxid(w, msg.commitZxid);
      return w;
    }
    case 'PONG':
      return new BinaryWriter(5, framed).u8(Kind.Pong).u32(msg.epoch);
    case 'HEARTBEAT': {
      // Every peer, every period: binary keeps their cost down.
      const w = new BinaryWriter(48 + 8 * msg.score.length, framed);
      w.u8(Kind.Heartbeat)
        .u32(msg.seq)
        .f64(msg.sentAt)
        .f64(msg.rate)
        .u8(msg.echo ? 1 : 0);
      if (msg.echo) w.f64(msg.echo.sentAt).f64(msg.echo.heldMs);
      w.u32(msg.score.length);
      for (const v of msg.score) w.f64(v);
      return w;
    }
    case 'SYNC':
    case 'FETCHED': {
      const w = new BinaryWriter(32 + planSize(msg.plan), framed);
      w.u8(msg.type === 'SYNC' ? Kind.Sync : Kind.Fetched).u32(msg.epoch);
      writePlan(w, msg.plan);
      return w;
    }
    default:
      return writeGeneric(new BinaryWriter(256, framed), msg);
  }
}

// --- binary pieces -------------------------------------------------------------------------

function writeZxid(w: BinaryWriter, z: Zxid): void {
  w.u32(z.epoch).u32(z.counter);
}

function readZxid(r: BinaryReader): Zxid {
  return { epoch: r.u32(), counter: r.u32() };
}

function writeRequest(w: BinaryWriter, m: Of<'REQUEST'>): BinaryWriter {
  return w.u8(Kind.Request).u32(m.epoch).str(m.clientId).f64(m.requestId).str(m.path).bytes(m.data);
}

/** A close upper bound of a txn list's encoded size, so the writer rarely has to grow. */
function txnsSize(txns: readonly Txn[]): number {
  let size = 4;
  for (const t of txns) size += 32 + t.data.length + 3 * (t.path.length + t.clientId.length);
  return size;
}

function writeTxns(w: BinaryWriter, txns: readonly Txn[]): void {
  w.u32(txns.length);
  for (const t of txns) {
    writeZxid(w, t.zxid);
    w.str(t.clientId).f64(t.requestId).str(t.path).bytes(t.data);
  }
}

function readTxns(r: BinaryReader): Txn[] {
  const n = r.u32();
  // Each txn takes at least 28 bytes: a count beyond that is garbage, not a reason to allocate.
  if (n * 28 > r.remaining) throw new DecodeError(`txn count ${n} exceeds the frame`);
  const txns: Txn[] = new Array<Txn>(n);
  for (let i = 0; i < n; i++) {
    const zxid = readZxid(r);
    const clientId = r.str();
    const requestId = r.f64();
    const path = r.str();
    txns[i] = { zxid, path, data: r.bytes(), clientId, requestId };
  }
  return txns;
}

const HAS_SNAPSHOT = 1;
const HAS_TRUNCATE = 2;

function planSize(p: SyncPlan): number {
  return 48 + txnsSize(p.txns);
}

/** The snapshot itself went ahead in SNAPCHUNK frames: here only what identifies it. */
function writePlan(w: BinaryWriter, p: SyncPlan): void {
  w.u8((p.snapshot ? HAS_SNAPSHOT : 0) | (p.truncateTo ? HAS_TRUNCATE : 0));
  if (p.snapshot) {
    writeZxid(w, p.snapshot.zxid);
    w.f64(p.snapshot.byteLength);
  }
  if (p.truncateTo) writeZxid(w, p.truncateTo);
  writeTxns(w, p.txns);
}

function readPlan(r: BinaryReader, takeSnapshot: TakeSnapshot): SyncPlan {
  const flags = r.u8();
  if ((flags & ~(HAS_SNAPSHOT | HAS_TRUNCATE)) !== 0) throw new DecodeError(`bad sync plan flags ${flags}`);
  const snapshot = flags & HAS_SNAPSHOT ? takeSnapshot(readZxid(r), r.f64()) : undefined;
  const truncateTo = flags & HAS_TRUNCATE ? readZxid(r) : undefined;
  const txns = readTxns(r);
  // Absent parts stay absent (not `undefined`-valued keys), as the core built them.
  return {
    ...(snapshot ? { snapshot } : {}),
    ...(truncateTo ? { truncateTo } : {}),
    txns,
  };
}

// --- generic: JSON structure + raw blobs ----------------------------------------------------
// Layout after the kind byte: u32 blob count, u32 length of each blob, u32 JSON length, JSON,
// then the blobs back to back.

const BLOB_KEY = '$bin';
/** JSON has no Infinity or NaN (it would write null): such numbers travel as {"$num": "Infinity"}. */
const NUM_KEY = '$num';

function writeGeneric(w: BinaryWriter, msg: PeerMessage): BinaryWriter {
  const blobs: Uint8Array[] = [];
  const json = JSON.stringify(lift(msg, blobs));
  w.u8(Kind.Generic).u32(blobs.length);
  for (const b of blobs) w.u32(b.length);
  w.str(json);
  for (const b of blobs) w.raw(b);
  return w;
}

function readGeneric(r: BinaryReader): PeerMessage {
  const count = r.u32();
  if (count * 4 > r.remaining) throw new DecodeError(`blob count ${count} exceeds the frame`);
  const lengths: number[] = [];
  for (let i = 0; i < count; i++) lengths.push(r.u32());
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.str());
  } catch (e) {
    throw new DecodeError(`bad JSON in peer message: ${(e as Error).message}`);
  }
  const blobs = lengths.map((n) => r.raw(n));
  const msg = restore(parsed, blobs);
  if (typeof msg !== 'object' || msg === null || typeof (msg as { type?: unknown }).type !== 'string') {
    throw new DecodeError('peer message without a type');
  }
  return msg as ZabMessage;
}

/** A JSON-ready copy of `value` with every Uint8Array replaced by a reference into `blobs`. */
function lift(value: unknown, blobs: Uint8Array[]): unknown {
  if (value instanceof Uint8Array) {
    blobs.push(value);
    return { [BLOB_KEY]: blobs.length - 1 };
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return { [NUM_KEY]: String(value) };
  if (Array.isArray(value)) return value.map((v) => lift(v, blobs));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = lift(v, blobs);
    return out;
  }
  return value;
}

function restore(value: unknown, blobs: readonly Uint8Array[]): unknown {
  if (Array.isArray(value)) return value.map((v) => restore(v, blobs));
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    const ref = obj[BLOB_KEY];
    if (typeof ref === 'number' && Object.keys(obj).length === 1) {
      const blob = blobs[ref];
      if (!blob) throw new DecodeError(`reference to missing blob ${ref}`);
      return blob;
    }
    const num = obj[NUM_KEY];
    if (typeof num === 'string' && Object.keys(obj).length === 1) {
      if (num !== 'Infinity' && num !== '-Infinity' && num !== 'NaN')
        throw new DecodeError(`bad number ${num}`);
      return Number(num);
    }
    for (const k of Object.keys(obj)) {
      // JSON.parse makes "__proto__" an own key; assigning it back would swap the prototype.
      if (k === '__proto__') throw new DecodeError('forbidden key __proto__');
      obj[k] = restore(obj[k], blobs);
    }
    return obj;
  }
  return value;
}
