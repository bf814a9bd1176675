import { EncodedState } from '../../src/node/core/state-snapshot.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataTree } from '../../src/node/core/data-tree.js';
import { TxnHistory } from '../../src/node/core/txn-history.js';
import type { Txn } from '../../src/node/core/types.js';
import { ZERO_ZXID, zxid, type Zxid } from '../../src/vocabulary/zxid.js';
import { Random } from '../../src/util/random.js';

const txn = (e: number, c: number, id = `${e}.${c}`): Txn => ({
  zxid: zxid(e, c),
  path: `/k${c % 3}`,
  data: new TextEncoder().encode(id),
  clientId: 'c',
  requestId: e * 1000 + c,
});

function history(base: Zxid, zs: Array<[number, number]>): TxnHistory {
  const h = new TxnHistory(base);
  for (const [e, c] of zs) h.append(txn(e, c));
  return h;
}

const noSnapshot = (): never => {
  throw new Error('no SNAP expected');
};

test('ranges describe runs of consecutive counters per epoch, base included', () => {
  const h = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [1, 3],
    [2, 1],
    [2, 2],
    [4, 1],
  ]);
  assert.deepEqual(h.ranges(), [
    { epoch: 0, first: 0, last: 0 },
    { epoch: 1, first: 1, last: 3 },
    { epoch: 2, first: 1, last: 2 },
    { epoch: 4, first: 1, last: 1 },
  ]);
});

test('a follower that is a prefix of the leader gets a DIFF of exactly what it lacks', () => {
  const leader = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [1, 3],
    [2, 1],
  ]);
  const follower = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
  ]);
  const plan = leader.planSync(follower.ranges(), follower.last, noSnapshot);
  assert.equal(plan.truncateTo, undefined);
  assert.equal(plan.snapshot, undefined);
  assert.deepEqual(
    plan.txns.map((t) => t.zxid),
    [zxid(1, 3), zxid(2, 1)],
  );
});

test('a follower with an uncommitted tail of an old epoch is truncated to the common point, then diffed', () => {
  const leader = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [3, 1],
    [3, 2],
  ]);
  const follower = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [2, 1],
    [2, 2],
  ]);
  const plan = leader.planSync(follower.ranges(), follower.last, noSnapshot);
  assert.deepEqual(plan.truncateTo, zxid(1, 2));
  assert.deepEqual(
    plan.txns.map((t) => t.zxid),
    [zxid(3, 1), zxid(3, 2)],
  );
});

test('a follower ahead of the leader in the same epoch is truncated with nothing to add', () => {
  const leader = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
  ]);
  const follower = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [1, 3],
  ]);
  const plan = leader.planSync(follower.ranges(), follower.last, noSnapshot);
  assert.deepEqual(plan.truncateTo, zxid(1, 2));
  assert.deepEqual(plan.txns, []);
});

test('a follower behind the leader’s snapshot gets a SNAP and the txns after it', () => {
  const leader = history(zxid(1, 5), [
    [1, 6],
    [1, 7],
  ]);
  const follower = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
  ]);
  const plan = leader.planSync(
    follower.ranges(),
    follower.last,
    () => new EncodedState(zxid(1, 6), new Uint8Array([9])),
  );
  assert.deepEqual(plan.snapshot?.zxid, zxid(1, 6));
  assert.deepEqual(
    plan.txns.map((t) => t.zxid),
    [zxid(1, 7)],
  );
});

test('the data tree applies a retried request once and its snapshot keeps the dedup table', () => {
  const tree = new DataTree();
  const a = tree.apply({
    zxid: zxid(1, 1),
    path: '/x',
    data: new Uint8Array([1]),
    clientId: 'c',
    requestId: 7,
  });
  const again = tree.apply({
    zxid: zxid(2, 1),
    path: '/x',
    data: new Uint8Array([2]),
    clientId: 'c',
    requestId: 7,
  });
  assert.equal(a.applied, true);
  assert.equal(again.applied, false);
  assert.deepEqual(again.zxid, zxid(1, 1));
  assert.deepEqual([...(tree.get('/x')?.data ?? [])], [1]);
  const copy = DataTree.deserialize(tree.serialize());
  assert.deepEqual(copy.lookupDone('c', 7), zxid(1, 1));
  assert.deepEqual(copy.lastApplied, zxid(2, 1));
  assert.deepEqual([...(copy.get('/x')?.data ?? [])], [1]);
  assert.equal(copy.get('/x')?.version, 0);
  assert.deepEqual(copy.get('/x')?.zxid, zxid(1, 1));
  assert.throws(() => copy.apply(txn(1, 1)), /out of order/);
});

test('past the diff limit a follower gets a snapshot and the txns after it; at the limit, a DIFF', () => {
  const leader = history(ZERO_ZXID, [
    [1, 1],
    [1, 2],
    [1, 3],
    [1, 4],
  ]);
  const follower = history(ZERO_ZXID, [[1, 1]]);
  // Three txns behind: a DIFF while the limit is 3, a snapshot once it is 2.
  const atLimit = leader.planSync(follower.ranges(), follower.last, noSnapshot, 3);
  assert.deepEqual(
    atLimit.txns.map((t) => t.zxid),
    [zxid(1, 2), zxid(1, 3), zxid(1, 4)],
  );
  const beyond = leader.planSync(
    follower.ranges(),
    follower.last,
    () => new EncodedState(zxid(1, 3), new Uint8Array([7])),
    2,
  );
  assert.deepEqual(beyond.snapshot?.zxid, zxid(1, 3));
  assert.deepEqual(
    beyond.txns.map((t) => t.zxid),
    [zxid(1, 4)],
  );
  assert.equal(beyond.truncateTo, undefined);
});

