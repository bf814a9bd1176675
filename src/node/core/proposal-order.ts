// POLE's order on proposals, ≺p (section 3.2 of the paper): first by epoch, then by score under the
// oracle's own order ≺θ, then by numeric server id. It is total as long as server ids are unique,
// which is what lets every process converge on the same maximum in a timely run.
import type { Proposal } from './election-types.js';
import type { Score } from './types.js';

/** ≺θ as the election sees it: >0 when `a` is the better score. May depend on the election epoch (rotating). */
export type ScoreCompare = (epoch: number, a: Score, b: Score) => number;

/** (epoch, then score by the oracle's ≺θ, then sid; higher sid wins ties). >0 when x is better. */
export function compareProposals(
  cmp: ScoreCompare,
  ex: number,
  x: Proposal,
  ey: number,
  y: Proposal,
): number {
  if (ex !== ey) return ex > ey ? 1 : -1;
  // Only the sign of the oracle's answer matters: oracles may return any magnitude (or -0).
  const byScore = Math.sign(cmp(ex, x.score, y.score));
  if (byScore !== 0 && !Number.isNaN(byScore)) return byScore;
  if (x.sid !== y.sid) return x.sid > y.sid ? 1 : -1;
  return 0;
}
