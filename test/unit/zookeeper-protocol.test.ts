// ZooKeeper's client wire format as the harness writes and reads it (zookeeper.jute, 3.8), checked
// against bytes laid out by hand; and how its errors reach the load's retry logic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JuteReader } from '../../src/targets/zookeeper/client/jute.js';
import {
  decodeConnectResponse,
  decodeReplyBody,
  decodeReplyHeader,
  encodeConnectRequest,
  encodeRequest,
  errorName,
  zxidOf,
  zxidToLong,
} from '../../src/targets/zookeeper/client/zk-protocol.js';
import { ZkError } from '../../src/targets/zookeeper/client/zk-client.js';
import { slotOf } from '../../src/targets/slots.js';
import { asWriteFailure } from '../../src/targets/zookeeper/zk-write-client.js';
import { failureCode } from '../../src/load/write-client.js';

const int = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v);
  return b;
};
const long = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(v);
  return b;
};
const str = (s: string): Buffer => Buffer.concat([int(Buffer.byteLength(s)), Buffer.from(s)]);
const frame = (...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([int(body.length), body]);
};

test('ConnectRequest: protocol 0, last zxid, timeout, session 0, a 16-byte password, readOnly false', () => {
  const got = encodeConnectRequest({
    lastZxidSeen: 0x1_0000_0005n,
    timeoutMs: 10_000,
    sessionId: 0n,
    passwd: new Uint8Array(16),
  });
  assert.deepEqual(
    got,
    frame(int(0), long(0x1_0000_0005n), int(10_000), long(0n), int(16), Buffer.alloc(16), Buffer.from([0])),
  );
});

test('ConnectResponse: negotiated timeout and session; 0 means the server refused it', () => {
  const body = Buffer.concat([
    int(0),
    int(4000),
    long(0x1234n),
    int(16),
    Buffer.alloc(16, 7),
    Buffer.from([0]),
  ]);
  const r = decodeConnectResponse(body);
  assert.equal(r.timeoutMs, 4000);
  assert.equal(r.sessionId, 0x1234n);
  assert.deepEqual(r.passwd, Buffer.alloc(16, 7));
});

test('requests: header (xid, op), then the record', () => {
  const data = Buffer.from('hello');
  assert.deepEqual(
    encodeRequest(7, { op: 'setData', path: '/pb/east/s3', data, version: -1 }),
    frame(int(7), int(5), str('/pb/east/s3'), int(5), data, int(-1)),
  );
  // create: one ACL, world:anyone with every permission (31), then the mode's flags.
  assert.deepEqual(
    encodeRequest(8, { op: 'create', path: '/e-', data, mode: 'ephemeralSequential' }),
    frame(int(8), int(1), str('/e-'), int(5), data, int(1), int(31), str('world'), str('anyone'), int(3)),
  );
  assert.deepEqual(encodeRequest(9, { op: 'sync', path: '/pb' }), frame(int(9), int(9), str('/pb')));
  assert.deepEqual(
    encodeRequest(10, { op: 'getData', path: '/x', watch: true }),
    frame(int(10), int(4), str('/x'), Buffer.from([1])),
  );
  assert.deepEqual(encodeRequest(-2, { op: 'ping' }), frame(int(-2), int(11)));
  assert.deepEqual(encodeRequest(11, { op: 'closeSession' }), frame(int(11), int(-11)));
});

test('replies: header (xid, zxid, err), then a Stat of eleven fields', () => {
  const stat = Buffer.concat([
    long(0x1_0000_0001n), // czxid
    long(0x2_0000_0a87n), // mzxid
    long(1700000000000n), // ctime
    long(1700000000500n), // mtime
    int(12), // version
    int(0), // cversion
    int(0), // aversion
    long(0n), // ephemeralOwner
    int(1024), // dataLength
    int(0), // numChildren
    long(0x1_0000_0001n), // pzxid
  ]);
  const r = new JuteReader(Buffer.concat([int(42), long(0x2_0000_0a87n), int(0), stat]));
  const h = decodeReplyHeader(r);
  assert.deepEqual(h, { xid: 42, zxid: 0x2_0000_0a87n, err: 0 });
  const body = decodeReplyBody('setData', r);
  assert.equal(body.op, 'setData');
  if (body.op !== 'setData') return;
  assert.deepEqual(body.stat.mzxid, { epoch: 2, counter: 0xa87 });
  assert.equal(body.stat.version, 12);
  assert.equal(body.stat.dataLength, 1024);
  assert.equal(r.remaining, 0);
  const children = new JuteReader(Buffer.concat([int(2), str('e-0000000001'), str('e-0000000000')]));
  assert.deepEqual(decodeReplyBody('getChildren', children), {
    op: 'getChildren',
    children: ['e-0000000001', 'e-0000000000'],
  });
});

test('zxids: epoch in the high 32 bits, counter in the low, both ways, the top bit included', () => {
  assert.deepEqual(zxidOf(0x2_0000_0a87n), { epoch: 2, counter: 0xa87 });
  assert.equal(zxidToLong({ epoch: 2, counter: 0xa87 }), 0x2_0000_0a87n);
  // A long with the top bit set reads back as a negative bigint from jute; the zxid is unsigned.
  assert.deepEqual(zxidOf(-1n), { epoch: 0xffff_ffff, counter: 0xffff_ffff });
});

test('error codes by name; the retry logic sees connection trouble as DISCONNECTED or TIMEOUT', () => {
  assert.equal(errorName(-101), 'NONODE');
  assert.equal(errorName(-110), 'NODEEXISTS');
  assert.equal(errorName(-112), 'SESSIONEXPIRED');
  assert.equal(errorName(-999), 'ERROR-999');
  const code = (zk: string): string => failureCode(asWriteFailure(new ZkError(zk)));
  assert.equal(code('DISCONNECTED'), 'DISCONNECTED');
  assert.equal(code('CONNECTIONLOSS'), 'DISCONNECTED');
  assert.equal(code('SESSIONEXPIRED'), 'DISCONNECTED');
  assert.equal(code('CLOSED'), 'CLOSED');
  assert.equal(code('OPERATIONTIMEOUT'), 'TIMEOUT');
  assert.equal(code('TIMEOUT'), 'TIMEOUT');
  // Not retried: a missing slot is a harness bug or a lost znode, never "try again".
  assert.equal(code('NONODE'), 'ZK_NONODE');
  assert.equal(failureCode(new Error('ECONNREFUSED')), 'CONNECT');
});

test('a logical path maps to its slot by its last number', () => {
  assert.equal(slotOf('/pb/east/1234'), '/pb/east/s234');
  assert.equal(slotOf('/pb/floor/7'), '/pb/floor/s7');
  assert.throws(() => slotOf('/pb/east/x'), /not a load path/);
});
