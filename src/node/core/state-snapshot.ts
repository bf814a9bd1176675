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
//   then per applied request u32 key length | u32 zxid epoch | u32 zxid counter | key.
import type { Zxid } from './zxid.js';

export interface Znode {
  readonly data: Uint8Array;
  readonly version: number;
  readonly zxid: Zxid;
}

/** The contents of a tree at one point: what DataTree builds itself from. */
export interface TreeContents {
  readonly applied: Zxid;
  readonly nodes: ReadonlyArray<readonly [string, Znode]>;
  readonly done: ReadonlyArray<readonly [string, Zxid]>;
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
}

/** All of a snapshot's bytes in one buffer (tests, small states). */
export function snapshotBytes(s: EncodedSnapshot): Buffer {
  return Buffer.concat([...s.chunks(Infinity)], s.byteLength);
}

export const DEFAULT_CHUNK_BYTES = 1024 * 1024;
const HEAD_BYTES = 16;
const ZNODE_HEAD = 20;
const DONE_HEAD = 12;

/** A snapshot of tables already copied: encodes itself on demand. */
export class FrozenState implements StateSnapshot {
  constructor(
    private readonly c: TreeContents,
    private size?: number,
  ) {}

  get zxid(): Zxid {
    return this.c.applied;
  }

  get byteLength(): number {
    if (this.size === undefined) {
      let n = HEAD_BYTES;
      for (const [path, z] of this.c.nodes)
        n += ZNODE_HEAD + Buffer.byteLength(path, 'utf8') + z.data.byteLength;
      for (const [key] of this.c.done) n += DONE_HEAD + Buffer.byteLength(key, 'utf8');
      this.size = n;
    }
    return this.size;
  }

  contents(): TreeContents {
    return this.c;
  }

  *chunks(chunkBytes = DEFAULT_CHUNK_BYTES): Iterable<Uint8Array> {
    const c = this.c;
    let parts: Buffer[] = [];
    let bytes = 0;
    const head = Buffer.alloc(HEAD_BYTES);
    head.writeUInt32BE(c.applied.epoch, 0);
    head.writeUInt32BE(c.applied.counter, 4);
    head.writeUInt32BE(c.nodes.length, 8);
    head.writeUInt32BE(c.done.length, 12);
    parts.push(head);
    bytes += HEAD_BYTES;
    const cut = function* (): Generator<Uint8Array> {
      if (bytes < chunkBytes) return;
      yield Buffer.concat(parts, bytes);
      parts = [];
      bytes = 0;
    };
    for (const [path, node] of c.nodes) {
      const p = Buffer.from(path, 'utf8');
      const h = Buffer.allocUnsafe(ZNODE_HEAD);
      h.writeUInt32BE(p.length, 0);
      h.writeUInt32BE(node.version, 4);
      h.writeUInt32BE(node.zxid.epoch, 8);
      h.writeUInt32BE(node.zxid.counter, 12);
      h.writeUInt32BE(node.data.byteLength, 16);
      parts.push(h, p, Buffer.from(node.data.buffer, node.data.byteOffset, node.data.byteLength));
      bytes += ZNODE_HEAD + p.length + node.data.byteLength;
      yield* cut();
    }
    for (const [key, z] of c.done) {
      const k = Buffer.from(key, 'utf8');
      const h = Buffer.allocUnsafe(DONE_HEAD);
      h.writeUInt32BE(k.length, 0);
      h.writeUInt32BE(z.epoch, 4);
      h.writeUInt32BE(z.counter, 8);
      parts.push(h, k);
      bytes += DONE_HEAD + k.length;
      yield* cut();
    }
    if (bytes > 0) yield Buffer.concat(parts, bytes);
  }
}

/**
 * A snapshot already in encoded form (read from a file, whose header gives `zxid`). Parsed only
 * when its contents are asked for.
 */
export class EncodedState implements StateSnapshot {
  private parsed: TreeContents | undefined;

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
    if (!this.parsed) {
      const d = new SnapshotDecoder();
      d.push(this.bytes);
      this.parsed = d.finish().contents();
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
  private readonly nodes: Array<readonly [string, Znode]> = [];
  private readonly done: Array<readonly [string, Zxid]> = [];
  private received = 0;

  /** Bytes pushed so far. */
  get bytes(): number {
    return this.received;
  }

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
      // A copy: the piece may be a large, short-lived buffer; don't pin it per znode.
      const data = Uint8Array.prototype.slice.call(b, o + ZNODE_HEAD + plen, end);
      this.nodes.push([
        path,
        {
          data,
          version: b.readUInt32BE(o + 4),
          zxid: { epoch: b.readUInt32BE(o + 8), counter: b.readUInt32BE(o + 12) },
        },
      ]);
      this.nodesLeft--;
      o = end;
    }
    while (this.nodesLeft === 0 && this.doneLeft > 0 && o + DONE_HEAD <= b.length) {
      const klen = b.readUInt32BE(o);
      const end = o + DONE_HEAD + klen;
      if (end > b.length) break;
      this.done.push([
        b.toString('utf8', o + DONE_HEAD, end),
        { epoch: b.readUInt32BE(o + 4), counter: b.readUInt32BE(o + 8) },
      ]);
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
    return new FrozenState({ applied: this.applied, nodes: this.nodes, done: this.done }, this.received);
  }
}
