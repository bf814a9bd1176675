import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeartbeatMonitor } from '../../src/node/core/measure/heartbeat-monitor.js';
import type { HeartbeatMessage } from '../../src/node/core/measure/heartbeat-messages.js';
import { RequestRate } from '../../src/node/core/measure/request-rate.js';

const OPTS = { periodMs: 100, window: 4, missLimit: 3, rateWindowMs: 1000, minSamples: 2 };
const noScore = (): number[] => [];

interface Flight {
  at: number;
  to: 'a' | 'b';
  msg: HeartbeatMessage;
}

/**
 * Two monitors on one link, ticking every millisecond from `from` to `to`; `delay(dir, t)` gives
 * the one-way delay of a message sent at t ('ab' = a → b). Messages in flight are delivered in time
 * order. Returns the monitors' state afterwards.
 */
function runLink(
  a: HeartbeatMonitor,
  b: HeartbeatMonitor,
  from: number,
  to: number,
  delay: (dir: 'ab' | 'ba', t: number) => number,
  scores: { a?: () => number[]; b?: () => number[] } = {},
): void {
  const flights: Flight[] = [];
  for (let t = from; t <= to; t++) {
    for (const f of flights.filter((x) => x.at <= t).sort((x, y) => x.at - y.at)) {
      flights.splice(flights.indexOf(f), 1);
      (f.to === 'a' ? a : b).onMessage(f.to === 'a' ? 'b' : 'a', f.msg, f.at);
    }
    for (const s of a.tick(t, scores.a ?? noScore))
      flights.push({ at: t + delay('ab', t), to: 'b', msg: s.msg });
    for (const s of b.tick(t, scores.b ?? noScore))
      flights.push({ at: t + delay('ba', t), to: 'a', msg: s.msg });
  }
}

function pair(): [HeartbeatMonitor, HeartbeatMonitor] {
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  b.peerUp('a', 0);
  return [a, b];
}

test('one heartbeat per peer and period; the echo gives both ends the round trip, asymmetric links included', () => {
  const [a, b] = pair();
  let sent = 0;
  const counting = (): number[] => {
    sent += 1;
    return [];
  };
  runLink(a, b, 0, 1000, (dir) => (dir === 'ab' ? 7 : 3), { a: counting });
  assert.equal(sent, 11, 'a beat at 0, 100, …, 1000');
  assert.equal(a.rttMs(1000).get('b'), 10);
  assert.equal(b.rttMs(1000).get('a'), 10);
  assert.equal(a.rttMs(1000).get('a'), 0);
  assert.equal(a.describe(1000).b?.samples, 4, 'the window holds the last 4');
  assert.equal(a.measuredPeers(1000), 1);
});

test('RTT_i is the mean of the last `window` round trips', () => {
  const [a, b] = pair();
  // The delay grows by 1 ms every 100 ms: the last four samples are a known sliding mean.
  runLink(a, b, 0, 1000, (_dir, t) => 5 + Math.floor(t / 100));
  const rtt = a.rttMs(1000).get('b') as number;
  // a's beat at 100k goes out with delay 5 + k and comes back echoed in b's beat at 100(k + 1),
  // delay 6 + k: a round trip of 11 + 2k. By t = 1000 the echoes of k = 5..8 are back.
  const expected = [5, 6, 7, 8].map((k) => 11 + 2 * k).reduce((x, y) => x + y, 0) / 4;
  assert.equal(rtt, expected);
});

test('late timers do not bunch beats', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  a.peerUp('b', 0);
  assert.equal(a.nextAt(), 0);
  assert.equal(a.tick(0, noScore).length, 1);
  assert.equal(a.tick(50, noScore).length, 0);
  assert.equal(a.tick(450, noScore).length, 1); // very late: one beat, not four
  assert.equal(a.nextAt(), 500);
  a.peerDown('b');
  assert.equal(a.nextAt(), undefined, 'nothing to send with no link up');
});

test('a peer that stops sending is dropped after missLimit periods; a down link at once', () => {
  const [a, b] = pair();
  runLink(a, b, 0, 400, () => 5);
  assert.ok(a.rttMs(400).has('b'));
  // b's last beat delivered arrived at 305; silent for 300 ms is still live, longer is not.
  assert.ok(a.rttMs(605).has('b'));
  assert.ok(!a.rttMs(606).has('b'));
  assert.equal(a.describe(606).b?.live, false);
  assert.ok(!a.requestRates(606).has('b'));
  runLink(a, b, 800, 1000, () => 5);
  assert.ok(a.rttMs(1000).has('b'), 'heard again: back in RTT_i');
  a.peerDown('b');
  assert.ok(!a.rttMs(1000).has('b'));
  assert.equal(a.describe(1000).b, undefined);
});

test('a peer not measured yet is not in RTT_i', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  a.peerUp('c', 0);
  a.onMessage('c', { type: 'HEARTBEAT', seq: 1, sentAt: 0, rate: 0, score: [] }, 3);
  assert.ok(!a.rttMs(3).has('c'), 'no echo yet: no round trip');
  assert.equal(a.measuredPeers(3), 0);
});

test('an echo of a beat older than the drop limit is not a sample', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  a.peerUp('b', 0);
  a.tick(0, noScore);
  a.onMessage(
    'b',
    { type: 'HEARTBEAT', seq: 1, sentAt: 0, rate: 0, score: [], echo: { sentAt: 0, heldMs: 1 } },
    500,
  );
  assert.equal(a.describe(500).b?.samples, 0);
});

test('heartbeats carry θr, so each side keeps F_i', () => {
  const [a, b] = pair();
  for (let t = 0; t < 5000; t += 2) b.recordRequest(t); // 500 requests/s at b
  runLink(a, b, 5000, 5200, () => 1);
  const fa = a.requestRates(5200);
  assert.equal(fa.get('a'), 0);
  // b last beat at 5150 (its first tick was late, so it beat at 5000, 5050, 5150), carrying θr then.
  assert.equal(fa.get('b'), b.ownRequestRate(5150));
  assert.ok(Math.abs((fa.get('b') as number) - 500 * Math.exp(-0.152)) < 5, `F_a[b] = ${fa.get('b')}`);
  assert.equal(b.requestRates(5200).get('a'), 0);
});

test('θr is a decaying average: it tracks a constant rate and forgets a stopped one', () => {
  const r = new RequestRate(1000);
  assert.equal(r.rate(0), 0);
  for (let t = 0; t <= 10_000; t += 1) r.record(t);
  assert.ok(Math.abs(r.rate(10_000) - 1000) < 5, `rate ${r.rate(10_000)}`);
  assert.ok(Math.abs(r.rate(11_000) - 1000 / Math.E) < 5, 'one time constant later: 1/e of it');
  assert.ok(r.rate(20_000) < 0.1);
  assert.throws(() => new RequestRate(0));
});

test('scores travel in heartbeats and are kept per live peer', () => {
  const [a, b] = pair();
  runLink(a, b, 0, 10, () => 1, { a: () => [2, -10, 10], b: () => [2, -20, 20] });
  assert.deepEqual(b.peerScores(10).get('a'), [2, -10, 10]);
  assert.deepEqual(a.peerScores(10).get('b'), [2, -20, 20]);
});
