import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds, scheduleCount } from './run-schedules.js';

test('seeded 5-node schedules from seed 1: safety after every step and liveness once faults stop', () => {
  const totals = runSeeds(1, scheduleCount(1000));
  // The schedules must actually exercise the protocol: writes acknowledged, leaders changing.
  assert.ok(totals.acked > 0, 'no write was ever acknowledged');
  assert.ok(totals.crashes > 0, 'no crash was ever injected');
});
