// Jepsen's final read on the POLE node (the pole target's checkAckedWrites): after the faults, every
// acknowledged write must be on every live node. A fence write through the serving leader comes
// first; once a node has applied the fence it has applied everything committed before it, so a
// write missing then is lost, not late. It speaks the node's own client, hence it lives here.
import type { Zxid } from '../../vocabulary/zxid.js';
import { compareZxid, formatZxid } from '../../vocabulary/zxid.js';
import { PoleClient, PoleError } from '../../node/net/client.js';
import { EndpointPool, writeWithRetry } from '../../load/retrying-writer.js';
import type { AckedWrite, Address, CheckResult } from '../../vocabulary/names.js';

const FENCE = '/pole-bench/fence';

export async function checkAckedWrites(opts: {
  readonly leader: Address;
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly address: Address }>;
  readonly acked: readonly AckedWrite[];
  /** Reads in flight per node. */
  readonly concurrency?: number;
  readonly runId: string;
}): Promise<CheckResult> {
  const pool = new EndpointPool([opts.leader]);
  let fence: Zxid;
  try {
    fence = (
      await writeWithRetry(
        pool,
        0,
        FENCE,
        new Uint8Array([1]),
        { clientId: `${opts.runId}-checker`, requestId: 1 },
        Date.now() + 15_000,
      )
    ).zxid;
  } finally {
    await pool.close();
  }
  // Per path, the last acknowledged zxid must be there, and the path must have been written at
  // least as often as it had acknowledged writes (its version counts the writes applied, from 0;
  // a retried request applies once). A path written once (the default load) needs version ≥ 0;
  // one written over and over (workload.keys) cannot hide an acknowledged write lost before a
  // later acknowledged one, only one replaced by a write nobody saw acknowledged.
  const last = new Map<string, { zxid: Zxid; count: number }>();
  for (const w of opts.acked) {
    const prev = last.get(w.path);
    if (!prev) last.set(w.path, { zxid: w.zxid, count: 1 });
    else {
      prev.count++;
      if (compareZxid(w.zxid, prev.zxid) > 0) prev.zxid = w.zxid;
    }
  }
  const lost: string[] = [];
  await Promise.all(
    opts.nodes.map(async (node) => {
      const client = await withDeadline(
        PoleClient.connect(node.address.host, node.address.port, { requestTimeoutMs: 10_000 }),
        10_000,
        `connecting to ${node.id} for the final read`,
      );
      try {
        await waitApplied(client, fence);
        const entries = [...last];
        const width = opts.concurrency ?? 256;
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < entries.length) {
            const [path, want] = entries[next++]!;
            const r = await readServed(client, path);
            if (!r || compareZxid(r.zxid, want.zxid) < 0 || r.version + 1 < want.count) {
              // What was there against what was acknowledged: a write never applied and a path
              // written fewer times than acknowledged point to different faults.
              const found = r ? `${formatZxid(r.zxid)}, ${r.version + 1} writes` : 'absent';
              lost.push(
                `${path}@${node.id} (read ${found}; acknowledged up to ${formatZxid(want.zxid)}, ${want.count} writes)`,
              );
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(width, entries.length) }, worker));
      } finally {
        await client.close();
      }
    }),
  );
  return { checked: last.size, writes: opts.acked.length, lost };
}

/**
 * A read the member answers: one that is not serving now (an election after the load, say) is
 * asked again until it is, for 15 s at most.
 */
async function readServed(
  client: PoleClient,
  path: string,
): Promise<Awaited<ReturnType<PoleClient['read']>>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await client.read(path);
    } catch (err) {
      if (!(err instanceof PoleError && err.code === 'NOT_SERVING') || Date.now() > deadline) throw err;
      await new Promise((res) => setTimeout(res, 20));
    }
  }
}

async function waitApplied(client: PoleClient, z: Zxid): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await readServed(client, FENCE);
    if (r && compareZxid(r.zxid, z) >= 0) return;
    if (Date.now() > deadline) throw new Error('a node did not apply the fence write within 15 s');
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** A connection attempt to a vanished address can hang for minutes (SYN retries): bound it. */
async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
