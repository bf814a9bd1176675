import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds, scheduleCount } from './run-schedules.js';

test('seeded 3-node schedules (initial leader, frequent snapshots) and 5-node rotating-oracle schedules', () => {
  const count = scheduleCount(1000);
  const a = runSeeds(100_001, Math.floor(count / 2), { nodes: 3, initialLeader: 'p3', snapshotEvery: 15 });
  const b = runSeeds(200_001, Math.ceil(count / 2), { nodes: 5, initialLeader: 'p5', oracle: 'rotating' });
  assert.ok(a.acked > 0 && b.acked > 0, 'no write was ever acknowledged');
  assert.ok(a.leaders > Math.floor(count / 2), 'leaders never changed');
});
