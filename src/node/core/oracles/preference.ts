// The preference oracle: the operator names the servers it wants to lead, most preferred first
// (e.g. the ones in the data center with most clients). Score = [n − rank] for a list of n, so the
// first gets n and the last 1; unlisted servers get 0 and fall back to the sid tie-break.
import type { NodeId, Score } from '../types.js';
import { compareHigherIsBetter } from './history.js';
import type { Oracle, ScoreContext } from './oracle.js';

export function createPreferenceOracle(order: readonly NodeId[]): Oracle {
  if (order.length === 0) throw new Error('preference oracle: the preference list is empty');
  const rank = new Map<NodeId, number>();
  order.forEach((id, i) => {
    if (rank.has(id)) throw new Error(`preference oracle: ${id} is listed twice`);
    rank.set(id, i);
  });
  const n = order.length;
  return {
    name: 'preference',
    score: (ctx: ScoreContext): Score => {
      const r = rank.get(ctx.self);
      return [r === undefined ? 0 : n - r];
    },
    compare: compareHigherIsBetter,
  };
}
