// Jepsen's final read on ZooKeeper: after the faults, every live member is brought up to date
// with its leader (`sync`), then every slot the load wrote is read on it. An acknowledged write
// is there if its slot was modified by it or later (the slot's mzxid is at least the write's
// zxid) and the slot has been modified at least as often as it had acknowledged writes (version).
// What this cannot see: an acknowledged write lost while a later write to the same slot, never
// acknowledged to anyone (it timed out), was applied in its place.
import type { AckedWrite, Address, CheckResult } from '../../vocabulary/names.js';
import { compareZxid, formatZxid, type Zxid } from '../../vocabulary/zxid.js';
import { ZkClient, ZkError } from './client/zk-client.js';
import { slotOf } from '../slots.js';

interface SlotExpectation {
  zxid: Zxid;
  count: number;
}

export async function checkZkAckedWrites(opts: {
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly address: Address }>;
  readonly acked: readonly AckedWrite[];
  readonly concurrency?: number;
}): Promise<CheckResult> {
  const slots = new Map<string, SlotExpectation>();
  for (const w of opts.acked) {
    const slot = slotOf(w.path);
    const s = slots.get(slot);
    if (!s) slots.set(slot, { zxid: w.zxid, count: 1 });
    else {
      s.count++;
      if (compareZxid(w.zxid, s.zxid) > 0) s.zxid = w.zxid;
    }
  }
  const entries = [...slots];
  const dirs = new Set(entries.map(([slot]) => slot.slice(0, slot.lastIndexOf('/'))));
  const concurrency = Math.min(opts.concurrency ?? 256, entries.length);
  const lost: string[] = [];
  await Promise.all(
    opts.nodes.map(async (node) => {
      lost.push(...(await readMemberWhenServing(node, entries, dirs, concurrency)));
    }),
  );
  return { checked: entries.length, writes: opts.acked.length, lost };
}

/**
 * One member's final read, done again from the start on a new session if the member drops the
 * session part-way: a follower that loses its leader and re-syncs closes its clients' connections
 * (a swarm CI run: a ZooKeeper member's late election closed the check's connection, and the run
 * failed with "connection closed"). What a dropped read found is discarded with it.
 */
async function readMemberWhenServing(
  node: { readonly id: string; readonly address: Address },
  entries: ReadonlyArray<[string, SlotExpectation]>,
  dirs: ReadonlySet<string>,
  concurrency: number,
): Promise<string[]> {
  // One bound for the connects and the reads done again: a member that keeps dropping sessions
  // fails the check within it, not after a fresh one per session.
  const until = Date.now() + CONNECT_WITHIN_MS;
  for (;;) {
    const zk = await connectWhenServing(node.address, until);
    try {
      return await readMember(zk, node.id, entries, dirs, concurrency);
    } catch (err) {
      if (!(err instanceof ZkError && err.code === 'DISCONNECTED') || Date.now() >= until) throw err;
    } finally {
      await zk.close();
    }
  }
}

async function readMember(
  zk: ZkClient,
  id: string,
  entries: ReadonlyArray<[string, SlotExpectation]>,
  dirs: ReadonlySet<string>,
  concurrency: number,
): Promise<string[]> {
  const lost: string[] = [];
  for (const d of dirs) await zk.sync(d);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < entries.length) {
      const [slot, want] = entries[next++]!;
      const stat = await zk.exists(slot);
      if (!stat) lost.push(`${slot}@${id} (missing)`);
      else if (compareZxid(stat.mzxid, want.zxid) < 0)
        lost.push(`${slot}@${id} (mzxid ${formatZxid(stat.mzxid)} < acked ${formatZxid(want.zxid)})`);
      else if (stat.version < want.count)
        lost.push(`${slot}@${id} (version ${stat.version} < ${want.count} acked writes)`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return lost;
}

/** How long a member may take to accept a session for the final read, and to keep one for it. */
const CONNECT_WITHIN_MS = 20_000;

/**
 * A session on a member, retried while it refuses one: a follower re-syncing with its leader (after
 * a failover, or one that lost its leader on a busy machine) closes new connections until it serves.
 */
async function connectWhenServing(a: Address, until: number): Promise<ZkClient> {
  for (;;) {
    try {
      return await ZkClient.connect(a.host, a.port, { requestTimeoutMs: 15_000, connectTimeoutMs: 10_000 });
    } catch (err) {
      if (Date.now() >= until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
