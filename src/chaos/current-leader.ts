// Who serves as leader right now, from the members' events: what a fault aimed at "leader" hits,
// what the progress line shows, and where the final read sends its fence write.
import type { NodeId } from '../vocabulary/names.js';
import type { MemberControl } from '../targets/target.js';

/** The leader serving now: the latest `serving` event of a leader whose process still runs. */
export function currentLeader(rt: Pick<MemberControl, 'events' | 'isRunning'>): NodeId | undefined {
  const ev = rt.events;
  for (let i = ev.length - 1; i >= 0; i--) {
    const e = ev[i]!;
    if (e.ev === 'serving' && e.leader === undefined && rt.isRunning(e.node)) return e.node;
  }
  return undefined;
}
