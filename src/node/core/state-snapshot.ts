// A node's state as a snapshot that never has to exist as one buffer, nor be encoded or decoded in
// one go. A state of 250 MB (the paper's largest) took hundreds of milliseconds to serialise, and
// as long again to parse, on the event loop that also answers heartbeats and clients; so:
//   - taking a snapshot copies only the two tables' entries (znodes are immutable values, so the
//     copy is a consistent picture even as the tree moves on): FrozenState;
//   - its bytes are produced a chunk at a time, on demand, by whoever sends or writes them, which
//     can yield to the event loop between chunks;
//   - a received snapshot is parsed chunk by chunk as the chunks arrive (SnapshotDecoder).
// The byte format is the one snapshots always had (files written before read the same):
//   u32 epoch | u32 counter | u32 znode count | u32 dedup count, then per znode
//   u32 path length | u32 version | u32 zxid epoch | u32 zxid counter | u32 data length | path | data,
//   then per applied request u32 key length | u32 zxid epoch | u32 zxid counter | key, where the
//   key is `${clientId}\0${requestId}` in UTF-8 (the tree holds the two apart: done-table.ts).
import { decimalLength, DoneTable } from './done-table.js';
import type { Zxid } from '../../vocabulary/zxid.js';

export interface Znode {
  readonly data: Uint8Array;
  readonly version: number;
  readonly zxid: Zxid;
}

/**
 * The contents of a tree at one point: what DataTree builds itself from. Parallel arrays (path i
 * is znode i's): copying a table of 250,000 entries into these takes a fraction of the time of an
 * array of [key, value] pairs, and makes no garbage per entry.
 */
export interface TreeContents {
  readonly applied: Zxid;
  readonly paths: readonly string[];
  readonly nodes: readonly Znode[];
  /** Applied requests (dedup table), oldest first: request i is (clientIds[i], requestIds[i]). */
  readonly clientIds: readonly string[];
  readonly requestIds: readonly number[];
  readonly dones: readonly Zxid[];
}

/**
 * Where a tree holds a path's znode: replaced in place on a write, so a write to a path that
 * exists looks the path up once (a get, then a set, hashed and compared the path twice).
 */
export interface ZnodeSlot {
  znode: Znode;
}

/** A tree's two tables, for a snapshot that was parsed straight into them. */
export interface TreeTables {
  readonly nodes: Map<string, ZnodeSlot>;
  readonly done: DoneTable;
}

/** What the log layer stores and the network sends: bytes, produced a chunk at a time. */
export interface EncodedSnapshot {
  /** The last txn the state includes. */
  readonly zxid: Zxid;
  /** Size of the encoded form (what travels and what is written to disk, headers excluded). */
  readonly byteLength: number;
  /** The encoded form, in pieces of about `chunkBytes` (at least one record each), made lazily. */
  chunks(chunkBytes?: number): Iterable<Uint8Array>;
}

export interface StateSnapshot extends EncodedSnapshot {
  /** The state's contents, to build a tree of. */
  contents(): TreeContents;
  /**
   * Tables already built from it (a received snapshot is parsed into them chunk by chunk), handed
   * over once: the first tree made of this snapshot adopts them instead of building its own.
   */
  takeTables?(): TreeTables | undefined;
}

/** All of a snapshot's bytes in one buffer (tests, small states). */
export function snapshotBytes(s: EncodedSnapshot): Buffer {
  return Buffer.concat([...s.chunks(Infinity)], s.byteLength);
}

export const DEFAULT_CHUNK_BYTES = 1024 * 1024;
const HEAD_BYTES = 16;
const ZNODE_HEAD = 20;
const DONE_HEAD = 12;
/** The encoded size of an empty state. */
export const EMPTY_STATE_BYTES = HEAD_BYTES;

/** What one znode adds to the encoded size. */
export function znodeBytes(path: string, dataBytes: number): number {
  return ZNODE_HEAD + Buffer.byteLength(path, 'utf8') + dataBytes;
}

/** What a table of applied requests adds to the encoded size. */
export function doneTableBytes(t: DoneTable): number {
  return t.size * DONE_HEAD + t.keyBytes;
}

/** A request's key in a snapshot: `${clientId}\0${requestId}`, its UTF-8 length. */
function keyLength(clientId: string, requestId: number): number {
  return Buffer.byteLength(clientId, 'utf8') + 1 + decimalLength(requestId);
}

