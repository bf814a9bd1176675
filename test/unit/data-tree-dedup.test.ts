// The table of applied requests that makes a retried write apply once: bounded, oldest forgotten
// first, the same on every replica and across a snapshot.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataTree, requestKey } from '../../src/node/core/data-tree.js';
import type { Txn } from '../../src/node/core/types.js';
import { zxid } from '../../src/node/core/zxid.js';

let counter = 0;
const write = (requestId: number, clientId = 'c'): Txn => ({
  zxid: zxid(1, ++counter),
  path: `/k${requestId}`,
  data: new Uint8Array([requestId & 0xff]),
  clientId,
  requestId,
});

const remembered = (tree: DataTree, ids: readonly number[]): number[] =>
  ids.filter((id) => tree.lookupDone(requestKey('c', id)) !== undefined);

test('past the window the oldest requests are forgotten first, one per new request', () => {
  const tree = new DataTree(3);
  const ids = Array.from({ length: 10 }, (_, i) => i + 1);
  for (const id of ids) tree.apply(write(id));
  assert.deepEqual(remembered(tree, ids), [8, 9, 10]);
  // A retry of a remembered request changes nothing; one of a forgotten request applies again.
  assert.equal(tree.apply(write(9)).applied, false);
  assert.equal(tree.get('/k9')!.version, 0);
  assert.equal(tree.apply(write(2)).applied, true);
  assert.equal(tree.get('/k2')!.version, 1);
  assert.deepEqual(remembered(tree, ids), [2, 9, 10]);
});

test('eviction stays oldest-first over many rounds (the table compacts under it)', () => {
  const window = 1_000;
  const tree = new DataTree(window);
  const total = 50_000;
  for (let id = 1; id <= total; id++) {
    tree.apply(write(id));
    if (id % 7_919 === 0) {
      // The window holds exactly the newest `window` requests at any point.
      assert.ok(tree.lookupDone(requestKey('c', id - window + 1)), `${id - window + 1} forgotten too early`);
      assert.equal(tree.lookupDone(requestKey('c', id - window)), undefined, `${id - window} kept too long`);
    }
  }
});

test('a tree made from a snapshot goes on forgetting in the same order as the original', () => {
  const a = new DataTree(4);
  for (let id = 1; id <= 6; id++) a.apply(write(id));
  const b = DataTree.deserialize(a.serialize(), 4);
  for (const t of [7, 8].map((id) => write(id))) {
    a.apply(t);
    b.apply(t);
  }
  const ids = Array.from({ length: 8 }, (_, i) => i + 1);
  assert.deepEqual(remembered(a, ids), [5, 6, 7, 8]);
  assert.deepEqual(remembered(b, ids), [5, 6, 7, 8]);
  assert.deepEqual(b.serialize(), a.serialize());
});

test('a window of 0 remembers nothing and keeps working', () => {
  const tree = new DataTree(0);
  for (let id = 1; id <= 5; id++) assert.equal(tree.apply(write(id)).applied, true);
  assert.deepEqual(remembered(tree, [1, 2, 3, 4, 5]), []);
  assert.equal(tree.apply(write(5)).applied, true, 'nothing remembered: a retry applies again');
});
