// The spread the floor's check takes its standard error from, held to what the window's own
// figures allow: a variance is at most (max − mean)(mean − min) (Bhatia and Davis), and no
// latency is under 0. A wrong, large sd would only widen that check's allowance, silently.
import { type Check, WINDOWS, HISTOGRAM_SLACK, f } from './check-kit.js';

export const spreadBound = {
  id: 'spreadBound',
  what: 'every window’s spread of every write within what its mean and longest write allow (sd² ≤ (max − mean) × mean)',
  run: (r, fail, skip) => {
    let n = 0;
    for (const [dc, l] of Object.entries(r.latency))
      for (const w of WINDOWS) {
        const s = l[w];
        if (!s || s.sentSd == null || s.sentMean == null || s.max == null) continue;
        n++;
        // The histogram's values are exact to 3 significant digits: 1 % either way.
        const bound = Math.sqrt(
          Math.max(0, s.max * HISTOGRAM_SLACK - s.sentMean) * s.sentMean * HISTOGRAM_SLACK,
        );
        if (s.sentSd > bound)
          fail(
            `${dc} ${w}: sd ${f(s.sentSd)} ms, mean ${f(s.sentMean)}, longest ${f(s.max)}: at most ${f(bound)}`,
          );
      }
    if (n === 0) skip('no window recorded every write’s spread');
  },
} as const satisfies Check;