test('ranges kept as txns are appended agree with a walk over the log, through truncations, compactions and resets', () => {
  // The runs are kept incrementally; the reference is the definition: consecutive counters per epoch.
  const walk = (base: Zxid, txns: readonly Zxid[]): Array<{ epoch: number; first: number; last: number }> => {
    const out = [{ epoch: base.epoch, first: base.counter, last: base.counter }];
    for (const z of txns) {
      const r = out[out.length - 1]!;
      if (z.epoch === r.epoch && z.counter === r.last + 1) r.last = z.counter;
      else out.push({ epoch: z.epoch, first: z.counter, last: z.counter });
    }
    return out;
  };
  for (let seed = 1; seed <= 30; seed++) {
    const rng = new Random(seed);
    const h = new TxnHistory(zxid(1, 0));
    let held: Zxid[] = [];
    let base = zxid(1, 0);
    for (let step = 0; step < 300; step++) {
      const last = held[held.length - 1] ?? base;
      const roll = rng.next();
      if (roll < 0.8) {
        // Mostly the next counter, sometimes a new epoch (a hole is refused: the test below).
        const z = roll < 0.05 ? zxid(last.epoch + 1, 1) : zxid(last.epoch, last.counter + 1);
        h.append(txn(z.epoch, z.counter));
        held.push(z);
      } else if (roll < 0.88 && held.length > 0) {
        const at = held[Math.floor(rng.next() * held.length)]!;
        h.truncateAfter(at);
        held = held.filter((z) => z.epoch < at.epoch || (z.epoch === at.epoch && z.counter <= at.counter));
      } else if (roll < 0.96 && held.length > 0) {
        const at = held[Math.floor(rng.next() * held.length)]!;
        h.compactTo(at);
        held = held.filter((z) => z.epoch > at.epoch || (z.epoch === at.epoch && z.counter > at.counter));
        base = at;
      } else if (roll >= 0.96) {
        base = zxid(last.epoch + 1, 5);
        h.reset(base);
        held = [];
      }
      assert.deepEqual(h.ranges(), walk(base, held), `seed ${seed}, step ${step}`);
    }
  }
});

test('the newest txns kept in memory: cut in steps, never past what is applied; a log behind the cut gets a SNAP', () => {
  const counters = (h: TxnHistory): number[] => h.slice(h.base).map((t) => t.zxid.counter);
  /** Counters first..first+n-1. */
  const run = (first: number, n: number): number[] => Array.from({ length: n }, (_, i) => first + i);
  /** A log of epoch 1's txns 1..n from the start. */
  const upTo = (n: number): TxnHistory =>
    history(
      ZERO_ZXID,
      run(1, n).map((c): [number, number] => [1, c]),
    );
  const leader = upTo(50);
  assert.equal(leader.keepNewest(40, zxid(1, 50)), false, 'within a quarter of the window: no cut');
  for (let c = 51; c <= 100; c++) leader.append(txn(1, c));
  // Applied only up to 1:30: the cut stops there, whatever the window says.
  assert.equal(leader.keepNewest(40, zxid(1, 30)), true);
  assert.deepEqual(leader.base, zxid(1, 30));
  assert.equal(leader.length, 70);
  // Applied up to the end: the newest 40 stay.
  assert.equal(leader.keepNewest(40, zxid(1, 100)), true);
  assert.deepEqual(leader.base, zxid(1, 60));
  assert.deepEqual(counters(leader), run(61, 40));
  assert.deepEqual(leader.ranges(), [{ epoch: 1, first: 60, last: 100 }]);

  // A follower at 1:70 is within the window: a DIFF of what it lacks.
  const near = upTo(70);
  const diff = leader.planSync(near.ranges(), near.last, noSnapshot);
  assert.deepEqual(
    diff.txns.map((t) => t.zxid.counter),
    run(71, 30),
  );
  assert.equal(diff.snapshot, undefined);
  // One at 1:50 is behind the cut: a snapshot, then the txns after it.
  const far = upTo(50);
  const snap = leader.planSync(
    far.ranges(),
    far.last,
    () => new EncodedState(zxid(1, 90), new Uint8Array([1])),
  );
  assert.deepEqual(snap.snapshot?.zxid, zxid(1, 90));
  assert.deepEqual(
    snap.txns.map((t) => t.zxid.counter),
    run(91, 10),
  );
});

test('a txn that does not follow the log is refused: the next of its epoch, or a newer epoch from 1', () => {
  const h = history(zxid(2, 40), [
    [2, 41],
    [2, 42],
  ]);
  assert.throws(() => h.append(txn(2, 44)), /log append with a hole: 2:44 after 2:42/);
  assert.throws(() => h.append(txn(3, 2)), /log append with a hole: 3:2 after 2:42/);
  assert.throws(() => h.append(txn(2, 42)), /out of order/);
  h.append(txn(2, 43));
  h.append(txn(5, 1));
  h.append(txn(5, 2));
  assert.deepEqual(h.last, zxid(5, 2));
  // After a snapshot's point, as after a recovery from one.
  const fresh = new TxnHistory(zxid(3, 7));
  assert.throws(() => fresh.append(txn(3, 9)), /hole/);
  fresh.append(txn(3, 8));
});
