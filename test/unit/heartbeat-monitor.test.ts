import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeartbeatMonitor, type HeartbeatSend } from '../../src/node/core/measure/heartbeat-monitor.js';
import { RequestRate } from '../../src/node/core/measure/request-rate.js';

const OPTS = { periodMs: 100, window: 4, missLimit: 3, rateWindowMs: 1000, minSamples: 2 };
const noScore = (): number[] => [];

/** Two monitors wired back to back over a link with the given one-way delays. */
function exchange(
  a: HeartbeatMonitor,
  b: HeartbeatMonitor,
  beats: HeartbeatSend[],
  now: number,
  there: number,
  back: number,
): void {
  for (const s of beats) {
    if (s.to !== 'b') continue;
    const reply = b.onMessage('a', s.msg, now + there, noScore);
    assert.ok(reply && reply.msg.type === 'HEARTBEAT_ACK');
    a.onMessage('b', reply.msg, now + there + back, noScore);
  }
}

test('RTT_i is the mean of the last `window` round trips, self at 0', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  b.peerUp('a', 0);
  assert.equal(a.nextAt(), 0);
  const delays = [10, 12, 14, 16, 18, 20];
  let now = 0;
  for (const d of delays) {
    const beats = a.tick(now, noScore);
    assert.equal(beats.length, 1);
    exchange(a, b, beats, now, d / 2, d / 2);
    now += 100;
    assert.equal(a.nextAt(), now);
  }
  // Last four: 14, 16, 18, 20.
  assert.deepEqual(
    [...a.rttMs(now)],
    [
      ['a', 0],
      ['b', 17],
    ],
  );
  assert.equal(a.describe(now).b?.samples, 4);
  assert.equal(a.measuredPeers(now), 1);
});

test('a tick before the period is due sends nothing, and late timers do not bunch beats', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  a.peerUp('b', 0);
  assert.equal(a.tick(0, noScore).length, 1);
  assert.equal(a.tick(50, noScore).length, 0);
  assert.equal(a.tick(450, noScore).length, 1); // very late: one beat, not four
  assert.equal(a.nextAt(), 500);
});

test('a peer that stops answering is dropped after missLimit periods; a down link at once', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  a.peerUp('c', 0);
  b.peerUp('a', 0);
  exchange(a, b, a.tick(0, noScore), 0, 5, 5);
  assert.ok(a.rttMs(10).has('b'));
  assert.ok(!a.rttMs(10).has('c'), 'no round trip yet: not in RTT_i');
  assert.ok(a.rttMs(300).has('b'), 'silent for exactly missLimit periods: still live');
  assert.ok(!a.rttMs(311).has('b'), 'silent longer: dropped');
  assert.equal(a.describe(311).b?.live, false);
  exchange(a, b, a.tick(400, noScore), 400, 5, 5);
  assert.ok(a.rttMs(410).has('b'), 'answers again: back in RTT_i');
  a.peerDown('b');
  assert.ok(!a.rttMs(410).has('b'));
  assert.equal(a.describe(410).b, undefined);
});

test('an answer older than the drop limit is not a sample', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  b.peerUp('a', 0);
  exchange(a, b, a.tick(0, noScore), 0, 200, 200);
  assert.equal(a.describe(400).b?.samples, 0);
});

test('heartbeats carry θr both ways, so each side keeps F_i', () => {
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  b.peerUp('a', 0);
  for (let t = 0; t < 5000; t += 2) b.recordRequest(t); // 500 requests/s at b
  exchange(a, b, a.tick(5000, noScore), 5000, 1, 1);
  const fa = a.requestRates(5002);
  assert.equal(fa.get('a'), 0);
  assert.ok(Math.abs((fa.get('b') as number) - 500) < 10, `F_a[b] = ${fa.get('b')}`);
  // The HEARTBEAT itself told b that a receives nothing.
  assert.equal(b.requestRates(5002).get('a'), 0);
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
  const a = new HeartbeatMonitor('a', OPTS);
  const b = new HeartbeatMonitor('b', OPTS);
  a.peerUp('b', 0);
  b.peerUp('a', 0);
  const beats = a.tick(0, () => [2, -10, 10]);
  const reply = b.onMessage('a', beats[0]!.msg, 1, () => [2, -20, 20]);
  a.onMessage('b', reply!.msg, 2, noScore);
  assert.deepEqual(b.peerScores(1).get('a'), [2, -10, 10]);
  assert.deepEqual(a.peerScores(2).get('b'), [2, -20, 20]);
});
