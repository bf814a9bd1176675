// How a run reads its links before the load (shaping/relay/relay-shaping.ts, measurePairDelays):
// through a relay of each pair's delays, with a route of no delay read beside them over the same
// span, so that a figure held up by the machine can be told from a slow link. Real relay, real
// echo server, loopback only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LinkDelay } from '../../src/shaping/relay/delay-distribution.js';
import {
  QUIET_UNDELAYED_MS,
  measurePairDelays,
  type DcPairDelay,
} from '../../src/shaping/relay/relay-shaping.js';

const oneWay = (delayMs: number): LinkDelay => ({ delayMs, jitterMs: 0, distribution: 'normal' });
const PAIRS: DcPairDelay[] = [
  { a: 'x', b: 'y', forward: oneWay(5), backward: oneWay(5) },
  { a: 'y', b: 'x', forward: oneWay(5), backward: oneWay(5) },
];

test('one reading on a quiet machine: each pair its delays plus the undelayed round trip', async (t) => {
  const r = await measurePairDelays(PAIRS, 1, 20);
  const k = r.readings[r.kept]!;
  t.diagnostic(
    `${r.readings.length} reading(s); x→y ${k.rtts['x>y']?.toFixed(2)} ms, undelayed ${k.undelayedMs.toFixed(2)} ms`,
  );
  // A machine busy enough to hold the undelayed route past the threshold reads again: allowed,
  // but the kept reading must be the quietest.
  assert.equal(k.undelayedMs, Math.min(...r.readings.map((x) => x.undelayedMs)));
  assert.ok(k.undelayedMs > 0 && k.undelayedMs <= QUIET_UNDELAYED_MS, `undelayed ${k.undelayedMs} ms`);
  for (const pair of ['x>y', 'y>x']) {
    const beyond = k.rtts[pair]! - k.undelayedMs;
    assert.ok(beyond >= 10 - 0.1 && beyond <= 10 + 2, `${pair}: ${k.rtts[pair]} ms`);
  }
});

test('a reading whose undelayed route reads over the threshold is taken again, three at most, all kept, the quietest shown', async () => {
  // No round trip takes 0 ms: every reading counts as held up, as on a machine held throughout.
  const r = await measurePairDelays(PAIRS, 1, 10, 0);
  assert.equal(r.readings.length, 3);
  const quietest = Math.min(...r.readings.map((x) => x.undelayedMs));
  assert.equal(r.readings[r.kept]!.undelayedMs, quietest);
  for (const reading of r.readings) {
    assert.deepEqual(Object.keys(reading.rtts).sort(), ['x>y', 'y>x']);
    assert.ok(reading.rtts['x>y']! >= 10, `x→y ${reading.rtts['x>y']} ms`);
  }
});

test('no pairs (one data center): nothing read, nothing started', async () => {
  assert.deepEqual(await measurePairDelays([], 1, 20), { readings: [], kept: -1 });
});
