// Which leader a node may join in an epoch it has already acknowledged, and the back-off of a
// node that keeps failing to join (issue 9). The core is driven by hand, message by message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreEvent, PeerMessage, Ready } from '../../src/node/core/core-types.js';
import { NodeCore } from '../../src/node/core/node-core.js';
import { createOracle } from '../../src/node/core/oracles/registry.js';
import type { NodeId } from '../../src/node/core/types.js';

const members = [1, 2, 3, 4, 5].map((sid) => ({ id: `p${sid}`, sid }));
const timers = { tickMs: 50, syncLimit: 5, initLimit: 10, electionTimeoutMs: 100, retryBaseMs: 100 };

/** p4 after a failed candidacy: it took epoch 2 for itself and holds it on disk. */
function failedCandidate(acceptedEpoch = 2): NodeCore {
  const core = new NodeCore(
    { self: members[3]!, members, oracle: createOracle('history'), timers, snapshotEvery: 1000 },
    { acceptedEpoch, acceptedLeader: 'p4', currentEpoch: 1, txns: [] },
  );
  core.start(0);
  for (const m of members) if (m.id !== 'p4') core.step({ type: 'connected', now: 0, peer: m.id });
  core.ready();
  return core;
}

function deliver(core: NodeCore, now: number, from: NodeId, msg: PeerMessage): Ready {
  core.step({ type: 'message', now, from, msg });
  return core.ready();
}

/** The serving nodes answer p4's proposal with "p3 leads epoch 2". */
function votesForP3(core: NodeCore, now: number): Ready {
  let r: Ready | undefined;
  for (const from of ['p1', 'p2', 'p3']) r = deliver(core, now, from, { type: 'V', epoch: 2, leader: 'p3' });
  return r!;
}

function sessionOf(r: Ready): number {
  const info = r.sends.find((s) => s.msg.type === 'FOLLOWERINFO');
  assert.ok(info, 'no FOLLOWERINFO sent to the chosen leader');
  assert.equal(info.to, 'p3');
  return (info.msg as Extract<PeerMessage, { type: 'FOLLOWERINFO' }>).session;
}

const named = <E extends CoreEvent['ev']>(events: CoreEvent[], ev: E): Extract<CoreEvent, { ev: E }>[] =>
  events.filter((e): e is Extract<CoreEvent, { ev: E }> => e.ev === ev);

test('a failed candidate of epoch 2 joins the leader established in epoch 2', () => {
  const core = failedCandidate();
  const session = sessionOf(votesForP3(core, 10));
  const r = deliver(core, 12, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: true });
  const ack = r.sends.find((s) => s.msg.type === 'ACKEPOCH');
  assert.ok(ack, 'expected ACKEPOCH to p3');
  assert.equal(ack.to, 'p3');
  assert.deepEqual(
    r.persist.find((p) => p.op === 'epochs'),
    { op: 'epochs', acceptedEpoch: 2, currentEpoch: 1, acceptedLeader: 'p3' },
  );
  assert.equal(named(r.events, 'joined-established').length, 1);
  assert.equal(core.role, 'following');
  assert.equal(core.leader, 'p3');
});

test('it refuses a leader of its epoch that is not established yet: two could then serve epoch 2', () => {
  const core = failedCandidate();
  const session = sessionOf(votesForP3(core, 10));
  const r = deliver(core, 12, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: false });
  assert.ok(!r.sends.some((s) => s.msg.type === 'ACKEPOCH'));
  const reject = r.sends.find((s) => s.msg.type === 'REJECT');
  assert.ok(reject && reject.to === 'p3');
  assert.equal(core.role, 'looking');
  assert.equal(core.epochs.accepted, 2);
});

test('it never acknowledges an epoch below one it accepted, established or not', () => {
  const core = failedCandidate(3);
  const session = sessionOf(votesForP3(core, 10));
  const r = deliver(core, 12, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: true });
  assert.ok(!r.sends.some((s) => s.msg.type === 'ACKEPOCH'));
  const reject = r.sends.find((s) => s.msg.type === 'REJECT');
  assert.ok(reject);
  assert.equal((reject.msg as Extract<PeerMessage, { type: 'REJECT' }>).acceptedEpoch, 3);
});

