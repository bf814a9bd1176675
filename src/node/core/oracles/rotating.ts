// The rotating oracle: leadership moves round the configuration, one member per election epoch.
// Epoch e favours member number ((e − 1) mod n) in configuration order, so epoch 1 picks the first
// member, epoch n + 1 the first again. It ignores measurements and history on purpose: it is the
// baseline that spreads leadership regardless of where the leader would be fastest.
import type { Score } from '../types.js';
import { compareHigherIsBetter } from './history.js';
import type { Oracle, ScoreContext } from './oracle.js';

/** The member favoured in `epoch`, or undefined for an empty configuration. */
export function rotatingChoice(epoch: number, members: readonly string[]): string | undefined {
  const n = members.length;
  if (n === 0) return undefined;
  // ((epoch − 1) mod n) taken as a non-negative remainder, so epoch 0 maps to the last member.
  return members[(((epoch - 1) % n) + n) % n];
}

export function createRotatingOracle(): Oracle {
  return {
    name: 'rotating',
    score: (ctx: ScoreContext): Score => [rotatingChoice(ctx.epoch, ctx.members) === ctx.self ? 1 : 0],
    compare: compareHigherIsBetter,
  };
}