/** The (clientId, requestId) a snapshot's key holds; throws on a key no request could have made. */
function parseKey(b: Buffer, start: number, end: number): { clientId: string; requestId: number } {
  const nul = b.lastIndexOf(0, end - 1);
  const digits = nul >= start ? b.toString('latin1', nul + 1, end) : '';
  const requestId = Number(digits);
  if (nul < start || digits === '' || String(requestId) !== digits) {
    throw new Error(`snapshot holds a malformed request key at byte ${start}`);
  }
  return { clientId: b.toString('utf8', start, nul), requestId };
}

/** A snapshot of tables already copied: encodes itself on demand. */
export class FrozenState implements StateSnapshot {
  constructor(
    private readonly c: TreeContents,
    /** Its encoded size, which whoever made it knows (the tree keeps it; a decoder counted it). */
    private readonly size: number,
    private tables?: TreeTables,
  ) {}

  takeTables(): TreeTables | undefined {
    const t = this.tables;
    this.tables = undefined;
    return t;
  }

  get zxid(): Zxid {
    return this.c.applied;
  }

  get byteLength(): number {
    return this.size;
  }

  contents(): TreeContents {
    return this.c;
  }

  /** Records are written straight into each chunk's buffer: one allocation per chunk, not per record. */
  *chunks(chunkBytes = DEFAULT_CHUNK_BYTES): Iterable<Uint8Array> {
    const c = this.c;
    const capacity = Number.isFinite(chunkBytes) ? chunkBytes : this.byteLength;
    let buf = Buffer.allocUnsafe(Math.max(capacity, HEAD_BYTES));
    let o = 0;
    /** Makes room for a record of `n` bytes; returns the chunk that had to go out for it. */
    const room = (n: number): Buffer | undefined => {
      if (o === 0 || o + n <= buf.length) return undefined;
      const full = buf.subarray(0, o);
      buf = Buffer.allocUnsafe(Math.max(capacity, n));
      o = 0;
      return full;
    };
    o = buf.writeUInt32BE(c.applied.epoch, o);
    o = buf.writeUInt32BE(c.applied.counter, o);
    o = buf.writeUInt32BE(c.nodes.length, o);
    o = buf.writeUInt32BE(c.dones.length, o);
    for (let i = 0; i < c.nodes.length; i++) {
      const node = c.nodes[i] as Znode;
      const path = c.paths[i] as string;
      const plen = Buffer.byteLength(path, 'utf8');
      const full = room(ZNODE_HEAD + plen + node.data.byteLength);
      if (full) yield full;
      o = buf.writeUInt32BE(plen, o);
      o = buf.writeUInt32BE(node.version, o);
      o = buf.writeUInt32BE(node.zxid.epoch, o);
      o = buf.writeUInt32BE(node.zxid.counter, o);
      o = buf.writeUInt32BE(node.data.byteLength, o);
      o += buf.write(path, o, 'utf8');
      buf.set(node.data, o);
      o += node.data.byteLength;
    }
    for (let i = 0; i < c.dones.length; i++) {
      const z = c.dones[i] as Zxid;
      const clientId = c.clientIds[i] as string;
      const requestId = c.requestIds[i] as number;
      const klen = keyLength(clientId, requestId);
      const full = room(DONE_HEAD + klen);
      if (full) yield full;
      o = buf.writeUInt32BE(klen, o);
      o = buf.writeUInt32BE(z.epoch, o);
      o = buf.writeUInt32BE(z.counter, o);
      o += buf.write(clientId, o, 'utf8');
      o = buf.writeUInt8(0, o);
      o += buf.write(String(requestId), o, 'latin1');
    }
    if (o > 0) yield buf.subarray(0, o);
  }
}

/**
 * A snapshot already in encoded form (read from a file, whose header gives `zxid`). Parsed only
 * when its contents are asked for.
 */
export class EncodedState implements StateSnapshot {
  private parsed: FrozenState | undefined;

  constructor(
    readonly zxid: Zxid,
    private readonly bytes: Uint8Array,
  ) {}

  get byteLength(): number {
    return this.bytes.byteLength;
  }

  *chunks(chunkBytes = DEFAULT_CHUNK_BYTES): Iterable<Uint8Array> {
    if (chunkBytes === Infinity) {
      yield this.bytes;
      return;
    }
    for (let o = 0; o < this.bytes.byteLength; o += chunkBytes) yield this.bytes.subarray(o, o + chunkBytes);
  }

  contents(): TreeContents {
    return this.parse().contents();
  }

  /** The tables the parse built on its way (a restarting node's tree adopts them). */
  takeTables(): TreeTables | undefined {
    return this.parse().takeTables();
  }

  private parse(): FrozenState {
    if (!this.parsed) {
      const d = new SnapshotDecoder();
      d.push(this.bytes);
      this.parsed = d.finish();
    }
    return this.parsed;
  }
}

