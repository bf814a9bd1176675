// The deciding election is the one whose leader went on to serve, not a first winner that never
// had a quorum of followers (a swarm CI run: ZooKeeper's FLE picked p3, the votes moved to p4, and
// p4 served 1.6 s later; the report named p3, with serving and the epoch "not observed").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recoveryFigures } from '../../src/report/recovery-figures.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';

const at = (t: number, node: string, body: Record<string, unknown>): ClusterEvent =>
  ({ t, node, src: 'zk-log', ...body }) as unknown as ClusterEvent;

const KILL = 1000;
const firstWinner: ClusterEvent[] = [
  at(500, 'p5', { ev: 'elected', leader: 'p5' }),
  at(1170, 'p4', { ev: 'leader-lost', reason: 'zk:exception when following the leader' }),
  at(1370, 'p3', { ev: 'elected', leader: 'p3' }),
  at(1390, 'p2', { ev: 'elected' }),
  at(2374, 'p2', { ev: 'leader-lost', reason: 'zk:exception when following the leader' }),
];
const thenServed: ClusterEvent[] = [
  at(2900, 'p4', { ev: 'elected', leader: 'p4' }),
  at(3090, 'p3', { ev: 'stepped-down', reason: 'zk:leading→looking' }),
  at(3500, 'p4', { ev: 'serving', epoch: 2 }),
];

function figures(events: ClusterEvent[]): ReturnType<typeof recoveryFigures> {
  return recoveryFigures(
    {
      killed: 'p5',
      killAt: KILL,
      causeScheduledAt: KILL,
      loadStart: 0,
      nodeEvents: events,
      dones: new Map(),
    },
    [],
  );
}

test('a first winner that never served is not the deciding election: the leader that served is', () => {
  const f = figures([...firstWinner, ...thenServed]);
  assert.equal(f.elected, 'p4');
  assert.equal(f.epoch, 2);
  assert.equal(f.recovery.detectMs, 170);
  assert.equal(f.recovery.electedMs, 1900);
  assert.equal(f.recovery.servingMs, 2500);
});

test('where nobody served, the first winner still stands', () => {
  const f = figures(firstWinner);
  assert.equal(f.elected, 'p3');
  assert.equal(f.recovery.electedMs, 370);
  assert.equal(f.recovery.servingMs, null);
});

test('a member that won twice: the explanation speaks of the election that served, as the figures do', () => {
  // p4 wins at +100 but loses its quorum before serving, wins again at +900 and serves at +1000.
  const twice: ClusterEvent[] = [
    at(500, 'p5', { ev: 'elected', leader: 'p5' }),
    at(1040, 'p4', { ev: 'leader-lost', reason: 'connection-lost' }),
    at(1100, 'p4', { ev: 'elected', leader: 'p4', epoch: 2, reason: 'timer', rounds: 1 }),
    at(1600, 'p4', { ev: 'election-started', reason: 'stepped-down:lost-quorum', epoch: 3 }),
    at(1900, 'p4', { ev: 'elected', leader: 'p4', epoch: 3, reason: 'all-proposals', rounds: 2 }),
    at(1950, 'p4', { ev: 'phase', phase: 'sync', epoch: 3 }),
    at(2000, 'p4', { ev: 'serving', epoch: 3 }),
  ];
  const f = figures(twice);
  assert.equal(f.elected, 'p4');
  assert.equal(f.epoch, 3);
  assert.equal(f.recovery.electedMs, 900);
  assert.equal(f.recovery.explain?.election.atMs, 900);
  assert.equal(f.recovery.explain?.election.reason, 'all-proposals');
  assert.equal(f.recovery.explain?.election.rounds, 2);
  assert.equal(f.recovery.explain?.sync.servingAfterElectedMs, 100);
});
