// The node's `elected` event says what bounded its election (the report's recovery explanation
// reads it): whether the collection ended because every member proposed or because T ran out,
// T's value and the proposal rounds. The core is driven by hand: p4 elects after p5, the leader,
// is gone (the paper's kill), or with every member alive.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreEvent, PeerMessage } from '../../src/node/core/core-types.js';
import { NodeCore } from '../../src/node/core/node-core.js';
import { createOracle } from '../../src/node/core/oracles/registry.js';
import type { NodeId, Txn } from '../../src/node/core/types.js';
import { zxid } from '../../src/vocabulary/zxid.js';

const members = [1, 2, 3, 4, 5].map((sid) => ({ id: `p${sid}`, sid }));
const T = 100;
/** A retry before T can run out, so the round count has something to count. */
const RETRY = 60;
const timers = { tickMs: 50, syncLimit: 5, initLimit: 10, electionTimeoutMs: T, retryBaseMs: RETRY };

const txn = (counter: number): Txn => ({
  zxid: zxid(1, counter),
  path: `/k${counter}`,
  data: new Uint8Array([counter]),
  clientId: 'c',
  requestId: counter,
});

/** p4 with the longest history (history oracle: it wins), electing epoch 2 from time 0. */
function p4(): { core: NodeCore; events: CoreEvent[] } {
  const core = new NodeCore(
    { self: members[3]!, members, oracle: createOracle('history'), timers, snapshotEvery: 1000 },
    { acceptedEpoch: 1, currentEpoch: 1, acceptedLeader: 'p5', txns: [1, 2, 3].map(txn) },
  );
  const events: CoreEvent[] = [];
  core.start(0);
  for (const m of members) if (m.id !== 'p4') core.step({ type: 'connected', now: 0, peer: m.id });
  events.push(...core.ready().events);
  return { core, events };
}

/** A proposal of `from` for itself in epoch 2, one txn behind p4. */
function propose(core: NodeCore, now: number, from: NodeId): CoreEvent[] {
  const sid = members.find((m) => m.id === from)!.sid;
  const msg: PeerMessage = { type: 'P', epoch: 2, proposal: { id: from, sid, score: [1, 2] } };
  core.step({ type: 'message', now, from, msg });
  return core.ready().events;
}

function tick(core: NodeCore, now: number): CoreEvent[] {
  core.step({ type: 'tick', now });
  return core.ready().events;
}

const elected = (events: readonly CoreEvent[]): Extract<CoreEvent, { ev: 'elected' }>[] =>
  events.filter((e): e is Extract<CoreEvent, { ev: 'elected' }> => e.ev === 'elected');

test("a member that never proposes (the dead leader) leaves the election to T: the event says 'timer'", () => {
  const { core, events } = p4();
  assert.equal(elected(events).length, 0);
  // Nobody has answered by the first retry: p4 proposes to all again (round 2).
  core.step({ type: 'tick', now: RETRY });
  const retry = core.ready();
  assert.deepEqual(elected(retry.events), []);
  assert.deepEqual(
    retry.sends.filter((s) => s.msg.type === 'P').map((s) => s.to),
    ['p1', 'p2', 'p3', 'p5'],
  );
  // p1, p2, p3 answer at 70: with p4 a quorum, T starts; p5 is dead and never does.
  for (const from of ['p1', 'p2', 'p3']) assert.deepEqual(elected(propose(core, 70, from)), []);
  assert.deepEqual(elected(tick(core, 70 + T - 1)), []);
  const [e, ...more] = elected(tick(core, 70 + T));
  assert.equal(more.length, 0);
  assert.ok(e, 'no elected event when T ran out');
  assert.equal(e.leader, 'p4');
  assert.equal(e.epoch, 2);
  assert.equal(e.reason, 'timer');
  assert.equal(e.timeoutMs, T);
  assert.equal(e.rounds, 2);
  assert.deepEqual(e.unheard, ['p5']);
  assert.equal(core.role, 'leading');
});

test("when every member proposes the collection ends at once: the event says 'all-proposals'", () => {
  const { core } = p4();
  assert.deepEqual(elected(propose(core, 10, 'p1')), []);
  assert.deepEqual(elected(propose(core, 11, 'p2')), []);
  assert.deepEqual(elected(propose(core, 12, 'p3')), []);
  // The fifth proposal decides in the same step, long before T (a quorum at 11 set it for 111).
  const [e] = elected(propose(core, 13, 'p5'));
  assert.ok(e, 'no elected event on the last proposal');
  assert.equal(e.leader, 'p4');
  assert.equal(e.reason, 'all-proposals');
  assert.equal(e.timeoutMs, T);
  assert.equal(e.rounds, 1);
  assert.deepEqual(e.unheard, []);
  assert.equal(core.role, 'leading');
});
