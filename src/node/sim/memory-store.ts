// The simulator's disk: applies PersistOps exactly as DurableStore promises to, and hands back
// what a restarted node would recover. Everything applied counts as durable: the simulator applies
// a turn's ops when its simulated disk has made them so (SimOptions.fsyncMs).
import type { PersistOp, RecoveredState } from '../core/core-types.js';
import type { NodeId, Txn } from '../core/types.js';
import type { StateSnapshot } from '../core/state-snapshot.js';
import { compareZxid } from '../../vocabulary/zxid.js';

export class MemoryStore {
  private acceptedEpoch = 0;
  private currentEpoch = 0;
  private acceptedLeader: NodeId | undefined;
  private snapshot: StateSnapshot | undefined;
  private txns: Txn[] = [];

  apply(ops: readonly PersistOp[]): void {
    for (const op of ops) {
      switch (op.op) {
        case 'append':
          for (const t of op.txns) {
            const last = this.txns[this.txns.length - 1]?.zxid ?? this.snapshot?.zxid;
            if (last && compareZxid(t.zxid, last) <= 0) throw new Error('store: append out of order');
            this.txns.push(t);
          }
          break;
        case 'truncate':
          this.txns = this.txns.filter((t) => compareZxid(t.zxid, op.after) <= 0);
          break;
        case 'epochs':
          this.acceptedEpoch = op.acceptedEpoch;
          this.currentEpoch = op.currentEpoch;
          this.acceptedLeader = op.acceptedLeader;
          break;
        case 'snapshot':
          this.snapshot = op.snapshot;
          this.txns = op.replacesLog
            ? []
            : this.txns.filter((t) => compareZxid(t.zxid, op.snapshot.zxid) > 0);
          break;
      }
    }
  }

  recover(): RecoveredState {
    return {
      acceptedEpoch: this.acceptedEpoch,
      currentEpoch: this.currentEpoch,
      ...(this.acceptedLeader !== undefined ? { acceptedLeader: this.acceptedLeader } : {}),
      ...(this.snapshot ? { snapshot: this.snapshot } : {}),
      txns: [...this.txns],
    };
  }
}
