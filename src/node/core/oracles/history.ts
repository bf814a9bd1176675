// The history oracle: ZooKeeper's own rule. A server's score is its last accepted zxid, so the
// "fattest" server (the one with the longest history) wins and the new leader rarely has to fetch
// transactions it is missing. Equal zxids are left to the proposal order (higher sid wins).
import type { Score } from '../types.js';
import type { Oracle, ScoreContext } from './oracle.js';

/**
 * Lexicographic order on score vectors, higher is better. A missing component counts as lower than
 * any present one, so a longer vector with an equal prefix wins (scores of one oracle have one length
 * anyway). Shared by the oracles whose scores grow with preference.
 */
export function compareHigherIsBetter(a: Score, b: Score): number {
  const len = Math.min(a.length, b.length);
  for (let i = 0; i < len; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (x !== y) return x > y ? 1 : -1;
  }
  return Math.sign(a.length - b.length);
}

export function createHistoryOracle(): Oracle {
  return {
    name: 'history',
    score: (ctx: ScoreContext): Score => [ctx.lastZxid.epoch, ctx.lastZxid.counter],
    compare: compareHigherIsBetter,
  };
}
