import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSimulation } from '../../src/node/sim/simulator.js';

test('a seed replays exactly: same trace and same outcome twice', () => {
  const a = runSimulation({ seed: 4242, trace: true });
  const b = runSimulation({ seed: 4242, trace: true });
  assert.ok(a.trace.length > 100, 'trace too short to mean anything');
  assert.deepEqual(a.trace, b.trace);
  assert.deepEqual(a.stats, b.stats);
  const c = runSimulation({ seed: 4243, trace: true });
  assert.notDeepEqual(a.trace, c.trace, 'different seeds should give different schedules');
});
