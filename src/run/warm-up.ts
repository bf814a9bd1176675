// Warm-up, before the clock runs: unmeasured writes to the leader for the target's warm-up time,
// so that the first measured seconds do not pay for compiling the members' write path (a JVM's
// JIT needs longer than Node's), and meanwhile whatever the agents' writes need in place
// (ZooKeeper: the znodes they set).
import { WARMUP_PREFIX, warmUp } from '../measure/node-floor.js';
import type { NodeId } from '../vocabulary/names.js';
import { PATH_PREFIX } from './load-phase.js';
import type { RunContext } from './run-context.js';

export async function warmUpCluster(run: RunContext, leader: NodeId): Promise<void> {
  const { rt, t, o } = run;
  const target = rt.target;
  await target.prepareWrites(rt.clientAddress(leader), WARMUP_PREFIX);
  // The agents' paths are prepared while the warm-up writes, not after it: ZooKeeper creates a
  // thousand slots per data center (one by one that took a second or more each on the 2-core VM;
  // one multi now), and nothing of the warm-up is measured. All are settled before a failure is
  // thrown, so none is left running.
  const [warm, ...prepared] = await Promise.allSettled([
    warmUp(
      { id: leader, ...rt.clientAddress(leader) },
      {
        rate: t.workload.rate,
        size: t.workload.size,
        durationMs: target.warmUpMs,
        clientId: `run${o.seed}-warmup`,
        connect: target.connect,
      },
    ),
    ...t.datacenters.map((dc) => target.prepareWrites(rt.clientAddress(leader), `${PATH_PREFIX}/${dc.name}`)),
  ]);
  for (const r of [warm!, ...prepared]) if (r.status === 'rejected') throw r.reason;
}
