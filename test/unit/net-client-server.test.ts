import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { WriteErrorCode } from '../../src/node/core/core-types.js';
import { ClientApiServer } from '../../src/node/net/client-server.js';
import type { ClientApiHandler, ClientWrite, WriteOutcome } from '../../src/node/net/client-server.js';
import { PoleClient, PoleError } from '../../src/node/net/client.js';
import { ClientOp, ClientStatus, encodeRequest } from '../../src/node/net/client-protocol.js';
import type { ReadResult } from '../../src/node/net/client-protocol.js';
import { FrameDecoder } from '../../src/util/wire/frame-decoder.js';

const HOST = '127.0.0.1';
const MAX_WRITE = 4096;

/**
 * A trivial handler: a write's zxid counter is its requestId; paths steer the behaviour:
 * /err/CODE fails with CODE, /hold/* parks the reply until released, anything else commits
 * on the next loop turn and becomes readable.
 */
class Handler implements ClientApiHandler {
  readonly store = new Map<string, ReadResult>();
  readonly held: Array<{ req: ClientWrite; reply: (o: WriteOutcome) => void }> = [];
  writes = 0;

  write(req: ClientWrite, reply: (o: WriteOutcome) => void): void {
    this.writes++;
    if (req.path.startsWith('/err/')) {
      const code = req.path.slice(5) as WriteErrorCode;
      setImmediate(() => reply({ ok: false, code }));
    } else if (req.path.startsWith('/hold/')) {
      this.held.push({ req, reply });
    } else {
      const zxid = { epoch: 1, counter: req.requestId };
      const data = new Uint8Array(req.data); // the request's bytes are a view: keep a copy
      setImmediate(() => {
        const prev = this.store.get(req.path);
        this.store.set(req.path, { zxid, version: (prev?.version ?? 0) + 1, data });
        reply({ ok: true, zxid });
      });
    }
  }

  read(path: string): ReadResult | undefined {
    return this.store.get(path);
  }

  status(): unknown {
    return { role: 'leader', writes: this.writes };
  }
}

async function withServer(
  fn: (port: number, h: Handler, server: ClientApiServer) => Promise<void>,
): Promise<void> {
  const h = new Handler();
  const server = new ClientApiServer({ host: HOST, port: 0, handler: h, maxWriteBytes: MAX_WRITE });
  await server.start();
  try {
    await fn(server.port, h, server);
  } finally {
    await server.close();
  }
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof PoleError && e.code === code);
}

/**
 * Sends raw bytes on a fresh connection (optionally ending our side), collects the reply frames
 * as [tag, status] until the server closes the connection.
 */
async function raw(port: number, bytes: Buffer, end: boolean): Promise<Array<[number, number]>> {
  const s = connect(port, HOST);
  const d = new FrameDecoder(1 << 20);
  const replies: Array<[number, number]> = [];
  s.on('data', (c: Buffer) => d.push(c, (f) => replies.push([f.readUInt32BE(0), f[4] as number])));
  s.on('error', () => undefined);
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not close the connection')), 3000);
    s.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  s.write(bytes);
  if (end) s.end();
  await closed;
  return replies;
}

