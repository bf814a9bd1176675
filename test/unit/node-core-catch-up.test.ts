// Whom a new leader that is behind its quorum fetches the missing state from (cluster.catchUpFrom).
// The paper's Fig. 8a set-up by hand: p1 comes back outdated, is elected (preference oracle) and
// hears from p2 (its own data center, so first) and p4 (across the link), both equally ahead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Ready } from '../../src/node/core/core-types.js';
import type { CatchUpFrom, NodeCore } from '../../src/node/core/node-core.js';
import type { NodeId, Txn } from '../../src/node/core/types.js';
import { type Zxid, zxid } from '../../src/vocabulary/zxid.js';
import { deliver, electedP1 as elected } from '../support/elected-core.js';

const txn = (counter: number): Txn => ({
  zxid: zxid(1, counter),
  path: `/k${counter}`,
  data: new Uint8Array([counter]),
  clientId: 'c',
  requestId: counter,
});

/** p1, 3 txns into epoch 1, elected leader of epoch 2; returns it in discovery. */
function electedP1(catchUpFrom?: CatchUpFrom): NodeCore {
  return elected([1, 2, 3].map(txn), catchUpFrom);
}

/** FOLLOWERINFO then ACKEPOCH from each of `from`, in that order; the sends of the last step. */
function join(core: NodeCore, followers: readonly { id: NodeId; last: Zxid }[]): Ready {
  let r: Ready | undefined;
  let now = 210;
  for (const f of followers) {
    const info = deliver(core, now++, f.id, {
      type: 'FOLLOWERINFO',
      epoch: 2,
      acceptedEpoch: 2,
      lastZxid: f.last,
      session: 1,
    });
    assert.ok(info.sends.some((s) => s.to === f.id && s.msg.type === 'LEADERINFO'));
  }
  for (const f of followers) {
    r = deliver(core, now++, f.id, {
      type: 'ACKEPOCH',
      epoch: 2,
      currentEpoch: 1,
      lastZxid: f.last,
      ranges: [],
    });
  }
  return r!;
}

const fetchedFrom = (r: Ready): NodeId | undefined => r.sends.find((s) => s.msg.type === 'FETCH')?.to;

test('first-answer (the default): among equally ahead members, the one that joined first', () => {
  const r = join(electedP1(), [
    { id: 'p2', last: zxid(1, 700) },
    { id: 'p4', last: zxid(1, 700) },
  ]);
  assert.equal(fetchedFrom(r), 'p2');
});

test('highest-id: among equally ahead members, the highest server id, as ZooKeeper ranks equal votes', () => {
  const r = join(electedP1('highest-id'), [
    { id: 'p2', last: zxid(1, 700) },
    { id: 'p4', last: zxid(1, 700) },
  ]);
  assert.equal(fetchedFrom(r), 'p4');
  assert.ok(r.events.some((e) => e.ev === 'fetch-history' && e.from === 'p4'));
});

test('highest-id still takes the most up-to-date member first: the id only breaks ties', () => {
  const r = join(electedP1('highest-id'), [
    { id: 'p2', last: zxid(1, 701) },
    { id: 'p4', last: zxid(1, 700) },
  ]);
  assert.equal(fetchedFrom(r), 'p2');
});

test('highest-id never fetches from a member only as up to date as the leader itself', () => {
  const r = join(electedP1('highest-id'), [
    { id: 'p2', last: zxid(1, 3) },
    { id: 'p4', last: zxid(1, 3) },
  ]);
  assert.equal(fetchedFrom(r), undefined);
  assert.ok(
    r.events.some((e) => e.ev === 'phase' && e.phase === 'sync'),
    'with nothing to fetch it syncs at once',
  );
});
