// A NodeCore driven by hand to leadership, for tests of what a leader does next: p1 of five, the
// preference oracle ranking p1 first, p2, p3 and p4 connected (p5 down) and proposing themselves
// for epoch 2; the election's timer makes p1 the leader of epoch 2, in discovery.
import assert from 'node:assert/strict';
import type { PeerMessage, Ready } from '../../src/node/core/core-types.js';
import { type CatchUpFrom, NodeCore } from '../../src/node/core/node-core.js';
import { createOracle } from '../../src/node/core/oracles/registry.js';
import type { NodeId, Txn } from '../../src/node/core/types.js';

export const members = [1, 2, 3, 4, 5].map((sid) => ({ id: `p${sid}`, sid }));
export const timers = { tickMs: 50, syncLimit: 5, initLimit: 10, electionTimeoutMs: 100, retryBaseMs: 100 };

export function deliver(core: NodeCore, now: number, from: NodeId, msg: PeerMessage): Ready {
  core.step({ type: 'message', now, from, msg });
  return core.ready();
}

/** p1 with `txns` of epoch 1 in its log, elected leader of epoch 2 at 200 ms. */
export function electedP1(txns: readonly Txn[], catchUpFrom?: CatchUpFrom): NodeCore {
  const core = new NodeCore(
    {
      self: members[0]!,
      members,
      oracle: createOracle('preference', { preference: ['p1', 'p2', 'p3', 'p4', 'p5'] }),
      timers,
      snapshotEvery: 1000,
      ...(catchUpFrom ? { catchUpFrom } : {}),
    },
    { acceptedEpoch: 1, currentEpoch: 1, acceptedLeader: 'p5', txns: [...txns] },
  );
  core.start(0);
  for (const m of members)
    if (m.id !== 'p1' && m.id !== 'p5') core.step({ type: 'connected', now: 0, peer: m.id });
  core.ready();
  // The others propose themselves with their preference scores (5 for p1 down to 1 for p5): p1 wins.
  for (const from of ['p2', 'p3', 'p4']) {
    const m = members.find((x) => x.id === from)!;
    deliver(core, 1, from, { type: 'P', epoch: 2, proposal: { id: from, sid: m.sid, score: [6 - m.sid] } });
  }
  core.step({ type: 'tick', now: 200 });
  core.ready();
  assert.equal(core.role, 'leading', 'p1 should lead epoch 2');
  return core;
}
