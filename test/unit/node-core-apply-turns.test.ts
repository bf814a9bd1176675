// A follower restarted with a long log learns in one UPTODATE that all of it is committed. Applying
// it in that one turn held a real node's event loop for over a second (the soak: 94,538 txns, 1.17 s,
// past syncLimit); it now applies at most 2,000 per turn and asks for a tick at once for the rest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PeerMessage, Ready } from '../../src/node/core/core-types.js';
import { NodeCore } from '../../src/node/core/node-core.js';
import { createOracle } from '../../src/node/core/oracles/registry.js';
import type { NodeId, Txn } from '../../src/node/core/types.js';
import { zxid } from '../../src/vocabulary/zxid.js';

const members = [1, 2, 3, 4, 5].map((sid) => ({ id: `p${sid}`, sid }));
const timers = { tickMs: 50, syncLimit: 5, initLimit: 10, electionTimeoutMs: 100, retryBaseMs: 100 };
const LOGGED = 5_000;
const PER_TURN = 2_000;

const txn = (counter: number): Txn => ({
  zxid: zxid(1, counter),
  path: `/k${counter % 100}`,
  data: new Uint8Array([counter & 0xff]),
  clientId: 'c',
  requestId: counter,
});

function deliver(core: NodeCore, now: number, from: NodeId, msg: PeerMessage): Ready {
  core.step({ type: 'message', now, from, msg });
  return core.ready();
}

/** p4 restarted with LOGGED txns of epoch 1, none applied yet, following p3 in epoch 2 up to UPTODATE. */
function restartedFollower(): { core: NodeCore; now: number } {
  const txns = Array.from({ length: LOGGED }, (_, i) => txn(i + 1));
  const core = new NodeCore(
    { self: members[3]!, members, oracle: createOracle('history'), timers, snapshotEvery: 1_000_000 },
    { acceptedEpoch: 1, currentEpoch: 1, acceptedLeader: 'p5', txns },
  );
  core.start(0);
  for (const m of members)
    if (m.id !== 'p4' && m.id !== 'p5') core.step({ type: 'connected', now: 0, peer: m.id });
  core.ready();
  let r: Ready | undefined;
  for (const from of ['p1', 'p2', 'p3']) r = deliver(core, 10, from, { type: 'V', epoch: 2, leader: 'p3' });
  const info = r!.sends.find((s) => s.msg.type === 'FOLLOWERINFO');
  assert.ok(info && info.to === 'p3', 'p4 should ask to follow p3');
  const session = (info.msg as Extract<PeerMessage, { type: 'FOLLOWERINFO' }>).session;
  deliver(core, 11, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: true });
  deliver(core, 12, 'p3', { type: 'SYNC', epoch: 2, plan: { txns: [] } });
  deliver(core, 13, 'p3', { type: 'NEWLEADER', epoch: 2, lastZxid: zxid(1, LOGGED) });
  assert.equal(core.lastApplied.counter, 0, 'nothing is applied before the leader says what is committed');
  deliver(core, 14, 'p3', { type: 'UPTODATE', epoch: 2, commitZxid: zxid(1, LOGGED) });
  return { core, now: 14 };
}

test('a follower applies a long committed backlog a bounded number of txns per turn', () => {
  const { core, now } = restartedFollower();
  assert.equal(core.phase, 'serving');
  assert.equal(core.lastApplied.counter, PER_TURN, 'the turn of UPTODATE applies one batch');
  assert.equal(core.nextTimerAt(), now, 'with a backlog left the core asks for a tick at once');
  const seen: number[] = [];
  for (let turn = 0; turn < 10 && core.lastApplied.counter < LOGGED; turn++) {
    core.step({ type: 'tick', now });
    core.ready();
    seen.push(core.lastApplied.counter);
  }
  assert.deepEqual(seen, [2 * PER_TURN, LOGGED]);
  assert.notEqual(core.nextTimerAt(), now, 'no tick at once once the backlog is applied');
  // The tree holds the last write to each path: /k0 was last written by txn 5,000.
  const last = core.read('/k0');
  assert.ok(last);
  assert.deepEqual(last.zxid, zxid(1, LOGGED));
});

test('input arriving between batches is handled in its own turn, and a commit point (a PROPOSAL carries one too) only extends the backlog', () => {
  const { core, now } = restartedFollower();
  // The leader's commit point when it proposes: all of epoch 1 (NEWLEADER committed it).
  const r = deliver(core, now + 1, 'p3', {
    type: 'PROPOSAL',
    epoch: 2,
    commitZxid: zxid(1, LOGGED),
    txns: [{ ...txn(1), zxid: zxid(2, 1) }],
  });
  assert.ok(
    r.persist.some((p) => p.op === 'append'),
    'the proposal is logged while the backlog waits',
  );
  assert.equal(
    core.lastApplied.counter,
    2 * PER_TURN,
    'the commit point a proposal carries applies one batch, no more',
  );
  deliver(core, now + 2, 'p3', { type: 'COMMIT', epoch: 2, zxid: zxid(2, 1) });
  assert.deepEqual(
    core.lastApplied,
    zxid(2, 1),
    'a commit applies one more batch, in order: the rest and the new txn',
  );
  assert.notEqual(core.nextTimerAt(), now + 2, 'nothing left to apply');
});
