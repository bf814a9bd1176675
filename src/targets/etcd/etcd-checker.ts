// Jepsen's final read on etcd: after the faults, every slot the load wrote is read on every live
// member with a linearizable range (the member confirms with the leader that it has applied up to
// the leader's commit before it answers). An acknowledged write is there if its slot was modified
// by it or later (mod_revision at least the write's revision) and the slot has been written at
// least as often as it had acknowledged writes (version). What this cannot see, as on ZooKeeper:
// an acknowledged write lost while a later write to the same slot, never acknowledged, took its place.
import type { AckedWrite, Address, CheckResult } from '../../vocabulary/names.js';
import { slotOf } from '../slots.js';
import { EtcdGateway, type KeyStat } from './etcd-gateway.js';

interface SlotExpectation {
  revision: number;
  count: number;
}

export async function checkEtcdAckedWrites(opts: {
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly address: Address }>;
  readonly acked: readonly AckedWrite[];
}): Promise<CheckResult> {
  const slots = new Map<string, SlotExpectation>();
  for (const w of opts.acked) {
    const slot = slotOf(w.path);
    const s = slots.get(slot);
    if (!s) slots.set(slot, { revision: w.zxid.counter, count: 1 });
    else {
      s.count++;
      s.revision = Math.max(s.revision, w.zxid.counter);
    }
  }
  const dirs = new Set([...slots.keys()].map((slot) => slot.slice(0, slot.lastIndexOf('/') + 1)));
  const lost: string[] = [];
  await Promise.all(
    opts.nodes.map(async (node) => {
      const gw = new EtcdGateway(node.address, 15_000);
      try {
        const found = new Map<string, KeyStat>();
        for (const d of dirs) for (const k of (await gw.rangePrefix(d)).keys) found.set(k.key, k);
        for (const [slot, want] of slots) {
          const got = found.get(slot);
          if (!got) lost.push(`${slot}@${node.id} (missing)`);
          else if (got.modRevision < want.revision)
            lost.push(`${slot}@${node.id} (mod_revision ${got.modRevision} < acked ${want.revision})`);
          else if (got.version < want.count)
            lost.push(`${slot}@${node.id} (version ${got.version} < ${want.count} acked writes)`);
        }
      } finally {
        gw.close();
      }
    }),
  );
  return { checked: slots.size, writes: opts.acked.length, lost };
}
