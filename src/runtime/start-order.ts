// The order a plan's members start in, the same on every runtime: the first ones together, then,
// once the member the plan names serves (ZooKeeper's initial leader), the rest.
import type { NodeId } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import type { MemberPlan } from '../targets/member-plan.js';

export async function startInOrder(
  order: MemberPlan['startOrder'],
  start: (ids: readonly NodeId[]) => Promise<void>,
  events: { waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number): Promise<ClusterEvent> },
  timeoutMs: number,
): Promise<void> {
  await start(order.first);
  if (order.then.length === 0) return;
  const after = order.after;
  if (after !== undefined) await events.waitFor((e) => e.ev === 'serving' && e.node === after, timeoutMs);
  await start(order.then);
}
