import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DataTree } from '../../src/node/core/data-tree.js';
import { EncodedState, SnapshotDecoder, snapshotBytes } from '../../src/node/core/state-snapshot.js';
import type { Txn } from '../../src/node/core/types.js';

function txn(counter: number, path: string, data: number[], requestId = counter): Txn {
  return { zxid: { epoch: 1, counter }, path, data: Uint8Array.from(data), clientId: 'c', requestId };
}

function bigTree(n: number): DataTree {
  const tree = new DataTree();
  for (let i = 1; i <= n; i++) {
    const data = Array.from({ length: (i * 37) % 3000 }, (_, k) => (k + i) & 0xff);
    tree.apply(txn(i, `/dc${i % 3}/k${i % (n / 2)}/é`, data));
  }
  return tree;
}

test('the byte format is the one snapshot files have always had', () => {
  const tree = new DataTree();
  tree.apply(txn(1, '/a', [1, 2]));
  tree.apply(txn(2, '/b', [3]));
  const hex = [
    '00000001 00000002 00000002 00000002',
    '00000002 00000000 00000001 00000001 00000002 2f61 0102',
    '00000002 00000000 00000001 00000002 00000001 2f62 03',
    '00000003 00000001 00000001 630031',
    '00000003 00000001 00000002 630032',
  ]
    .join('')
    .replace(/ /g, '');
  assert.equal(snapshotBytes(tree.freeze()).toString('hex'), hex);
  assert.equal(tree.freeze().byteLength, hex.length / 2);
});

test('chunks of any size concatenate to the same bytes, each chunk whole records up to that size', () => {
  const tree = bigTree(3000);
  const whole = snapshotBytes(tree.freeze());
  assert.equal(tree.freeze().byteLength, whole.length);
  for (const size of [1, 4096, 100_000]) {
    const chunks = [...tree.freeze().chunks(size)];
    assert.deepEqual(Buffer.concat(chunks), whole, `chunks of ${size}`);
    // A chunk holds whole records up to the size (a record larger than that goes alone), and every
    // chunk but the last is full to within one record (the largest here is under 3,100 bytes).
    for (const c of chunks) assert.ok(c.byteLength <= Math.max(size, 3100), `${c.byteLength} > ${size}`);
    for (const c of chunks.slice(0, -1)) assert.ok(c.byteLength > size - 3100, `${c.byteLength} of ${size}`);
  }
});

test('a decoder fed pieces cut anywhere rebuilds the same state; a frozen state does not move with its tree', () => {
  const tree = bigTree(2000);
  const frozen = tree.freeze();
  const bytes = snapshotBytes(frozen);
  // The tree moves on; the snapshot taken before stays as it was.
  tree.apply(txn(2001, '/dc2/k0/é', [9, 9, 9]));
  assert.deepEqual(snapshotBytes(frozen), bytes);
  for (const cut of [3, 1000, 65_536]) {
    const d = new SnapshotDecoder();
    for (let o = 0; o < bytes.length; o += cut) d.push(bytes.subarray(o, o + cut));
    const back = DataTree.fromSnapshot(d.finish());
    assert.deepEqual(snapshotBytes(back.freeze()), bytes, `pieces of ${cut}`);
    assert.equal(d.finish().byteLength, bytes.length);
  }
  assert.equal(
    DataTree.fromSnapshot(new EncodedState(frozen.zxid, bytes)).get('/dc2/k0/é')?.zxid.counter,
    2000,
  );
});

test('a truncated or overlong snapshot is refused', () => {
  const bytes = snapshotBytes(bigTree(50).freeze());
  const short = new SnapshotDecoder();
  short.push(bytes.subarray(0, bytes.length - 1));
  assert.throws(() => short.finish(), /truncated/);
  assert.throws(() => new SnapshotDecoder().push(Buffer.concat([bytes, Buffer.from([0])])), /trailing/);
  assert.throws(() => DataTree.deserialize(bytes.subarray(0, 10)), /truncated/);
});