test('refused joins back off: doubling waits before the next election, and one join-failing event a second', () => {
  const core = failedCandidate(3);
  let now = 10;
  const starts: number[] = [];
  const failing: { at: number; event: Extract<CoreEvent, { ev: 'join-failing' }> }[] = [];
  for (let attempt = 0; attempt < 8; attempt++) {
    const session = sessionOf(votesForP3(core, now));
    const r = deliver(core, now + 1, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: true });
    for (const event of named(r.events, 'join-failing')) failing.push({ at: now + 1, event });
    const direct = named(r.events, 'election-started');
    if (direct.length > 0) {
      starts.push(now + 1);
    } else {
      // Backing off: nothing until the deadline the core asks to be woken at.
      const wake = core.nextTimerAt();
      assert.ok(wake !== undefined && wake > now + 1, 'a backing-off node must ask for a later tick');
      core.step({ type: 'tick', now: wake - 1 });
      assert.equal(
        named(core.ready().events, 'election-started').length,
        0,
        'started before its back-off ended',
      );
      core.step({ type: 'tick', now: wake });
      assert.equal(named(core.ready().events, 'election-started').length, 1);
      starts.push(wake);
    }
    now = starts.at(-1)! + 5;
  }
  const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
  // First refusal: elect at once (an ordinary lost race); then wait 100, 200, 400 ms (retryBaseMs
  // doubling), capped at initLimit ticks (500 ms); each gap adds the 6 ms the test takes per attempt.
  assert.deepEqual(gaps, [106, 206, 406, 506, 506, 506, 506]);
  assert.equal(failing[0]!.event.failures, 2);
  assert.equal(failing[0]!.event.backoffMs, 100);
  assert.ok(failing.length >= 2, 'a node that keeps failing must keep saying so');
  for (let i = 1; i < failing.length; i++)
    assert.ok(failing[i]!.at - failing[i - 1]!.at >= 1000, 'join-failing more than once a second');
});

/** p3 of three, chosen initial leader, elected with p1's proposal and (optionally) serving with p1. */
function leaderOfEpoch1(serve: boolean): NodeCore {
  const three = members.slice(0, 3);
  const core = new NodeCore(
    {
      self: three[2]!,
      members: three,
      oracle: createOracle('history'),
      initialLeader: 'p3',
      timers,
      snapshotEvery: 1000,
    },
    { acceptedEpoch: 0, currentEpoch: 0, txns: [] },
  );
  core.start(0);
  for (const peer of ['p1', 'p2']) core.step({ type: 'connected', now: 0, peer });
  deliver(core, 1, 'p1', { type: 'P', epoch: 1, proposal: { score: [0], id: 'p1', sid: 1 } });
  // The retry timer and then the election timer (T after a quorum of proposals) fire.
  for (let i = 0; i < 5 && core.role !== 'leading'; i++) {
    core.step({ type: 'tick', now: core.nextTimerAt()! });
    core.ready();
  }
  assert.equal(core.role, 'leading');
  if (serve) {
    const zero = { epoch: 0, counter: 0 };
    deliver(core, 200, 'p1', {
      type: 'FOLLOWERINFO',
      epoch: 1,
      acceptedEpoch: 0,
      lastZxid: zero,
      session: 1,
    });
    deliver(core, 201, 'p1', { type: 'ACKEPOCH', epoch: 1, currentEpoch: 0, lastZxid: zero, ranges: [] });
    deliver(core, 202, 'p1', { type: 'ACKNEWLEADER', epoch: 1 });
    assert.equal(core.servingLeaderEpoch, 1);
  }
  return core;
}

