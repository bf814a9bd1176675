// The "before" window's model and floor are the initial leader's. A leader that took over with
// no fault behind it (a follower that stopped hearing a leader stalled past syncLimit on a busy
// machine) makes that window a mix of two leaders and an outage, held against the wrong
// prediction. "Before" ends at the first fault of any kind: a partition that left the leader its
// quorum may still make it lose its place when it heals (a Raft member cut off comes back with a
// higher term), and that change has a fault behind it.
import type { Check } from './check-kit.js';

export const oneLeaderBefore = {
  id: 'oneLeaderBefore',
  what: 'one leader through “before”: no leader change before the first fault',
  run: (r, fail) => {
    const end = Math.min(r.recovery.faultAtS ?? Infinity, ...r.timeline.faults.map((f) => f.atS));
    for (const u of r.elections.unprovoked)
      if (u.atS < end)
        fail(
          `${u.leader} took over from ${r.leaders.initial ?? 'nobody'} at ${u.atS.toFixed(2)} s with no fault`,
        );
  },
} as const satisfies Check;
