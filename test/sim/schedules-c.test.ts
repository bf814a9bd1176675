import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds, scheduleCount } from './run-schedules.js';

test('seeded 5-node schedules with heartbeats, a measured oracle and resignation on', () => {
  const count = scheduleCount(1000);
  // Random link delays make RTTs differ from node to node, so leaders resign now and then: the
  // hand-over must be as safe as any other change of leader.
  const heartbeat = { periodMs: 50, window: 5, missLimit: 3, rateWindowMs: 500, minSamples: 2 };
  const latency = runSeeds(300_001, Math.floor(count / 2), {
    oracle: 'latency',
    heartbeat,
    resign: { margin: 0.25, checks: 3, holdMs: 2000 },
  });
  const combined = runSeeds(400_001, Math.ceil(count / 2), {
    oracle: 'worst-case:5ms,history',
    initialLeader: 'p5',
    heartbeat,
  });
  assert.ok(latency.acked > 0 && combined.acked > 0, 'no write was ever acknowledged');
});
