// The replicated state: path → (data, version, zxid), plus the table of applied client requests
// that makes a retried write (same clientId, requestId) apply once. Both are part of snapshots, so
// deduplication survives failover and SNAP sync.
import type { Txn } from './types.js';
import { compareZxid, ZERO_ZXID, type Zxid } from './zxid.js';
import {
  FrozenState,
  SnapshotDecoder,
  snapshotBytes,
  type StateSnapshot,
  type Znode,
} from './state-snapshot.js';

export type { Znode };

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

  /**
   * The state now, as a snapshot: copies the tables' entries (not the data, which is immutable)
   * and nothing else, so it costs little even for a large state; encoding happens later, in chunks.
   */
  freeze(): FrozenState {
    return new FrozenState({ applied: this.applied, nodes: [...this.nodes], done: [...this.done] });
  }

  /** A tree of its own holding a snapshot's state. */
  static fromSnapshot(snap: StateSnapshot, dedupWindow = DEFAULT_DEDUP_WINDOW): DataTree {
    const c = snap.contents();
    const tree = new DataTree(dedupWindow);
    tree.applied = c.applied;
    for (const [path, node] of c.nodes) tree.nodes.set(path, node);
    for (const [key, z] of c.done) tree.done.set(key, z);
    return tree;
  }

  /** The whole snapshot in one buffer (tests, small states). */
  serialize(): Uint8Array {
    return snapshotBytes(this.freeze());
  }

  static deserialize(bytes: Uint8Array, dedupWindow = DEFAULT_DEDUP_WINDOW): DataTree {
    const d = new SnapshotDecoder();
    d.push(bytes);
    return DataTree.fromSnapshot(d.finish(), dedupWindow);
  }
}
