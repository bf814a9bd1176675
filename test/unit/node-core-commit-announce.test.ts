// Who hears of a commit when (node-core.ts, announceCommit): a follower gets a COMMIT at once for
// each write it forwarded, the first commit point that covers it included, even while a later
// write of its own is still uncommitted; a follower that forwarded nothing gets no COMMIT and
// hears of the point from the next PROPOSAL, which carries it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PeerMessage, Ready } from '../../src/node/core/core-types.js';
import type { NodeCore } from '../../src/node/core/node-core.js';
import type { NodeId } from '../../src/node/core/types.js';
import { formatZxid, type Zxid, zxid } from '../../src/vocabulary/zxid.js';
import { deliver as deliverAt, electedP1 } from '../support/elected-core.js';

const FOLLOWERS = ['p2', 'p3', 'p4'];

let clock = 200;
function deliver(core: NodeCore, from: NodeId, msg: PeerMessage): Ready {
  return deliverAt(core, ++clock, from, msg);
}

/** p1 serving epoch 2 with p2, p3 and p4 synced (p5 down), nothing written yet. */
function servingP1(): NodeCore {
  const core = electedP1([]);
  clock = 200;
  for (const id of FOLLOWERS)
    deliver(core, id, { type: 'FOLLOWERINFO', epoch: 2, acceptedEpoch: 2, lastZxid: zxid(0, 0), session: 1 });
  for (const id of FOLLOWERS)
    deliver(core, id, { type: 'ACKEPOCH', epoch: 2, currentEpoch: 1, lastZxid: zxid(0, 0), ranges: [] });
  for (const id of FOLLOWERS) deliver(core, id, { type: 'ACKNEWLEADER', epoch: 2 });
  assert.equal(core.phase, 'serving');
  return core;
}

function request(core: NodeCore, from: NodeId, requestId: number): Zxid {
  const r = deliver(core, from, {
    type: 'REQUEST',
    epoch: 2,
    clientId: `c-${from}`,
    requestId,
    path: `/w/${from}/${requestId}`,
    data: new Uint8Array([1]),
  });
  const p = r.sends.find((s) => s.msg.type === 'PROPOSAL');
  assert.ok(p && p.msg.type === 'PROPOSAL', `a PROPOSAL for ${from}'s request ${requestId}`);
  return p.msg.txns[0]!.zxid;
}

/** Every follower ACKs up to `z`; the COMMITs sent, as "to@zxid". */
function ackAll(core: NodeCore, z: Zxid): string[] {
  const commits: string[] = [];
  for (const id of FOLLOWERS)
    for (const s of deliver(core, id, { type: 'ACK', epoch: 2, zxid: z }).sends)
      if (s.msg.type === 'COMMIT') commits.push(`${s.to}@${formatZxid(s.msg.zxid)}`);
  return commits;
}

test('a COMMIT at once to the follower whose client waits, for each of its writes; none to the others', () => {
  const core = servingP1();
  const first = request(core, 'p2', 1);
  const second = request(core, 'p2', 2);
  // The followers' ACKs make the quorum (the leader's own copy is not durable here): p2's first
  // write commits while its second is still out. p2's client waits on the first: it hears now.
  assert.deepEqual(ackAll(core, first), [`p2@${formatZxid(first)}`]);
  assert.deepEqual(ackAll(core, second), [`p2@${formatZxid(second)}`]);
  assert.deepEqual(core.commitZxid, second);
  // p3 and p4 forwarded nothing: the next PROPOSAL tells them (and everyone) the commit point.
  const r = deliver(core, 'p3', {
    type: 'REQUEST',
    epoch: 2,
    clientId: 'c-p3',
    requestId: 1,
    path: '/w/p3/1',
    data: new Uint8Array([1]),
  });
  const told = r.sends.filter((s) => s.msg.type === 'PROPOSAL').map((s) => s.to);
  assert.deepEqual(told.sort(), FOLLOWERS);
  for (const s of r.sends)
    if (s.msg.type === 'PROPOSAL') assert.deepEqual(s.msg.commitZxid, second, `the commit point to ${s.to}`);
});
