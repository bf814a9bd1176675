// A duration below zero is two stamps from clocks that disagree, or taken in the wrong order:
// every field of the result that holds one is walked.
import { type Check, type CheckedResult, f } from './check-kit.js';

export const noNegative = {
  id: 'noNegative',
  what: 'no negative duration',
  run: (r, fail) => {
    for (const [path, v] of negativeDurations(r)) fail(`${path} = ${f(v)} ms`);
  },
} as const satisfies Check;

/** Fields that hold a duration in ms (besides the latency stats') and can never be negative. */
const STAT_FIELDS = ['mean', 'sentMean', 'p50', 'p90', 'p99', 'p999', 'max'] as const;
/** Fields named …Ms that may be negative: clock offsets (result.clocks). */
const SIGNED_MS: readonly string[] = ['offsetMs', 'monoOffsetMs'];

/** Every field of the result that holds a duration (a name ending in Ms, a latency stat) and is < 0. */
function negativeDurations(r: CheckedResult): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const walk = (v: unknown, path: string, statsHere: boolean): void => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, false));
    else if (v !== null && typeof v === 'object') {
      const isStats = 'count' in v && 'p99' in v;
      for (const [k, x] of Object.entries(v)) walk(x, path === '' ? k : `${path}.${k}`, isStats);
    } else if (typeof v === 'number' && v < 0) {
      const key = path.slice(path.lastIndexOf('.') + 1);
      // A clock offset is a signed difference between two clocks, not a duration.
      if (SIGNED_MS.includes(key)) return;
      if (key.endsWith('Ms') || (statsHere && (STAT_FIELDS as readonly string[]).includes(key)))
        out.push([path, v]);
    }
  };
  walk(r, '', false);
  return out;
}
