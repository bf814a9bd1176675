// A ZooKeeper run's scores: its leader's `elected` names no proposals, so each survivor's own
// proposal from its log as the deciding election started ("New election. My id = N, proposed
// zxid=0x…") stands for them, as FLE ranks them: zxid (epoch, counter), then sid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recoveryFigures } from '../../src/report/recovery-figures.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';

const zk = (t: number, node: string, body: Record<string, unknown>): ClusterEvent =>
  ({ t, node, src: 'zk-log', ...body }) as unknown as ClusterEvent;

test('ZooKeeper: the survivors’ proposals between the kill and the election are the scores', () => {
  const events: ClusterEvent[] = [
    // Before the kill: the start-up election, not the deciding one.
    zk(50, 'p4', { ev: 'candidate', sid: 4, zxid: '0x0' }),
    zk(60, 'p5', { ev: 'elected', leader: 'p5', tookMs: 10 }),
    zk(1010, 'p1', { ev: 'candidate', sid: 1, zxid: '0x100000e3a' }),
    zk(1011, 'p4', { ev: 'candidate', sid: 4, zxid: '0x100000e3a' }),
    zk(1012, 'p2', { ev: 'candidate', sid: 2, zxid: '0x100000e39' }),
    zk(1300, 'p4', { ev: 'elected', leader: 'p4', tookMs: 290 }),
    // After the election: a later one of p3 counts for nothing here.
    zk(1400, 'p3', { ev: 'candidate', sid: 3, zxid: '0x200000001' }),
  ];
  const f = recoveryFigures(
    {
      killed: 'p5',
      killAt: 1000,
      causeScheduledAt: 1000,
      loadStart: 0,
      nodeEvents: events,
      dones: new Map(),
    },
    [],
  );
  assert.equal(f.elected, 'p4');
  assert.deepEqual(f.scores, {
    p1: [1, 0xe3a, 1],
    p4: [1, 0xe3a, 4],
    p2: [1, 0xe39, 2],
  });
});
