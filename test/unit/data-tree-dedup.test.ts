// The table of applied requests that makes a retried write apply once: bounded, oldest forgotten
// first, the same on every replica and across a snapshot.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataTree } from '../../src/node/core/data-tree.js';
import type { Txn } from '../../src/node/core/types.js';
import { zxid } from '../../src/vocabulary/zxid.js';

let counter = 0;
const write = (requestId: number, clientId = 'c'): Txn => ({
  zxid: zxid(1, ++counter),
  path: `/k${requestId}`,
  data: new Uint8Array([requestId & 0xff]),
  clientId,
  requestId,
});

const remembered = (tree: DataTree, ids: readonly number[]): number[] =>
  ids.filter((id) => tree.lookupDone('c', id) !== undefined);

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
      assert.ok(tree.lookupDone('c', id - window + 1), `${id - window + 1} forgotten too early`);
      assert.equal(tree.lookupDone('c', id - window), undefined, `${id - window} kept too long`);
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

test('a request below its client’s highest is still looked up: retries out of order are found', () => {
  const tree = new DataTree(100);
  for (const id of [5, 9, 3]) assert.equal(tree.apply(write(id)).applied, true);
  for (const id of [3, 5, 9]) assert.equal(tree.apply(write(id)).applied, false, `retry of ${id}`);
  assert.equal(tree.apply(write(4)).applied, true, 'never applied, below the highest');
  // Clients are apart: the same requestId of another client is another request.
  assert.equal(tree.apply(write(9, 'd')).applied, true);
  assert.ok(tree.lookupDone('d', 9));
  assert.equal(tree.lookupDone('c', 10), undefined);
});

test('a client whose requests were all forgotten comes back with nothing remembered', () => {
  const tree = new DataTree(2);
  tree.apply(write(7, 'gone'));
  tree.apply(write(1, 'x'));
  tree.apply(write(2, 'x'));
  assert.equal(tree.lookupDone('gone', 7), undefined);
  assert.equal(tree.apply(write(3, 'gone')).applied, true);
  assert.equal(tree.apply(write(7, 'gone')).applied, true, 'forgotten: applies again');
  assert.equal(tree.apply(write(3, 'gone')).applied, false);
});

test('the encoded size kept as the tree moves is the size of its snapshot, keys of any client and id', () => {
  const tree = new DataTree(5);
  const clients = ['c', 'é-ü', 'a\u0000b', ''];
  const ids = [0, 7, -12, 1_234_567_890_123, 10, 99, 100, 9_007_199_254_740_991];
  ids.forEach((id, i) => {
    tree.apply(write(id, clients[i % clients.length]));
    assert.equal(tree.byteLength, tree.serialize().byteLength, `after request ${id}`);
  });
  // Decoded, every key comes back to its (clientId, requestId), even a clientId holding a NUL.
  const back = DataTree.deserialize(tree.serialize(), 5);
  assert.deepEqual(back.serialize(), tree.serialize());
  assert.ok(back.lookupDone('a\u0000b', 100));
  assert.ok(back.lookupDone('', 9_007_199_254_740_991));
  // A smaller window on the way in forgets the oldest, and the size follows.
  const small = DataTree.deserialize(tree.serialize(), 2);
  assert.equal(small.byteLength, small.serialize().byteLength);
  assert.equal(small.lookupDone('é-ü', 10), undefined);
  assert.ok(small.lookupDone('a\u0000b', 100));
});

test('a snapshot key no request could have made is refused', () => {
  const tree = new DataTree();
  tree.apply(write(12));
  const bytes = Buffer.from(tree.serialize());
  // The key `c\0 12` is last: its digits become `1x`.
  bytes[bytes.length - 1] = 'x'.charCodeAt(0);
  assert.throws(() => DataTree.deserialize(bytes), /malformed request key/);
});