test('a serving leader told that a member promised a newer epoch re-elects above that epoch', () => {
  const core = leaderOfEpoch1(true);
  // p2 acknowledged epoch 3 to a candidate that never got a quorum: it can never join epoch 1.
  const r = deliver(core, 210, 'p2', { type: 'REJECT', epoch: 1, acceptedEpoch: 3, reason: 'stale-epoch' });
  assert.equal(named(r.events, 'stepped-down')[0]?.reason, 'member-ahead:p2@3');
  assert.ok(
    r.sends.some((s) => s.to === 'p1' && s.msg.type === 'REJECT'),
    'followers must be told at once',
  );
  assert.equal(named(r.events, 'election-started')[0]?.epoch, 4);
  assert.equal(core.servingLeaderEpoch, undefined);
});

test('a leader that steps down in the turn it proposed still logs what it proposed', () => {
  const core = leaderOfEpoch1(true);
  // One turn of the server: a client's write, then a refusal that makes the leader step down,
  // before the turn's effects are taken (ready()).
  core.step({
    type: 'write',
    now: 210,
    handle: 1,
    clientId: 'c',
    requestId: 1,
    path: '/a',
    data: new Uint8Array([1]),
  });
  core.step({
    type: 'message',
    now: 210,
    from: 'p2',
    msg: { type: 'REJECT', epoch: 1, acceptedEpoch: 3, reason: 'stale-epoch' },
  });
  const r = core.ready();
  assert.equal(named(r.events, 'stepped-down')[0]?.reason, 'member-ahead:p2@3');
  const appended = r.persist.flatMap((op) => (op.op === 'append' ? op.txns.map((t) => t.zxid) : []));
  assert.deepEqual(appended, [{ epoch: 1, counter: 1 }], 'the txn in the history must reach the disk');
  assert.deepEqual(core.lastZxid, { epoch: 1, counter: 1 });
});

test('a leader ignores a refusal from a member that voted elsewhere in its own epoch', () => {
  const core = leaderOfEpoch1(false);
  // Not established yet, so p2, which voted for someone else in epoch 1, refused: it retries later.
  const r = deliver(core, 210, 'p2', { type: 'REJECT', epoch: 1, acceptedEpoch: 1, reason: 'stale-epoch' });
  assert.equal(named(r.events, 'stepped-down').length, 0);
  assert.equal(core.role, 'leading');
});

/** p4 following p3 in epoch 2, joined at 12 ms. */
function following(): NodeCore {
  const core = failedCandidate();
  const session = sessionOf(votesForP3(core, 10));
  deliver(core, 12, 'p3', { type: 'LEADERINFO', epoch: 2, session, established: true });
  assert.equal(core.leader, 'p3');
  return core;
}

test('a follower receiving a long snapshot hears its leader in the chunks, and only its leader', () => {
  // syncLimit is 5 ticks of 50 ms: 250 ms of silence from the leader ends the session.
  const silent = following();
  silent.step({ type: 'tick', now: 300 });
  assert.equal(named(silent.ready().events, 'leader-lost')[0]?.reason, 'timeout');

  // Chunks from the leader every 100 ms for a second: still following (initLimit is 500 ms, so
  // the sync itself is bounded: past it, the session ends all the same).
  const receiving = following();
  for (let now = 100; now <= 400; now += 100) {
    receiving.step({ type: 'heard', now, peer: 'p3' });
    receiving.step({ type: 'tick', now });
  }
  assert.equal(receiving.role, 'following');
  assert.equal(named(receiving.ready().events, 'leader-lost').length, 0);
  receiving.step({ type: 'heard', now: 520, peer: 'p3' });
  receiving.step({ type: 'tick', now: 520 });
  assert.equal(named(receiving.ready().events, 'leader-lost')[0]?.reason, 'sync-timeout');

  // Chunks from another member say nothing of the leader.
  const other = following();
  for (let now = 100; now <= 300; now += 100) {
    other.step({ type: 'heard', now, peer: 'p2' });
    other.step({ type: 'tick', now });
  }
  assert.equal(named(other.ready().events, 'leader-lost')[0]?.reason, 'timeout');
});
