import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PeerMessage } from '../../src/node/core/zab-messages.js';
import type { Txn } from '../../src/node/core/types.js';
import {
  DecodeError,
  PeerFrameReader,
  decodePeerMessage,
  encodePeerFrame,
  encodePeerMessage,
  encodeSnapshotFrames,
  snapshotOf,
} from '../../src/node/net/peer-codec.js';
import { DataTree } from '../../src/node/core/data-tree.js';
import { snapshotBytes, type StateSnapshot } from '../../src/node/core/state-snapshot.js';

function bytes(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

function txn(counter: number, size = 1024): Txn {
  return {
    zxid: { epoch: 3, counter },
    path: `/dc${counter % 3}/k${counter}`,
    data: bytes(size, counter),
    clientId: `agent-é-${counter % 5}`,
    requestId: 2 ** 52 + counter,
  };
}

const z = (epoch: number, counter: number) => ({ epoch, counter });

/** A state of `n` znodes of `size` bytes, applied up to (4, n). */
function state(n: number, size: number): StateSnapshot {
  const tree = new DataTree();
  for (let i = 1; i <= n; i++) {
    tree.apply({
      zxid: z(4, i),
      path: `/s/${i % 7}/k${i}`,
      data: bytes(size, i),
      clientId: `c${i % 3}`,
      requestId: i,
    });
  }
  return tree.freeze();
}

/** What a connection does: the snapshot's chunk frames, then the message, through one reader. */
function roundTrip(msg: PeerMessage, chunkBytes?: number): PeerMessage {
  const reader = new PeerFrameReader();
  const snap = snapshotOf(msg);
  if (snap)
    for (const f of encodeSnapshotFrames(snap, chunkBytes))
      assert.equal(reader.read(f.subarray(4)), undefined);
  const out = reader.read(encodePeerMessage(msg));
  assert.ok(out, `${msg.type} decoded`);
  return out;
}

/** A message made comparable: a snapshot as its zxid and bytes. */
function comparable(msg: PeerMessage): unknown {
  const snap = snapshotOf(msg);
  if (!snap || (msg.type !== 'SYNC' && msg.type !== 'FETCHED')) return msg;
  return { ...msg, plan: { ...msg.plan, snapshot: { zxid: snap.zxid, bytes: snapshotBytes(snap) } } };
}

// Keyed by type so the compiler insists on a sample of every message type.
const samples: { [T in PeerMessage['type']]: Array<Extract<PeerMessage, { type: T }>> } = {
  P: [
    { type: 'P', epoch: 4, proposal: { score: [1.5, -2, 0], id: 'p3', sid: 3 } },
    // JSON alone would turn these into null
    { type: 'P', epoch: 4, proposal: { score: [Infinity, -Infinity, NaN], id: 'p3', sid: 3 } },
  ],
  V: [{ type: 'V', epoch: 4, leader: 'p3' }],
  HEARTBEAT: [
    { type: 'HEARTBEAT', seq: 7, sentAt: 123456.789, rate: 333.25, score: [2, -9.88, 9.88] },
    { type: 'HEARTBEAT', seq: 2 ** 32 - 1, sentAt: 0, rate: 0, score: [] },
    {
      type: 'HEARTBEAT',
      seq: 8,
      sentAt: 5.5,
      rate: 0.5,
      score: [1, 3, 9],
      echo: { sentAt: 123456.789, heldMs: 42.125 },
    },
  ],
  FOLLOWERINFO: [{ type: 'FOLLOWERINFO', epoch: 5, acceptedEpoch: 4, lastZxid: z(4, 99), session: 3 }],
  LEADERINFO: [
    { type: 'LEADERINFO', epoch: 5, session: 3, established: false },
    { type: 'LEADERINFO', epoch: 5, session: 3, established: true },
  ],
  ACKEPOCH: [
    {
      type: 'ACKEPOCH',
      epoch: 5,
      currentEpoch: 4,
      lastZxid: z(4, 99),
      ranges: [
        { epoch: 3, first: 1, last: 50 },
        { epoch: 4, first: 1, last: 99 },
      ],
    },
  ],
  REJECT: [{ type: 'REJECT', epoch: 5, acceptedEpoch: 6, reason: 'newer epoch "accepted"' }],
  FETCH: [{ type: 'FETCH', epoch: 5, ranges: [], lastZxid: z(0, 0) }],
  FETCHED: [
    { type: 'FETCHED', epoch: 5, plan: { txns: [txn(1), txn(2)] } },
    { type: 'FETCHED', epoch: 5, plan: { truncateTo: z(4, 7), txns: [] } },
  ],
  SYNC: [
    {
      type: 'SYNC',
      epoch: 5,
      plan: { snapshot: state(90, 500), txns: [txn(91), txn(92)] },
    },
    {
      type: 'SYNC',
      epoch: 5,
      plan: { snapshot: new DataTree().freeze(), truncateTo: z(4, 90), txns: [] },
    },
    { type: 'SYNC', epoch: 5, plan: { txns: [] } },
  ],
  NEWLEADER: [{ type: 'NEWLEADER', epoch: 5, lastZxid: z(4, 99) }],
  ACKNEWLEADER: [{ type: 'ACKNEWLEADER', epoch: 5 }],
  UPTODATE: [{ type: 'UPTODATE', epoch: 5, commitZxid: z(5, 0) }],
  PROPOSAL: [
    { type: 'PROPOSAL', epoch: 5, commitZxid: z(4, 99), txns: [txn(1)] },
    {
      type: 'PROPOSAL',
      epoch: 5,
      commitZxid: z(5, 0),
      txns: Array.from({ length: 64 }, (_, i) => txn(i + 1)),
    },
    { type: 'PROPOSAL', epoch: 0xffff_ffff, commitZxid: z(0xffff_ffff, 0xffff_fffe), txns: [txn(7, 0)] },
  ],
  ACK: [{ type: 'ACK', epoch: 5, zxid: z(5, 0xffff_ffff) }],
  COMMIT: [{ type: 'COMMIT', epoch: 5, zxid: z(5, 12) }],
  REQUEST: [
    { type: 'REQUEST', epoch: 5, clientId: 'c1', requestId: 17, path: '/a', data: bytes(1024, 1) },
    { type: 'REQUEST', epoch: 5, clientId: '', requestId: 0, path: '', data: new Uint8Array(0) },
  ],
  PING: [{ type: 'PING', epoch: 5, commitZxid: z(5, 3) }],
  PONG: [{ type: 'PONG', epoch: 5 }],
};
const all: PeerMessage[] = Object.values(samples).flat();

test('every message type round-trips', () => {
  for (const msg of all) {
    assert.deepStrictEqual(comparable(roundTrip(msg)), comparable(msg), msg.type);
    if (!snapshotOf(msg)) assert.deepStrictEqual(decodePeerMessage(encodePeerMessage(msg)), msg, msg.type);
  }
});

test('a snapshot travels as chunk frames of about the chunk size, each a whole number of records', () => {
  const snap = state(2000, 1000);
  const frames = [...encodeSnapshotFrames(snap, 64 * 1024)];
  assert.ok(
    frames.length >= 25 && frames.length <= 40,
    `${frames.length} frames for ${snap.byteLength} bytes`,
  );
  for (const f of frames) assert.ok(f.length <= 64 * 1024 + 16, `a frame of ${f.length} bytes`);
  const msg: PeerMessage = { type: 'SYNC', epoch: 5, plan: { snapshot: snap, txns: [] } };
  const got = roundTrip(msg, 64 * 1024);
  assert.deepStrictEqual(comparable(got), comparable(msg));
  // The state received is the state sent, znode by znode.
  const back = DataTree.fromSnapshot(snapshotOf(got) as StateSnapshot);
  assert.equal(back.size, 2000);
  assert.deepEqual(back.get('/s/3/k1500'), DataTree.fromSnapshot(snap).get('/s/3/k1500'));
});

test('a snapshot message without its chunks, or with the wrong ones, is a DecodeError', () => {
  const msg: PeerMessage = { type: 'SYNC', epoch: 5, plan: { snapshot: state(10, 100), txns: [] } };
  assert.throws(() => decodePeerMessage(encodePeerMessage(msg)), DecodeError);
  assert.throws(() => new PeerFrameReader().read(encodePeerMessage(msg)), DecodeError);
  // Chunks of another state (other size) before it.
  const reader = new PeerFrameReader();
  for (const f of encodeSnapshotFrames(state(11, 100))) reader.read(f.subarray(4));
  assert.throws(() => reader.read(encodePeerMessage(msg)), DecodeError);
  // Chunks cut short: the state is incomplete.
  const cut = new PeerFrameReader();
  const frames = [...encodeSnapshotFrames(state(10, 100), 300)];
  for (const f of frames.slice(0, -1)) cut.read(f.subarray(4));
  assert.throws(() => cut.read(encodePeerMessage(msg)), DecodeError);
});

test('encodePeerFrame is the payload behind a u32 BE length', () => {
  for (const msg of all) {
    const payload = encodePeerMessage(msg);
    const framed = encodePeerFrame(msg);
    assert.equal(framed.readUInt32BE(0), payload.length);
    assert.deepEqual(framed.subarray(4), payload);
  }
});

test('binary data travels raw: a 64 x 1 kB proposal costs little more than its data', () => {
  const msg = samples.PROPOSAL[1] as PeerMessage;
  const size = encodePeerMessage(msg).length;
  const data = 64 * 1024;
  assert.ok(size < data + 64 * 48, `${size} bytes for ${data} bytes of data`);
  const sync = samples.SYNC[0] as PeerMessage;
  const snap = [...encodeSnapshotFrames(snapshotOf(sync) as StateSnapshot)].reduce((n, f) => n + f.length, 0);
  // 90 znodes of 500 bytes with a ~16-byte path, plus 90 dedup entries: records of 20 + 12 bytes.
  assert.ok(snap < 90 * (500 + 20 + 16 + 12 + 8) + 64, `snapshot chunks of ${snap} bytes`);
});

test('the generic form lifts every Uint8Array out as a raw blob, wherever it is', () => {
  // A message type the codec has no binary layout for (a future one): it must still round-trip.
  const future = {
    type: 'FUTURE_THING',
    epoch: 1,
    blobs: [bytes(2048, 1), { inner: bytes(10, 2), n: null, s: 'x' }],
    top: bytes(3, 3),
  } as unknown as PeerMessage;
  const enc = encodePeerMessage(future);
  assert.ok(enc.length < 2048 + 10 + 3 + 200, `${enc.length} bytes`);
  assert.deepStrictEqual(decodePeerMessage(enc), future);
});

test('decoded bytes are plain Uint8Array views of the frame', () => {
  const enc = encodePeerMessage(samples.REQUEST[0] as PeerMessage);
  const msg = decodePeerMessage(enc);
  assert.equal(msg.type, 'REQUEST');
  if (msg.type !== 'REQUEST') return;
  assert.equal(Object.getPrototypeOf(msg.data), Uint8Array.prototype);
  assert.equal(msg.data.buffer, enc.buffer);
});

test('every truncation and any trailing byte is a DecodeError', () => {
  for (const msg of [
    samples.PROPOSAL[0],
    samples.FETCHED[0],
    samples.ACKEPOCH[0],
    samples.PONG[0],
  ] as PeerMessage[]) {
    const enc = encodePeerMessage(msg);
    for (let n = 0; n < enc.length; n += n < 64 ? 1 : 97) {
      assert.throws(() => decodePeerMessage(enc.subarray(0, n)), DecodeError, `${msg.type} cut at ${n}`);
    }
    assert.throws(() => decodePeerMessage(Buffer.concat([enc, Buffer.from([0])])), DecodeError);
  }
});

test('unknown kinds, absurd counts and bad JSON are DecodeErrors', () => {
  assert.throws(() => decodePeerMessage(Buffer.from([200, 0, 0])), DecodeError);
  // PROPOSAL claiming 2^32-1 txns in a 9-byte frame
  assert.throws(() => decodePeerMessage(Buffer.from([1, 0, 0, 0, 5, 255, 255, 255, 255])), DecodeError);
  const badJson = Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 3]), Buffer.from('{x}')]);
  assert.throws(() => decodePeerMessage(badJson), DecodeError);
  const proto = Buffer.from('{"type":"V","__proto__":{"leader":"x"}}');
  const head = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0]);
  head.writeUInt32BE(proto.length, 5);
  assert.throws(() => decodePeerMessage(Buffer.concat([head, proto])), DecodeError);
});

test('values that do not fit the binary layout are refused at encode time, not corrupted', () => {
  assert.throws(() => encodePeerMessage({ type: 'ACK', epoch: -1, zxid: z(1, 1) }), RangeError);
  assert.throws(() => encodePeerMessage({ type: 'COMMIT', epoch: 1, zxid: z(1, 2 ** 32) }), RangeError);
});
