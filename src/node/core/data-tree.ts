// The replicated state: path → (data, version, zxid), plus the table of applied client requests
// that makes a retried write (same clientId, requestId) apply once. Both are part of snapshots, so
// deduplication survives failover and SNAP sync.
import type { Txn } from './types.js';
import { compareZxid, ZERO_ZXID, type Zxid } from './zxid.js';

export interface Znode {
  readonly data: Uint8Array;
  readonly version: number;
  readonly zxid: Zxid;
}

export interface ApplyResult {
  /** False when the request had been applied before (a retry): nothing changed. */
  readonly applied: boolean;
  /** The zxid at which the request took effect (the earlier one for a retry). */
  readonly zxid: Zxid;
}

/** How many applied requests are remembered for deduplication (oldest forgotten first). */
export const DEFAULT_DEDUP_WINDOW = 200_000;

export function requestKey(clientId: string, requestId: number): string {
  return `${clientId}\u0000${requestId}`;
}

export class DataTree {
  private readonly nodes = new Map<string, Znode>();
  /** Insertion-ordered, so eviction and serialisation are the same on every replica. */
  private readonly done = new Map<string, Zxid>();
  private applied: Zxid = ZERO_ZXID;

  constructor(private readonly dedupWindow = DEFAULT_DEDUP_WINDOW) {}

  get lastApplied(): Zxid {
    return this.applied;
  }

  get size(): number {
    return this.nodes.size;
  }

  get(path: string): Znode | undefined {
    return this.nodes.get(path);
  }

  /** The zxid at which (clientId, requestId) was applied, if it was and is still remembered. */
  lookupDone(key: string): Zxid | undefined {
    return this.done.get(key);
  }

  apply(txn: Txn): ApplyResult {
    if (compareZxid(txn.zxid, this.applied) <= 0) {
      throw new Error(
        `apply out of order: ${txn.zxid.epoch}:${txn.zxid.counter} after ${this.applied.epoch}:${this.applied.counter}`,
      );
    }
    this.applied = txn.zxid;
    const key = requestKey(txn.clientId, txn.requestId);
    const earlier = this.done.get(key);
    if (earlier) return { applied: false, zxid: earlier };
    const prev = this.nodes.get(txn.path);
    this.nodes.set(txn.path, { data: txn.data, version: prev ? prev.version + 1 : 0, zxid: txn.zxid });
    this.done.set(key, txn.zxid);
    if (this.done.size > this.dedupWindow) {
      const oldest = this.done.keys().next();
      if (!oldest.done) this.done.delete(oldest.value);
    }
    return { applied: true, zxid: txn.zxid };
  }

  /** Binary snapshot: header, znodes, then the dedup table, all in insertion order. */
  serialize(): Uint8Array {
    const parts: Buffer[] = [];
    const head = Buffer.alloc(16);
    head.writeUInt32BE(this.applied.epoch, 0);
    head.writeUInt32BE(this.applied.counter, 4);
    head.writeUInt32BE(this.nodes.size, 8);
    head.writeUInt32BE(this.done.size, 12);
    parts.push(head);
    for (const [path, node] of this.nodes) {
      const p = Buffer.from(path, 'utf8');
      const h = Buffer.alloc(4 + 4 + 4 + 4 + 4);
      h.writeUInt32BE(p.length, 0);
      h.writeUInt32BE(node.version, 4);
      h.writeUInt32BE(node.zxid.epoch, 8);
      h.writeUInt32BE(node.zxid.counter, 12);
      h.writeUInt32BE(node.data.length, 16);
      parts.push(h, p, Buffer.from(node.data.buffer, node.data.byteOffset, node.data.byteLength));
    }
    for (const [key, z] of this.done) {
      const k = Buffer.from(key, 'utf8');
      const h = Buffer.alloc(12);
      h.writeUInt32BE(k.length, 0);
      h.writeUInt32BE(z.epoch, 4);
      h.writeUInt32BE(z.counter, 8);
      parts.push(h, k);
    }
    return Buffer.concat(parts);
  }

  static deserialize(bytes: Uint8Array, dedupWindow = DEFAULT_DEDUP_WINDOW): DataTree {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const tree = new DataTree(dedupWindow);
    let o = 0;
    const u32 = (): number => {
      const v = b.readUInt32BE(o);
      o += 4;
      return v;
    };
    const take = (n: number): Buffer => {
      if (o + n > b.length) throw new Error('snapshot is truncated');
      const s = b.subarray(o, o + n);
      o += n;
      return s;
    };
    tree.applied = { epoch: u32(), counter: u32() };
    const nodes = u32();
    const done = u32();
    for (let i = 0; i < nodes; i++) {
      const plen = u32();
      const version = u32();
      const zx = { epoch: u32(), counter: u32() };
      const dlen = u32();
      const path = take(plen).toString('utf8');
      // Copy: the snapshot buffer may be large and short-lived; don't pin it per znode.
      tree.nodes.set(path, { data: Uint8Array.prototype.slice.call(take(dlen)), version, zxid: zx });
    }
    for (let i = 0; i < done; i++) {
      const klen = u32();
      const zx = { epoch: u32(), counter: u32() };
      tree.done.set(take(klen).toString('utf8'), zx);
    }
    if (o !== b.length) throw new Error(`snapshot has ${b.length - o} trailing bytes`);
    return tree;
  }
}