/** A seeded generator so that "random" input is the same on every run. */
function randomBytes(seed: number, n: number): Buffer {
  let x = seed >>> 0 || 1;
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

const enc = new TextEncoder();
const ids = (requestId: number) => ({ clientId: 'c1', requestId });

test('write, read, status and error codes', async () => {
  await withServer(async (port) => {
    const c = await PoleClient.connect(HOST, port);
    try {
      assert.deepEqual(await c.write('/a', enc.encode('hello'), ids(10)), {
        zxid: { epoch: 1, counter: 10 },
      });
      const r = await c.read('/a');
      assert.deepEqual(r && { ...r, data: Buffer.from(r.data).toString() }, {
        zxid: { epoch: 1, counter: 10 },
        version: 1,
        data: 'hello',
      });
      assert.equal(await c.read('/missing'), undefined);
      assert.deepEqual(await c.status(), { role: 'leader', writes: 1 });
      for (const code of ['NOT_LEADER_YET', 'NO_QUORUM', 'LEADER_LOST'] as const) {
        await rejectsWith(c.write(`/err/${code}`, new Uint8Array(1), ids(1)), code);
      }
      await assert.rejects(c.write('/a', new Uint8Array(1), ids(0.5)), TypeError);
    } finally {
      await c.close();
    }
  });
});

test('replies that come back out of order reach the right request', async () => {
  await withServer(async (port, h) => {
    const c = await PoleClient.connect(HOST, port);
    try {
      const writes = Array.from({ length: 100 }, (_, i) => c.write(`/hold/${i}`, new Uint8Array(8), ids(i)));
      await waitFor('all held', () => h.held.length === 100);
      for (const { req, reply } of [...h.held].reverse())
        reply({ ok: true, zxid: { epoch: 2, counter: req.requestId } });
      const results = await Promise.all(writes);
      assert.deepEqual(
        results.map((r) => r.zxid.counter),
        Array.from({ length: 100 }, (_, i) => i),
      );
    } finally {
      await c.close();
    }
  });
});

test('10,000 pipelined writes are all answered', async () => {
  await withServer(async (port, h) => {
    const c = await PoleClient.connect(HOST, port);
    try {
      const data = new Uint8Array(1024).fill(1);
      const writes = Array.from({ length: 10_000 }, (_, i) => c.write(`/k${i % 100}`, data, ids(i + 1)));
      assert.ok(c.inFlight > 1000, 'requests are pipelined, not sent one by one');
      const results = await Promise.all(writes);
      assert.ok(results.every((r, i) => r.zxid.counter === i + 1));
      assert.equal(h.writes, 10_000);
      assert.equal(c.inFlight, 0);
    } finally {
      await c.close();
    }
  });
});

test('bad input gets BAD_FRAME and closes that connection only', async () => {
  await withServer(async (port, _h, server) => {
    const good = await PoleClient.connect(HOST, port);
    let n = 0;
    const goodWrite = async () => {
      n++;
      assert.equal((await good.write('/good', new Uint8Array(4), ids(n))).zxid.counter, n);
    };
    try {
      await goodWrite();
      const BAD = ClientStatus.BAD_FRAME;

      // A "length" far beyond maxFrameBytes: rejected at once, tag unknown.
      assert.deepEqual(await raw(port, Buffer.from('GET / HTTP/1.1\r\n\r\n'), false), [[0, BAD]]);
      await goodWrite();

      // An oversize frame that claims a plausible but too large length.
      const oversize = Buffer.alloc(8);
      oversize.writeUInt32BE(MAX_WRITE + 1024 * 1024 + 1);
      assert.deepEqual(await raw(port, oversize, false), [[0, BAD]]);

      // Unknown op: the tag is readable, so it is echoed.
      const unknownOp = Buffer.from([0, 0, 0, 5, 9, 0, 0, 0, 77]);
      assert.deepEqual(await raw(port, unknownOp, false), [[77, BAD]]);

      // Malformed body (a path length beyond the frame), after a good request on the same connection.
      const okRead = encodeRequest({ op: ClientOp.READ, tag: 1, path: '/missing' });
      const badBody = encodeRequest({ op: ClientOp.READ, tag: 2, path: '/x' });
      badBody.writeUInt32BE(1000, 9);
      assert.deepEqual(await raw(port, Buffer.concat([okRead, badBody, okRead]), false), [
        [1, ClientStatus.NOT_FOUND],
        [2, BAD],
      ]);
      await goodWrite();

      // A truncated frame and then the client ends its side.
      const write = encodeRequest({
        op: ClientOp.WRITE,
        tag: 3,
        clientId: 'c',
        requestId: 1,
        path: '/t',
        data: new Uint8Array(100),
      });
      assert.deepEqual(await raw(port, write.subarray(0, 50), true), [[0, BAD]]);
      assert.deepEqual(await raw(port, write.subarray(0, 2), true), [[0, BAD]]);

      // Seeded random garbage, then end: whatever it parses as, it ends in one BAD_FRAME and a close.
      for (let seed = 1; seed <= 20; seed++) {
        const replies = await raw(port, randomBytes(seed, 1 + seed * 37), true);
        assert.equal(replies.at(-1)?.[1], BAD, `seed ${seed}`);
        assert.equal(replies.filter(([, s]) => s === BAD).length, 1);
      }
      // The same garbage with a small first "length" byte pattern: the frame is never completed.
      const small = Buffer.concat([Buffer.from([0, 0, 1, 0]), randomBytes(99, 40)]);
      assert.deepEqual(await raw(port, small, true), [[0, BAD]]);

      await goodWrite();
      assert.equal(good.connected, true);
      await waitFor('bad connections gone', () => server.stats().connections === 1);
      assert.equal(server.stats().badFrames, 27);
    } finally {
      await good.close();
    }
  });
});

test('TOO_LARGE fails that write only; the connection stays usable', async () => {
  await withServer(async (port) => {
    const c = await PoleClient.connect(HOST, port);
    try {
      const [big, after] = await Promise.allSettled([
        c.write('/big', new Uint8Array(MAX_WRITE + 1), ids(1)),
        c.write('/small', new Uint8Array(MAX_WRITE), ids(2)),
      ]);
      assert.ok(
        big.status === 'rejected' && big.reason instanceof PoleError && big.reason.code === 'TOO_LARGE',
      );
      assert.ok(after.status === 'fulfilled' && after.value.zxid.counter === 2);
      assert.equal((await c.write('/small', new Uint8Array(1), ids(3))).zxid.counter, 3);
    } finally {
      await c.close();
    }
  });
});

test('a client that ends its side still gets every reply, then the server closes', async () => {
  await withServer(async (port) => {
    const frames = [1, 2, 3].map((tag) =>
      encodeRequest({
        op: ClientOp.WRITE,
        tag,
        clientId: 'c',
        requestId: tag,
        path: '/x',
        data: new Uint8Array(3),
      }),
    );
    const replies = await raw(port, Buffer.concat(frames), true);
    assert.deepEqual(replies, [
      [1, ClientStatus.OK],
      [2, ClientStatus.OK],
      [3, ClientStatus.OK],
    ]);
  });
});

test('request timeout, and a reply after the connection closed is dropped silently', async () => {
  await withServer(async (port, h, server) => {
    const c = await PoleClient.connect(HOST, port, { requestTimeoutMs: 50 });
    await rejectsWith(c.write('/hold/1', new Uint8Array(1), ids(1)), 'TIMEOUT');
    // The late reply is ignored and the client still works.
    h.held[0]?.reply({ ok: true, zxid: { epoch: 1, counter: 1 } });
    assert.equal((await c.write('/ok', new Uint8Array(1), ids(2))).zxid.counter, 2);

    const pending = rejectsWith(c.write('/hold/2', new Uint8Array(1), ids(3)), 'CLOSED');
    await waitFor('held', () => h.held.length === 2);
    await c.close();
    await pending;
    await rejectsWith(c.read('/ok'), 'CLOSED');
    // The server keeps a half-closed connection until its last pending reply is out (a client may
    // end its side and wait for replies); the reply to a client that has gone entirely is dropped.
    h.held[1]?.reply({ ok: true, zxid: { epoch: 1, counter: 3 } });
    await waitFor('server saw the close', () => server.stats().connections === 0);
    h.held[1]?.reply({ ok: true, zxid: { epoch: 1, counter: 3 } }); // again, on a closed connection
  });
});

test('connection loss rejects every pending request with DISCONNECTED', async () => {
  const h = new Handler();
  const server = new ClientApiServer({ host: HOST, port: 0, handler: h });
  await server.start();
  const lost: PoleError[] = [];
  const c = await PoleClient.connect(HOST, server.port, { onDisconnect: (e) => lost.push(e) });
  const pending = Array.from({ length: 10 }, (_, i) =>
    rejectsWith(c.write(`/hold/${i}`, new Uint8Array(1), ids(i)), 'DISCONNECTED'),
  );
  await waitFor('held', () => h.held.length === 10);
  await server.close();
  await Promise.all(pending);
  await rejectsWith(c.status(), 'DISCONNECTED');
  assert.equal(lost.length, 1);
  assert.equal(c.connected, false);
  await c.close();

  // Nothing listens there any more.
  await rejectsWith(PoleClient.connect(HOST, server.port), 'DISCONNECTED');
});
