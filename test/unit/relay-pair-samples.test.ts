// How many round trips the run's link measurement takes per pair of data centers: more on short
// links, so that one stalled round trip on a busy machine moves the mean less, within about a second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairSamples, type DcPairDelay } from '../../src/shaping/relay/relay-shaping.js';

const pair = (oneWayMs: number): DcPairDelay => {
  const d = { delayMs: oneWayMs, jitterMs: 0, distribution: 'pareto' as const };
  return { a: 'x', b: 'y', forward: d, backward: d };
};

test('short links get as many round trips as fit in a second, long ones keep the minimum', () => {
  assert.equal(pairSamples(pair(5), 20), 66); // 10 ms RTT: 1000 / 15
  assert.equal(pairSamples(pair(0), 20), 100); // capped
  assert.equal(pairSamples(pair(86), 20), 20); // 172 ms RTT: the minimum
  assert.equal(pairSamples(pair(5), 80), 80); // never fewer than asked
});
