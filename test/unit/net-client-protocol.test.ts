import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClientOp,
  ClientStatus,
  DecodeError,
  decodeReply,
  decodeRequest,
  encodeErrorReply,
  encodeReadOk,
  encodeRequest,
  encodeStatusOk,
  encodeWriteOk,
  replyTag,
  statusName,
} from '../../src/node/net/client-protocol.js';
import type { ClientRequest } from '../../src/node/net/client-protocol.js';

/** Strips the length prefix after checking it. */
function payloadOf(frame: Buffer): Buffer {
  assert.equal(frame.readUInt32BE(0), frame.length - 4);
  return frame.subarray(4);
}

const data = new Uint8Array([1, 2, 3, 250]);

test('status codes are the wire values the protocol fixes', () => {
  assert.deepEqual(ClientStatus, {
    OK: 0,
    NOT_LEADER_YET: 1,
    NO_QUORUM: 2,
    TOO_LARGE: 3,
    BAD_FRAME: 4,
    LEADER_LOST: 5,
    NOT_FOUND: 6,
    NOT_SERVING: 7,
  });
  assert.equal(statusName(5), 'LEADER_LOST');
  assert.equal(statusName(99), undefined);
});

test('requests round-trip', () => {
  const reqs: ClientRequest[] = [
    { op: ClientOp.WRITE, tag: 1, clientId: 'agent-ü', requestId: 2 ** 53 - 1, path: '/dc1/k', data },
    { op: ClientOp.WRITE, tag: 0xffff_ffff, clientId: '', requestId: 0, path: '', data: new Uint8Array(0) },
    { op: ClientOp.READ, tag: 7, path: '/dc1/k' },
    { op: ClientOp.STATUS, tag: 8 },
  ];
  for (const req of reqs) {
    const d = decodeRequest(payloadOf(encodeRequest(req)), 1024);
    assert.ok(d.ok);
    assert.deepStrictEqual(
      { ...d.req, ...('data' in d.req ? { data: new Uint8Array(d.req.data) } : {}) },
      req,
    );
  }
});

test('a write over the data limit is TOO_LARGE with its tag; malformed input is BAD_FRAME', () => {
  const big = payloadOf(
    encodeRequest({
      op: ClientOp.WRITE,
      tag: 42,
      clientId: 'c',
      requestId: 1,
      path: '/p',
      data: new Uint8Array(11),
    }),
  );
  assert.deepEqual(
    { ...decodeRequest(big, 10), reason: '' },
    { ok: false, tag: 42, code: 'TOO_LARGE', reason: '' },
  );
  assert.ok(decodeRequest(big, 11).ok);

  const bad = (payload: Buffer, tag: number) => {
    const d = decodeRequest(payload, 1 << 20);
    assert.ok(!d.ok && d.code === 'BAD_FRAME' && d.tag === tag, JSON.stringify(d));
  };
  bad(Buffer.alloc(0), 0);
  bad(Buffer.from([1, 0, 0]), 0); // tag cut short
  bad(Buffer.from([9, 0, 0, 0, 5]), 5); // unknown op
  bad(Buffer.concat([big, Buffer.from([0])]), 42); // trailing byte
  bad(big.subarray(0, big.length - 1), 42); // data shorter than its length
  const status = payloadOf(encodeRequest({ op: ClientOp.STATUS, tag: 3 }));
  bad(Buffer.concat([status, Buffer.from('x')]), 3);
  // requestId that is not a safe integer
  const w = payloadOf(
    encodeRequest({ op: ClientOp.WRITE, tag: 4, clientId: 'c', requestId: 1, path: '/', data }),
  );
  w.writeDoubleBE(0.5, 5 + 4 + 1);
  bad(w, 4);
});

test('replies round-trip for every op and every error code', () => {
  const zxid = { epoch: 7, counter: 0xffff_fffe };
  assert.deepStrictEqual(decodeReply(payloadOf(encodeWriteOk(5, zxid)), ClientOp.WRITE), {
    tag: 5,
    ok: true,
    op: ClientOp.WRITE,
    zxid,
  });
  const read = decodeReply(payloadOf(encodeReadOk(6, { zxid, version: 3, data })), ClientOp.READ);
  assert.ok(read.ok && read.op === ClientOp.READ);
  assert.deepStrictEqual(
    { ...read.result, data: new Uint8Array(read.result.data) },
    { zxid, version: 3, data },
  );
  const status = { role: 'leader', epoch: 7, nested: [1, 'two'] };
  assert.deepStrictEqual(decodeReply(payloadOf(encodeStatusOk(9, status)), ClientOp.STATUS), {
    tag: 9,
    ok: true,
    op: ClientOp.STATUS,
    status,
  });
  for (const code of [
    'NOT_LEADER_YET',
    'NO_QUORUM',
    'TOO_LARGE',
    'BAD_FRAME',
    'LEADER_LOST',
    'NOT_FOUND',
  ] as const) {
    const payload = payloadOf(encodeErrorReply(11, code));
    assert.equal(replyTag(payload), 11);
    assert.deepStrictEqual(decodeReply(payload, ClientOp.WRITE), { tag: 11, ok: false, code });
    assert.equal(payload[4], ClientStatus[code]);
  }
});

test('malformed replies are DecodeErrors', () => {
  assert.throws(() => replyTag(Buffer.alloc(3)), DecodeError);
  assert.throws(() => decodeReply(Buffer.from([0, 0, 0, 1, 77]), ClientOp.WRITE), DecodeError);
  const ok = payloadOf(encodeWriteOk(1, { epoch: 1, counter: 1 }));
  assert.throws(() => decodeReply(ok.subarray(0, ok.length - 1), ClientOp.WRITE), DecodeError);
  assert.throws(() => decodeReply(Buffer.concat([ok, Buffer.alloc(1)]), ClientOp.WRITE), DecodeError);
  const st = payloadOf(encodeStatusOk(1, {}));
  assert.throws(() => decodeReply(Buffer.concat([st, Buffer.from('}')]), ClientOp.STATUS), DecodeError);
});