/**
 * Parses an encoded snapshot pushed in pieces of any size, each piece as far as it goes, so the
 * work per piece is proportional to the piece. Throws on malformed input.
 */
export class SnapshotDecoder {
  private carry: Buffer = Buffer.alloc(0);
  private applied: Zxid | undefined;
  private nodesLeft = 0;
  private doneLeft = 0;
  private readonly paths: string[] = [];
  private readonly nodes: Znode[] = [];
  private readonly clientIds: string[] = [];
  private readonly requestIds: number[] = [];
  private readonly dones: Zxid[] = [];
  /**
   * Filled as the records arrive, so the tree that installs the snapshot need not build them. The
   * requests' table holds them all: the tree that adopts it applies its own window.
   */
  private readonly tables: TreeTables = { nodes: new Map(), done: new DoneTable(Infinity) };
  private received = 0;

  /** Bytes pushed so far. */
  get bytes(): number {
    return this.received;
  }

  /** `piece` is kept (znodes' data are views of it): its memory must not be reused. */
  push(piece: Uint8Array): void {
    this.received += piece.byteLength;
    const view = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    const b = this.carry.length > 0 ? Buffer.concat([this.carry, view]) : view;
    let o = 0;
    if (this.applied === undefined) {
      if (b.length < HEAD_BYTES) {
        this.carry = Buffer.from(b);
        return;
      }
      this.applied = { epoch: b.readUInt32BE(0), counter: b.readUInt32BE(4) };
      this.nodesLeft = b.readUInt32BE(8);
      this.doneLeft = b.readUInt32BE(12);
      o = HEAD_BYTES;
    }
    while (this.nodesLeft > 0 && o + ZNODE_HEAD <= b.length) {
      const plen = b.readUInt32BE(o);
      const dlen = b.readUInt32BE(o + 16);
      const end = o + ZNODE_HEAD + plen + dlen;
      if (end > b.length) break;
      const path = b.toString('utf8', o + ZNODE_HEAD, o + ZNODE_HEAD + plen);
      // A view, not a copy: a piece's memory is never reused (a frame, a file read: see
      // util/wire/frame-decoder.ts), as with a PROPOSAL's txns. Copying each znode made one small
      // ArrayBuffer per znode, 250,000 for 250 MB, whose garbage collection held the loop.
      const data = new Uint8Array(b.buffer, b.byteOffset + o + ZNODE_HEAD + plen, dlen);
      const node: Znode = {
        data,
        version: b.readUInt32BE(o + 4),
        zxid: { epoch: b.readUInt32BE(o + 8), counter: b.readUInt32BE(o + 12) },
      };
      this.paths.push(path);
      this.nodes.push(node);
      this.tables.nodes.set(path, { znode: node });
      this.nodesLeft--;
      o = end;
    }
    while (this.nodesLeft === 0 && this.doneLeft > 0 && o + DONE_HEAD <= b.length) {
      const klen = b.readUInt32BE(o);
      const end = o + DONE_HEAD + klen;
      if (end > b.length) break;
      const { clientId, requestId } = parseKey(b, o + DONE_HEAD, end);
      const zxid = { epoch: b.readUInt32BE(o + 4), counter: b.readUInt32BE(o + 8) };
      this.clientIds.push(clientId);
      this.requestIds.push(requestId);
      this.dones.push(zxid);
      // A snapshot names each request once; a second would be a table no tree could have held.
      if (this.tables.done.addOnce(clientId, requestId, zxid) !== undefined) {
        throw new Error(`snapshot names request ${requestId} of ${JSON.stringify(clientId)} twice`);
      }
      this.doneLeft--;
      o = end;
    }
    if (this.nodesLeft === 0 && this.doneLeft === 0 && o < b.length) {
      throw new Error(`snapshot has ${b.length - o} trailing bytes`);
    }
    // Only a partial record is carried over (copied, so the piece itself is not kept).
    this.carry = o < b.length ? Buffer.from(b.subarray(o)) : Buffer.alloc(0);
  }

  /** The whole snapshot; throws if it is incomplete. */
  finish(): FrozenState {
    if (this.applied === undefined || this.nodesLeft > 0 || this.doneLeft > 0 || this.carry.length > 0) {
      throw new Error('snapshot is truncated');
    }
    const c = {
      applied: this.applied,
      paths: this.paths,
      nodes: this.nodes,
      clientIds: this.clientIds,
      requestIds: this.requestIds,
      dones: this.dones,
    };
    return new FrozenState(c, this.received, this.tables);
  }
}
