import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Proposal } from '../../src/node/core/election-types.js';
import { compareProposals, type ScoreCompare } from '../../src/node/core/proposal-order.js';

const higher: ScoreCompare = (_e, a, b) => (a[0] ?? 0) - (b[0] ?? 0);
const lower: ScoreCompare = (_e, a, b) => (b[0] ?? 0) - (a[0] ?? 0);

function prop(id: string, sid: number, ...score: number[]): Proposal {
  return { id, sid, score };
}

test('the epoch dominates the score and the sid', () => {
  const weak = prop('p1', 1, 0);
  const strong = prop('p5', 5, 100);
  assert.equal(compareProposals(higher, 4, weak, 3, strong), 1);
  assert.equal(compareProposals(higher, 3, strong, 4, weak), -1);
});

test('within an epoch the score decides, before the sid', () => {
  assert.equal(compareProposals(higher, 2, prop('p1', 1, 9), 2, prop('p5', 5, 3)), 1);
  assert.equal(compareProposals(higher, 2, prop('p5', 5, 3), 2, prop('p1', 1, 9)), -1);
});

test('equal scores: the higher sid wins; identical proposals are equal', () => {
  assert.equal(compareProposals(higher, 2, prop('p2', 2, 7), 2, prop('p4', 4, 7)), -1);
  assert.equal(compareProposals(higher, 2, prop('p4', 4, 7), 2, prop('p2', 2, 7)), 1);
  assert.equal(compareProposals(higher, 2, prop('p4', 4, 7), 2, prop('p4', 4, 7)), 0);
});

test('an oracle where lower is better is respected', () => {
  // 12 ms beats 40 ms under a latency-like oracle, whatever the sids say.
  assert.equal(compareProposals(lower, 1, prop('p1', 1, 12), 1, prop('p5', 5, 40)), 1);
  assert.equal(compareProposals(lower, 1, prop('p5', 5, 40), 1, prop('p1', 1, 12)), -1);
});

test('only the sign of the oracle answer counts, and the epoch reaches the oracle', () => {
  const seen: number[] = [];
  const big: ScoreCompare = (e, a, b) => {
    seen.push(e);
    return ((a[0] ?? 0) - (b[0] ?? 0)) * 1000;
  };
  assert.equal(compareProposals(big, 7, prop('p1', 1, 2), 7, prop('p2', 2, 1)), 1);
  assert.deepEqual(seen, [7]);
  // Different epochs never ask the oracle.
  compareProposals(big, 7, prop('p1', 1, 2), 8, prop('p2', 2, 1));
  assert.deepEqual(seen, [7]);
});
