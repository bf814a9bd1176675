// How a plan's members start, the same on every runtime: the first ones together, then, once the
// member the plan names serves (ZooKeeper's initial leader), the rest; then the plan's own step
// after start (etcd hands leadership to the initial leader there).
import type { NodeId } from '../vocabulary/names.js';
import type { MemberPlan, StartedMembers } from '../targets/member-plan.js';
import type { Endpoint } from '../load/write-client.js';
import type { EventBook } from './event-book.js';

/** A runtime's started members over its event book, as a plan's afterStart sees them. */
export function startedOver(
  book: EventBook,
  m: { isRunning(id: NodeId): boolean; clientAddress(id: NodeId): Endpoint },
): StartedMembers {
  return {
    // The book's own array: it grows as events come.
    events: book.events,
    waitFor: (pred, timeoutMs, since) => book.waitFor(pred, timeoutMs, since),
    isRunning: (id) => m.isRunning(id),
    record: (e) => book.push(e),
    clientAddress: (id) => m.clientAddress(id),
  };
}

export async function startPlan(
  plan: MemberPlan,
  start: (ids: readonly NodeId[]) => Promise<void>,
  members: StartedMembers,
  timeoutMs: number,
): Promise<void> {
  const order = plan.startOrder;
  await start(order.first);
  if (order.then.length > 0) {
    const after = order.after;
    if (after !== undefined) await members.waitFor((e) => e.ev === 'serving' && e.node === after, timeoutMs);
    await start(order.then);
  }
  await plan.afterStart?.(members);
}
