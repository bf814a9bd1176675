import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import type { Txn } from '../../src/node/core/types.js';
import { decodeRecordAt, encodeTxns, markSyncPoint } from '../../src/node/log/record-codec.js';

function txn(epoch: number, counter: number, data: Uint8Array, extra: Partial<Txn> = {}): Txn {
  return { zxid: { epoch, counter }, path: '/k', data, clientId: 'c1', requestId: counter, ...extra };
}

function plain(t: Txn): unknown {
  return { ...t, data: Array.from(t.data) };
}

describe('record codec', () => {
  it('round-trips a batch, including unicode strings, empty data and fractional request ids', () => {
    const txns = [
      txn(1, 1, new Uint8Array([1, 2, 3])),
      txn(1, 2, new Uint8Array(0), { path: '/ü/路径', clientId: 'client-é', requestId: 2 ** 53 + 2 }),
      txn(0xffffffff, 0xffffffff, new Uint8Array(1024).fill(7), { requestId: 1.5 }),
    ];
    const { buffer, offsets } = encodeTxns(txns);
    assert.equal(offsets.length, 3);
    let off = 0;
    for (let i = 0; i < txns.length; i++) {
      assert.equal(off, offsets[i]);
      const r = decodeRecordAt(buffer, off);
      assert.ok(r.ok, 'record decodes');
      assert.deepEqual(plain(r.txn), plain(txns[i]!));
      assert.equal(r.syncPoint, false);
      off += r.size;
    }
    assert.equal(off, buffer.length);
  });

  it('seals each record with zlib’s CRC-32 of its length field and payload, taken in one piece', () => {
    const { buffer, offsets } = encodeTxns(
      [0, 1, 255, 1024, 70_000].map((n, i) => txn(3, i + 1, new Uint8Array(n).fill(i * 37 + 1))),
    );
    for (const off of offsets) {
      const len = buffer.readUInt32LE(off);
      const sealed = Buffer.concat([buffer.subarray(off, off + 4), buffer.subarray(off + 8, off + 8 + len)]);
      assert.equal(buffer.readUInt32LE(off + 4), crc32(sealed), `record at ${off}`);
    }
  });

  it('detects a flipped bit anywhere in a record: length, CRC or payload', () => {
    const { buffer } = encodeTxns([txn(2, 9, new Uint8Array(64).fill(1))]);
    for (let i = 0; i < buffer.length; i++) {
      const copy = Buffer.from(buffer);
      copy[i]! ^= 0x10;
      assert.equal(decodeRecordAt(copy, 0).ok, false, `flip at byte ${i} went unnoticed`);
    }
  });

  it('reports a record cut short as not a record', () => {
    const { buffer } = encodeTxns([txn(1, 1, new Uint8Array(100))]);
    for (const len of [0, 3, 8, 30, buffer.length - 1]) {
      const r = decodeRecordAt(buffer.subarray(0, len), 0);
      assert.equal(r.ok, false, `length ${len}`);
    }
  });

  it('marks a sync point and keeps the record valid', () => {
    const { buffer, offsets } = encodeTxns([txn(1, 1, new Uint8Array(5)), txn(1, 2, new Uint8Array(5))]);
    markSyncPoint(buffer, offsets[1]!);
    const first = decodeRecordAt(buffer, 0);
    const second = decodeRecordAt(buffer, offsets[1]!);
    assert.ok(first.ok && second.ok);
    assert.equal(first.syncPoint, false);
    assert.equal(second.syncPoint, true);
  });

  it('refuses values the format cannot hold', () => {
    assert.throws(() => encodeTxns([txn(-1, 1, new Uint8Array(0))]), RangeError);
    assert.throws(() => encodeTxns([txn(1, 2 ** 32, new Uint8Array(0))]), RangeError);
    assert.throws(() => encodeTxns([txn(1, 1, new Uint8Array(0), { path: 'x'.repeat(70000) })]), RangeError);
  });
});
