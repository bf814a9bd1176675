// The faults leader election fears, in the simulator: pauses, one-way cuts, partitions, bridges and
// rings whose cuts hold what crosses them and deliver it late, in order, on the connection it was
// sent on (the relay's way, and TCP's under a network that drops packets), beside the crashes and
// broken links of the other schedules. Late messages are what a session or an epoch must refuse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSimulation } from '../../src/node/sim/simulator.js';
import { runSeeds, scheduleCount } from './run-schedules.js';

test('seeded 5-node schedules with the fears: safety after every step and liveness once faults stop', () => {
  const totals = runSeeds(500_001, scheduleCount(1000), { fears: true });
  assert.ok(totals.acked > 0, 'no write was ever acknowledged');
  assert.ok(totals.crashes > 0, 'no crash was ever injected');
});

test('the fears are drawn: cuts held and restored, nodes paused and resumed', () => {
  const seen = new Set<string>();
  for (let seed = 500_001; seed <= 500_040; seed++) {
    const r = runSimulation({ seed, fears: true, trace: true });
    for (const line of r.trace) {
      const m = / fear (\w+) /.exec(line) ?? / (unhold) /.exec(line);
      if (m) seen.add(m[1]!);
    }
  }
  assert.deepEqual([...seen].sort(), ['bridge', 'oneway', 'partition', 'pause', 'ring', 'unhold']);
});
