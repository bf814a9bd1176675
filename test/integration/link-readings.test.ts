// How a run reads its links before the load (shaping/relay/relay-shaping.ts, measurePairDelays):
// through a relay of each pair's delays, with a route of no delay read beside them over the same
// span, so that a figure held up by the machine can be told from a slow link. Real relay, real
// echo server, loopback only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LinkDelay } from '../../src/shaping/relay/delay-distribution.js';
import {
  QUIET_LATENESS_MS,
  QUIET_UNDELAYED_MS,
  heldUpBy,
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
    `${r.readings.length} reading(s); x→y ${k.rtts['x>y']?.toFixed(2)} ms, undelayed ${k.undelayedMs.toFixed(2)} ms, released late ${JSON.stringify(k.latenessMs)}`,
  );
  // A machine busy enough to hold the undelayed route or the releases past a threshold reads
  // again: allowed, but the kept reading must be the one held up least.
  assert.equal(heldUpBy(k), Math.min(...r.readings.map(heldUpBy)));
  assert.ok(k.undelayedMs > 0, `undelayed ${k.undelayedMs} ms`);
  assert.deepEqual(Object.keys(k.latenessMs ?? {}).sort(), ['x>y', 'y>x']);
  if (r.readings.length === 1) {
    assert.ok(k.undelayedMs <= QUIET_UNDELAYED_MS, `undelayed ${k.undelayedMs} ms`);
    for (const late of Object.values(k.latenessMs ?? {}))
      assert.ok(late >= 0 && late <= QUIET_LATENESS_MS, `released ${late} ms late`);
  }
  for (const pair of ['x>y', 'y>x']) {
    const beyond = k.rtts[pair]! - k.undelayedMs;
    assert.ok(beyond >= 10 - 0.1 && beyond <= 10 + 2, `${pair}: ${k.rtts[pair]} ms`);
  }
});

test('a reading whose undelayed route reads over the threshold is taken again, three at most, all kept, the quietest shown', async () => {
  // No round trip takes 0 ms: every reading counts as held up, as on a machine held throughout.
  const r = await measurePairDelays(PAIRS, 1, 10, 0);
  assert.equal(r.readings.length, 3);
  assert.equal(heldUpBy(r.readings[r.kept]!), Math.min(...r.readings.map(heldUpBy)));
  for (const reading of r.readings) {
    assert.deepEqual(Object.keys(reading.rtts).sort(), ['x>y', 'y>x']);
    assert.ok(reading.rtts['x>y']! >= 10, `x→y ${reading.rtts['x>y']} ms`);
  }
});

test('a reading whose pairs the relay released late is taken again, however quick the undelayed route', async () => {
  // No release is less than 0 ms late: every reading counts as held up by the relay's clock.
  const r = await measurePairDelays(PAIRS, 1, 10, Infinity, -1);
  assert.equal(r.readings.length, 3);
  for (const reading of r.readings)
    assert.ok(
      Object.values(reading.latenessMs ?? {}).every((ms) => ms >= 0),
      JSON.stringify(reading.latenessMs),
    );
  assert.equal(heldUpBy(r.readings[r.kept]!), Math.min(...r.readings.map(heldUpBy)));
});

test('no pairs (one data center): nothing read, nothing started', async () => {
  assert.deepEqual(await measurePairDelays([], 1, 20), { readings: [], kept: -1 });
});
