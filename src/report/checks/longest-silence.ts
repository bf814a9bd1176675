// The longest silence is the outage's twin: the first write sent after a silence began (within
// one send interval of its start, with constant arrivals) can only be acknowledged after it
// ended, as no acknowledgement came in between; so some write took at least the silence less
// that interval. Poisson arrivals have no bound on the gap between sends, and a failed write
// may have given up instead of waiting: then there is nothing to hold the silence against.
import { type Check, CLOCK_SLACK_MS, WINDOWS, f } from './check-kit.js';

export const longestSilence = {
  id: 'longestSilence',
  what: 'the longest write ≥ the longest silence − one send interval (constant arrivals, none failed)',
  run: (r, fail, skip) => {
    if (r.workload.arrival !== 'constant') return skip('Poisson arrivals: no bound on the gap between sends');
    let n = 0;
    for (const [dc, c] of Object.entries(r.recovery.perDc)) {
      const l = r.latency[dc];
      if (l === undefined || l.failed > 0 || l.lost !== null || c.longestAckGapMs === null) continue;
      const rate = r.workload.rate * (r.workload.share[dc] ?? 0);
      const maxes = WINDOWS.map((w) => l[w]?.max ?? null).filter((m): m is number => m !== null);
      if (rate <= 0 || maxes.length === 0) continue;
      n++;
      const longest = Math.max(...maxes);
      const interval = 1000 / rate;
      if (longest < c.longestAckGapMs - interval - CLOCK_SLACK_MS)
        fail(
          `${dc}: longest write ${f(longest)} ms, silence ${f(c.longestAckGapMs)} ms, a write every ${f(interval)} ms`,
        );
    }
    if (n === 0) skip('no data center without failed writes had a silence measured');
  },
} as const satisfies Check;
