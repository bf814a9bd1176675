// The replicated state: path → (data, version, zxid), plus the table of applied client requests
// that makes a retried write (same clientId, requestId) apply once. Both are part of snapshots, so
// deduplication survives failover and SNAP sync.
import { DoneTable } from './done-table.js';
import type { Txn } from './types.js';
import { compareZxid, ZERO_ZXID, type Zxid } from '../../vocabulary/zxid.js';
import {
  EMPTY_STATE_BYTES,
  FrozenState,
  doneTableBytes,
  znodeBytes,
  SnapshotDecoder,
  snapshotBytes,
  type StateSnapshot,
  type Znode,
  type ZnodeSlot,
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
  private nodes = new Map<string, ZnodeSlot>();
  /** Insertion-ordered, so eviction and serialisation are the same on every replica. */
  private done: DoneTable;
  private applied: Zxid = ZERO_ZXID;
  /** The encoded size of the znodes (and the header), kept as they change: a snapshot's size without a pass. */
  private nodeBytes = EMPTY_STATE_BYTES;

  constructor(dedupWindow = DEFAULT_DEDUP_WINDOW) {
    this.done = new DoneTable(dedupWindow);
  }

  get lastApplied(): Zxid {
    return this.applied;
  }

  get size(): number {
    return this.nodes.size;
  }

  get(path: string): Znode | undefined {
    return this.nodes.get(path)?.znode;
  }

  /** The zxid at which (clientId, requestId) was applied, if it was and is still remembered. */
  lookupDone(clientId: string, requestId: number): Zxid | undefined {
    return this.done.get(clientId, requestId);
  }

  /** The size of this state encoded as a snapshot. */
  get byteLength(): number {
    return this.nodeBytes + doneTableBytes(this.done);
  }

  apply(txn: Txn): ApplyResult {
    if (compareZxid(txn.zxid, this.applied) <= 0) {
      throw new Error(
        `apply out of order: ${txn.zxid.epoch}:${txn.zxid.counter} after ${this.applied.epoch}:${this.applied.counter}`,
      );
    }
    this.applied = txn.zxid;
    const earlier = this.done.addOnce(txn.clientId, txn.requestId, txn.zxid);
    if (earlier) return { applied: false, zxid: earlier };
    const slot = this.nodes.get(txn.path);
    if (slot) {
      const prev = slot.znode;
      // A new znode, not the old one changed: a snapshot taken before holds the old one.
      slot.znode = { data: txn.data, version: prev.version + 1, zxid: txn.zxid };
      this.nodeBytes += txn.data.byteLength - prev.data.byteLength;
    } else {
      this.nodes.set(txn.path, { znode: { data: txn.data, version: 0, zxid: txn.zxid } });
      this.nodeBytes += znodeBytes(txn.path, txn.data.byteLength);
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
    this.nodes.forEach((slot, path) => {
      paths[i] = path;
      nodes[i++] = slot.znode;
    });
    const clientIds = new Array<string>(this.done.size);
    const requestIds = new Array<number>(this.done.size);
    const dones = new Array<Zxid>(this.done.size);
    this.done.copyInto(clientIds, requestIds, dones);
    return new FrozenState(
      { applied: this.applied, paths, nodes, clientIds, requestIds, dones },
      this.byteLength,
    );
  }

  /** A tree of its own holding a snapshot's state. */
  static fromSnapshot(snap: StateSnapshot, dedupWindow = DEFAULT_DEDUP_WINDOW): DataTree {
    const c = snap.contents();
    const tree = new DataTree(dedupWindow);
    tree.applied = c.applied;
    // A snapshot parsed as it arrived comes with its tables built: adopted, not built again.
    const tables = snap.takeTables?.();
    let done: DoneTable;
    if (tables) {
      tree.nodes = tables.nodes;
      done = tables.done;
    } else {
      for (let k = 0; k < c.nodes.length; k++)
        tree.nodes.set(c.paths[k] as string, { znode: c.nodes[k] as Znode });
      done = new DoneTable(Infinity);
      for (let k = 0; k < c.dones.length; k++) {
        done.addOnce(c.clientIds[k] as string, c.requestIds[k] as number, c.dones[k] as Zxid);
      }
    }
    // All the snapshot's requests are in `done` yet: the rest of its bytes are the znodes'.
    tree.nodeBytes = snap.byteLength - doneTableBytes(done);
    done.setWindow(dedupWindow);
    tree.done = done;
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
