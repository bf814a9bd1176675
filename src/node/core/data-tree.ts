// The replicated state: path → (data, version, zxid), plus the table of applied client requests
// that makes a retried write (same clientId, requestId) apply once. Both are part of snapshots, so
// deduplication survives failover and SNAP sync.
import type { Txn } from './types.js';
import { compareZxid, ZERO_ZXID, type Zxid } from './zxid.js';
import {
  EMPTY_STATE_BYTES,
  FrozenState,
  doneBytes,
  znodeBytes,
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
  private nodes = new Map<string, Znode>();
  /** Insertion-ordered, so eviction and serialisation are the same on every replica. */
  private done = new Map<string, Zxid>();
  private applied: Zxid = ZERO_ZXID;
  /**
   * Walks `done` from its oldest entry, evicting as it goes. A fresh `done.keys().next()` per
   * eviction skips every entry deleted since the table last compacted (V8 leaves holes until then):
   * a median of ~50 µs per apply with the window full (`pole-bench bench state`, 1.7 µs now), which
   * a restarted follower applying 94,538 logged txns in one turn paid as a 1.2 s stall in the soak. A live iterator resumes where it stopped (Map
   * iteration follows deletions, insertions and rehashes), so eviction is O(1).
   */
  private evictor: MapIterator<string> | undefined;
  /** The size of this state encoded, kept as it changes, so a snapshot knows it without a pass. */
  private bytes = EMPTY_STATE_BYTES;

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
    this.bytes += prev
      ? txn.data.byteLength - prev.data.byteLength
      : znodeBytes(txn.path, txn.data.byteLength);
    this.done.set(key, txn.zxid);
    this.bytes += doneBytes(key);
    if (this.done.size > this.dedupWindow) {
      this.evictor ??= this.done.keys();
      const oldest = this.evictor.next();
      if (!oldest.done) {
        this.done.delete(oldest.value);
        this.bytes -= doneBytes(oldest.value);
      }
    }
    return { applied: true, zxid: txn.zxid };
  }

  /**
   * The state now, as a snapshot: copies the tables' entries (not the data, which is immutable)
   * and nothing else, so it costs little even for a large state; encoding happens later, in chunks.
   */
  freeze(): FrozenState {
    // forEach into arrays of the right length: no [key, value] pair per entry.
    const paths = new Array<string>(this.nodes.size);
    const nodes = new Array<Znode>(this.nodes.size);
    let i = 0;
    this.nodes.forEach((node, path) => {
      paths[i] = path;
      nodes[i++] = node;
    });
    const keys = new Array<string>(this.done.size);
    const dones = new Array<Zxid>(this.done.size);
    i = 0;
    this.done.forEach((z, key) => {
      keys[i] = key;
      dones[i++] = z;
    });
    return new FrozenState({ applied: this.applied, paths, nodes, keys, dones }, this.bytes);
  }

  /** A tree of its own holding a snapshot's state. */
  static fromSnapshot(snap: StateSnapshot, dedupWindow = DEFAULT_DEDUP_WINDOW): DataTree {
    const c = snap.contents();
    const tree = new DataTree(dedupWindow);
    tree.applied = c.applied;
    tree.bytes = snap.byteLength;
    // A snapshot parsed as it arrived comes with its tables built: adopted, not built again.
    const tables = snap.takeTables?.();
    if (tables) {
      tree.nodes = tables.nodes;
      tree.done = tables.done;
    } else {
      for (let k = 0; k < c.nodes.length; k++) tree.nodes.set(c.paths[k] as string, c.nodes[k] as Znode);
      for (let k = 0; k < c.keys.length; k++) tree.done.set(c.keys[k] as string, c.dones[k] as Zxid);
    }
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
