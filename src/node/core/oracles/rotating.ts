// The rotating oracle: leadership moves round the configuration, one member per election epoch.
// Epoch 1 favours the member the rotation starts from (the configured initial leader, else the
// first member), and each epoch after it the next member in configuration order, wrapping round:
// the paper's "the server with the next id modulo the number of servers" (after p5, p1). It ignores
// measurements and history on purpose: it is the baseline that spreads leadership regardless of
// where the leader would be fastest.
import type { NodeId, Score } from '../types.js';
import { compareHigherIsBetter } from './history.js';
import type { Oracle, ScoreContext } from './oracle.js';

/** The member favoured in `epoch` (epoch 1: `start`, or the first member), or undefined for an empty configuration. */
export function rotatingChoice(
  epoch: number,
  members: readonly string[],
  start?: NodeId,
): string | undefined {
  const n = members.length;
  if (n === 0) return undefined;
  const first = start === undefined ? 0 : Math.max(0, members.indexOf(start));
  // (first + epoch − 1) mod n taken as a non-negative remainder, so epoch 0 is the one before `first`.
  return members[(((first + epoch - 1) % n) + n) % n];
}

export function createRotatingOracle(start?: NodeId): Oracle {
  return {
    name: 'rotating',
    score: (ctx: ScoreContext): Score => [rotatingChoice(ctx.epoch, ctx.members, start) === ctx.self ? 1 : 0],
    compare: compareHigherIsBetter,
  };
}
