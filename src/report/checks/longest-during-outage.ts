// A write sent just after the fault can only be acknowledged once the new epoch commits: the
// longest write of the window (the agents' histograms) is at least the outage (their first-ack
// stamps) less the time to the first write sent after the fault. Unless writes failed: such a
// write may have given up (its deadline) instead of waiting. Only where the fault took the
// leader out: after a link change the old leader serves on until it resigns, so writes are
// acknowledged in its epoch all through the "outage".
import { type Check, CLOCK_SLACK_MS, f } from './check-kit.js';

export const longestDuringOutage = {
  id: 'longestDuringOutage',
  what: 'the longest write of “during” ≥ the outage − one send interval (where none failed)',
  run: (r, fail, skip) => {
    const noFault = r.recovery.faultAtS === null;
    if (noFault) return skip('no fault took the leader out');
    if (r.leaders.cause?.action === 'link')
      return skip('a link change: the old leader serves on through the “outage”');
    let n = 0;
    for (const [dc, c] of Object.entries(r.recovery.perDc)) {
      if ((r.latency[dc]?.failed ?? 0) > 0) continue;
      const max = r.latency[dc]?.during?.max ?? null;
      const rate = r.workload.rate * (r.workload.share[dc] ?? 0);
      if (c.outageMs === null || max === null || rate <= 0) continue;
      n++;
      const interval = 1000 / rate;
      if (max < c.outageMs - interval - CLOCK_SLACK_MS)
        fail(`${dc}: longest ${f(max)} ms, outage ${f(c.outageMs)} ms, a write every ${f(interval)} ms`);
    }
    if (n === 0)
      skip('writes failed in every data center with an outage (one may have given up instead of waiting)');
  },
} as const satisfies Check;
