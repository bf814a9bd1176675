// The userspace delay relay end to end on loopback: bytes intact and in order under heavy jitter,
// the RTT through a 20 ms route, half-close and reset propagation, and a clean close().
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { DelayRelay, type RelayRoute } from '../../src/shaping/relay/delay-relay.js';
import type { LinkDelay } from '../../src/shaping/relay/delay-distribution.js';
import type { RelayStats } from '../../src/shaping/relay/relay-protocol.js';
import { startEchoServer } from '../../src/shaping/relay/echo-server.js';
import { measureRtt } from '../../src/shaping/relay/rtt-probe.js';
import { parseProcStat, statTicks } from '../../src/measure/cpu-sampler.js';

/** Starts a window on /proc/stat; the function returned gives the machine's % busy since. */
function machineBusy(): () => string {
  const read = (): { busy: number; total: number } | undefined => {
    const st = parseProcStat(readFileSync('/proc/stat', 'utf8'));
    return st ? statTicks(st) : undefined;
  };
  const from = read();
  return () => {
    const to = read();
    if (!from || !to || to.total === from.total) return '?';
    return ((100 * (to.busy - from.busy)) / (to.total - from.total)).toFixed(0);
  };
}

const HOST = '127.0.0.1';
const fixed = (delayMs: number): LinkDelay => ({ delayMs, jitterMs: 0, distribution: 'pareto' });

function route(name: string, port: number, forward: LinkDelay, backward = forward): RelayRoute {
  return { name, target: { host: HOST, port }, forward, backward };
}

// Whatever a failed test leaves open is destroyed after it, so one failure cannot hang the file.
// Socket errors are expected in the reset tests and harmless when closing; a lost or reset
// connection anywhere else shows up as missing bytes or events, which the tests check.
const leftovers = new Set<Socket | Server>();
const ignoreError = () => undefined;
afterEach(() => {
  for (const x of leftovers) {
    if ('destroy' in x) x.destroy();
    else x.close();
  }
  leftovers.clear();
});

async function listen(server: Server): Promise<number> {
  leftovers.add(server);
  server.on('connection', (s: Socket) => {
    leftovers.add(s);
    s.on('error', ignoreError);
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return (server.address() as AddressInfo).port;
}

function open(port: number, allowHalfOpen = false): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: HOST, port, allowHalfOpen });
    leftovers.add(s);
    s.on('error', ignoreError);
    s.once('error', reject);
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
  });
}

/** Resolves with the first of `events` the emitter gives, or rejects after `ms`. */
function nextEvent(
  emitter: NodeJS.EventEmitter,
  events: string[],
  ms = 3000,
): Promise<{ event: string; args: unknown[] }> {
  return new Promise((resolve, reject) => {
    const handlers = events.map((event) => {
      const h = (...args: unknown[]) => {
        done();
        resolve({ event, args });
      };
      emitter.on(event, h);
      return [event, h] as const;
    });
    const timer = setTimeout(() => {
      done();
      reject(new Error(`none of ${events.join('/')} within ${ms} ms`));
    }, ms);
    function done(): void {
      clearTimeout(timer);
      for (const [e, h] of handlers) emitter.off(e, h);
    }
  });
}

/** Until the first route holds one byte in `way` (a cut's), bounded like until(). */
async function heldIn(relay: DelayRelay, way: 'forward' | 'backward', what: string): Promise<void> {
  const deadline = performance.now() + 3000;
  while ((await relay.stats()).routes[0]![way].queuedBytes !== 1) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function until(cond: () => boolean, what: string | (() => string), ms = 3000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What one socket received until it closed: the bytes, when they came, and how it ended. */
interface Received {
  readonly bytes: Buffer;
  /** performance.now() of the first and the last 'data'; NaN when none came. */
  readonly firstAt: number;
  readonly lastAt: number;
  /** The code of the error it closed with, '' for none. */
  readonly errorCode: string;
  readonly ended: boolean;
  readonly closedAt: number;
  /** Whether any 'data' came after the end or the error. */
  readonly dataAfterEnd: boolean;
}

/**
 * Collects what `s` (opened with allowHalfOpen) receives until it closes. On an end it answers
 * with a byte and its own end: a peer that only half-closed takes them, a connection that was
 * reset fails the write. That write is what tells a reset from a clean end here, because libuv
 * reports a reset that arrives together with the last bytes as an EOF (a short read with POLLHUP
 * set is taken for the end; the kernel still holds ECONNRESET for the next call).
 */
function receiveUntilClosed(s: Socket, ms = 3000): Promise<Received> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let firstAt = NaN;
    let lastAt = NaN;
    let errorCode = '';
    let ended = false;
    let dataAfterEnd = false;
    s.on('data', (b: Buffer) => {
      if (ended || errorCode !== '') dataAfterEnd = true;
      const t = performance.now();
      if (chunks.length === 0) firstAt = t;
      lastAt = t;
      chunks.push(b);
    });
    s.on('end', () => {
      ended = true;
      s.end('?');
    });
    s.on('error', (err: NodeJS.ErrnoException) => (errorCode ||= err.code ?? String(err)));
    const timer = setTimeout(
      () => reject(new Error(`not closed within ${ms} ms (${Buffer.concat(chunks).length} bytes so far)`)),
      ms,
    );
    s.once('close', () => {
      clearTimeout(timer);
      resolve({
        bytes: Buffer.concat(chunks),
        firstAt,
        lastAt,
        errorCode,
        ended,
        closedAt: performance.now(),
        dataAfterEnd,
      });
    });
  });
}

/**
 * Writes `payload` to `s` in `pieces` writes, each once the relay has read the one before (`read`:
 * the bytes it has read in that direction), so that it holds at least `pieces` chunks, not one
 * read of everything; then resets `s` once the relay has read the last. Waiting matters there
 * too: a reset that reached the relay together with the last bytes would look like a clean end
 * to it (libuv, see receiveUntilClosed), and that is not the case under test. Returns
 * performance.now() before the first write.
 */
async function writeThenReset(
  s: Socket,
  payload: Buffer,
  pieces: number,
  read: () => Promise<number>,
): Promise<number> {
  s.setNoDelay(true);
  const t0 = performance.now();
  const deadline = t0 + 2000;
  const step = Math.ceil(payload.length / pieces);
  for (let off = 0; off < payload.length; off += step) {
    const upTo = Math.min(off + step, payload.length);
    s.write(payload.subarray(off, upTo));
    for (let n = await read(); n < upTo; n = await read()) {
      if (performance.now() > deadline) throw new Error(`the relay read ${n} of ${upTo} bytes`);
    }
  }
  s.resetAndDestroy();
  return t0;
}

/** Waits until the relay's every route has let go of its connections. */
async function untilNoConnections(relay: DelayRelay, ms = 3000): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    const active = (await relay.stats()).routes.reduce((n, r) => n + r.activeConnections, 0);
    if (active === 0) return;
    if (performance.now() > deadline) throw new Error(`${active} relayed connections still open`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('delay relay', () => {
  it('delivers a big random payload intact and in order both ways under heavy jitter', async () => {
    const echo = await startEchoServer();
    // Jitter as large as the delay: without the no-reorder rule chunks would overtake each other.
    const jittery: LinkDelay = { delayMs: 2, jitterMs: 2, distribution: 'paretonormal' };
    const relay = await DelayRelay.start({ seed: 11, routes: [route('j', echo.port, jittery)] });
    try {
      const payload = randomBytes(6 * 1024 * 1024);
      const client = await open(relay.port('j'));
      const got: Buffer[] = [];
      let gotBytes = 0;
      client.on('data', (b: Buffer) => {
        got.push(b);
        gotBytes += b.length;
      });
      // Writes of odd, varying sizes so chunk boundaries do not line up with anything.
      let off = 0;
      let size = 1;
      while (off < payload.length) {
        const n = Math.min(size, payload.length - off);
        if (!client.write(payload.subarray(off, off + n))) await nextEvent(client, ['drain']);
        off += n;
        size = (size * 7 + 13) % 100_003;
      }
      await until(() => gotBytes >= payload.length, 'the whole payload back', 8000);
      const back = Buffer.concat(got);
      assert.equal(back.length, payload.length);
      assert.equal(
        createHash('sha256').update(back).digest('hex'),
        createHash('sha256').update(payload).digest('hex'),
      );
      const s = (await relay.stats()).routes[0]!;
      assert.equal(s.connections, 1);
      assert.equal(s.forward.bytes, payload.length);
      assert.equal(s.backward.bytes, payload.length);
      assert.ok(s.forward.chunks > 10, `forward chunks ${s.forward.chunks}`);
      client.destroy();
    } finally {
      await relay.close();
      await echo.close();
    }
  });

  it('adds the configured RTT through a 20 ms route (median within max(0.5 ms, 3 %))', async (t) => {
    // The echo on its own thread, so that the direct probe pays the same wake-ups as the relayed one.
    const echo = await startEchoServer({ inWorker: true });
    const relay = await DelayRelay.start({
      seed: 1,
      routes: [route('r20', echo.port, fixed(10)), route('r0', echo.port, fixed(0))],
    });
    try {
      // What the relay adds is measured against the same relay at zero delay: a relayed round trip
      // has two more loopback hops and two more thread wake-ups than a direct one, which the host
      // sets (0.6-0.7 ms on the 2-core VM when idle, ~1 ms while a Docker daemon and other tests
      // ran), not the relay's delay line. That pass-through is bounded and printed apart. Other
      // test files may keep both cores busy: the relay must show it hits the bar, not that the
      // host is never busy. Up to five tries, two seconds apart, so that a burst of the host's own
      // (a CI run saw three tries in a row 0.8-0.95 ms over, right after a test that wrote and
      // removed 50 MB logs; alone the same build is 0.03-0.43 over) is not taken for the relay's;
      // each try says how busy the machine was while it ran.
      const tries: string[] = [];
      let within = false;
      for (let attempt = 0; attempt < 5 && !within; attempt++) {
        if (attempt > 0) await sleep(2000);
        const busy = machineBusy();
        const direct = await measureRtt({ host: HOST, port: echo.port, samples: 20, intervalMs: 10 });
        const bare = await measureRtt({ host: HOST, port: relay.port('r0'), samples: 20, intervalMs: 10 });
        const r = await measureRtt({ host: HOST, port: relay.port('r20'), samples: 40, intervalMs: 5 });
        assert.equal(r.samples.length, 40);
        // Never early by more than the arrival-time correction could take off.
        assert.ok(r.minMs >= 19.8, `min ${r.minMs} ms`);
        const passThrough = bare.p50Ms - direct.p50Ms;
        assert.ok(passThrough < 2, `the relay at zero delay costs ${passThrough.toFixed(3)} ms over direct`);
        within = Math.abs(r.p50Ms - bare.p50Ms - 20) <= 0.6;
        tries.push(
          `p50 ${r.p50Ms.toFixed(3)} ms, at zero delay ${bare.p50Ms.toFixed(3)} ms, direct ${direct.p50Ms.toFixed(3)} ms, machine ${busy()} % busy`,
        );
      }
      t.diagnostic(tries.join('; '));
      assert.ok(within, `outside the bar on every try: ${tries.join('; ')}`);
      const st = await relay.stats();
      assert.ok(st.worker.wakes > 0);
      assert.ok(st.routes[0]!.forward.latenessMeanMs < 1, `lateness ${st.routes[0]!.forward.latenessMeanMs}`);
    } finally {
      await relay.close();
      await echo.close();
    }
  });

  it('the clock wakes twice per chunk crossing alone: once armed, once due; a release that empties the queues wakes it no more', async (t) => {
    const echo = await startEchoServer({ inWorker: true });
    const relay = await DelayRelay.start({ seed: 1, routes: [route('r', echo.port, fixed(5))] });
    const socket = await open(relay.port('r'));
    try {
      const roundTrip = async (): Promise<void> => {
        socket.write('x');
        await nextEvent(socket, ['data']);
      };
      await roundTrip();
      const before = await relay.stats();
      const trips = 20;
      for (let i = 0; i < trips; i++) await roundTrip();
      const after = await relay.stats();
      const clock = after.worker.clockWakes - before.worker.clockWakes;
      const ticks = after.worker.wakes - before.worker.wakes;
      t.diagnostic(`${trips} round trips: ${clock} clock wake-ups, ${ticks} ticks`);
      // Each chunk is alone in the relay: its arrival arms the clock (a wake-up), the clock sleeps
      // until it is due (the second) and ticks. When the relay woke the clock again on disarming,
      // it was 6 per round trip. A wake-up early enough to need arming again may add a few.
      assert.ok(ticks >= 2 * trips, `${ticks} ticks`);
      assert.ok(clock <= 4.5 * trips, `${clock} clock wake-ups for ${trips} round trips`);
    } finally {
      socket.destroy();
      await relay.close();
      await echo.close();
    }
  });

  it('the clock wakes about once per release of a stream of chunks: it sleeps toward the next one unasked', async (t) => {
    const echo = await startEchoServer({ inWorker: true });
    const relay = await DelayRelay.start({ seed: 1, routes: [route('r', echo.port, fixed(50))] });
    const socket = await open(relay.port('r'));
    socket.setNoDelay(true);
    try {
      socket.write('x');
      await nextEvent(socket, ['data']);
      const before = await relay.stats();
      // 20 chunks 2 ms apart: each is released while the next ones wait in the relay. The route's
      // 50 ms hold the whole stream each way even when a busy machine (a CI run) sends it late or
      // in clumps; on a 10 ms route the stream broke up there into chunks crossing alone, two
      // wake-ups each (53 for 40 chunks in one CI run).
      const sent = 20;
      let received = 0;
      const all = new Promise<void>((resolve) =>
        socket.on('data', (b: Buffer) => {
          received += b.length;
          if (received === sent) resolve();
        }),
      );
      for (let i = 0; i < sent; i++) {
        socket.write('y');
        await new Promise((r) => setTimeout(r, 2));
      }
      await all;
      const after = await relay.stats();
      const chunks = (r: RelayStats): number => r.routes[0]!.forward.chunks + r.routes[0]!.backward.chunks;
      const released = chunks(after) - chunks(before);
      const clock = after.worker.clockWakes - before.worker.clockWakes;
      t.diagnostic(
        `${released} chunks released, ${clock} clock wake-ups, ${after.worker.wakes - before.worker.wakes} ticks`,
      );
      // Armed again after each tick (41e6799), the clock woke 74-76 times for 40 releases here (the
      // re-arming, then the due time); sleeping toward the next release published with the arming,
      // 37-42, on a quiet machine and with both cores kept busy alike.
      assert.ok(clock <= 1.3 * released, `${clock} clock wake-ups for ${released} chunks`);
    } finally {
      socket.destroy();
      await relay.close();
      await echo.close();
    }
  });

  it('change() sets a route to no delay and back, on a connection that stays open', async () => {
    const echo = await startEchoServer({ inWorker: true });
    const relay = await DelayRelay.start({ seed: 1, routes: [route('r', echo.port, fixed(15))] });
    const socket = await open(relay.port('r'));
    const roundTrip = async (): Promise<number> => {
      const t0 = performance.now();
      socket.write('x');
      await nextEvent(socket, ['data']);
      return performance.now() - t0;
    };
    try {
      const median = async (): Promise<number> => {
        const xs: number[] = [];
        for (let i = 0; i < 15; i++) xs.push(await roundTrip());
        return xs.sort((a, b) => a - b)[7]!;
      };
      const shaped = await median();
      assert.ok(shaped >= 29.8 && shaped < 40, `shaped RTT ${shaped} ms (configured 30)`);
      const zero = { delayMs: 0, jitterMs: 0, distribution: 'pareto' as const };
      await relay.change([{ name: 'r', forward: zero, backward: zero }]);
      const bare = await median();
      assert.ok(bare < 5, `RTT with no delay ${bare} ms`);
      await relay.change([{ name: 'r', forward: fixed(15), backward: fixed(15) }]);
      const again = await median();
      assert.ok(again >= 29.8 && again < 40, `RTT after restoring ${again} ms`);
      await assert.rejects(
        relay.change([{ name: 'nope', forward: zero, backward: zero }]),
        /no relay route 'nope'/,
      );
    } finally {
      socket.destroy();
      await relay.close();
      await echo.close();
    }
  });

  it('pauses a sender whose target does not read, holding at most ~4 MB, and resumes it', async () => {
    let serverSide: Socket | undefined;
    let received = 0;
    const server = createServer((s) => {
      serverSide = s;
      s.pause(); // reads nothing until told
      s.on('data', (b: Buffer) => (received += b.length));
    });
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 1, routes: [route('bp', port, fixed(1))] });
    try {
      const client = await open(relay.port('bp'));
      const total = 48 * 1024 * 1024;
      const block = Buffer.alloc(256 * 1024, 7);
      for (let sent = 0; sent < total; sent += block.length) client.write(block);
      const stats = async () => (await relay.stats()).routes[0]!.forward;
      let fwd = await stats();
      const deadline = performance.now() + 5000;
      while (fwd.pauses === 0 && performance.now() < deadline) fwd = await stats();
      assert.ok(fwd.pauses >= 1, 'the relay never paused the sender');
      // The kernel buffers fill, then the relay's own queue stops growing below the high-water mark.
      assert.ok(fwd.queuedBytes <= 4 * 1024 * 1024 + block.length, `queued ${fwd.queuedBytes}`);
      assert.ok(fwd.bytes < total, 'everything went through although nothing was read');
      await until(() => serverSide !== undefined, 'the server to accept');
      serverSide!.resume();
      await until(
        () => received === total,
        () => `all ${total} bytes to arrive (have ${received})`,
        8000,
      );
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('propagates a half-close each way after the bytes queued before it', async () => {
    const events: string[] = [];
    let serverSide: Socket | undefined;
    // The server greets, half-closes its side at once, and answers the client's end with "bye".
    const server = createServer({ allowHalfOpen: true }, (s) => {
      serverSide = s;
      s.end('hi');
      let text = '';
      s.on('data', (b: Buffer) => (text += b.toString()));
      s.on('end', () => events.push(`server got ${text} then end`));
    });
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 1, routes: [route('h', port, fixed(15))] });
    try {
      const client = await open(relay.port('h'), true);
      let got = '';
      client.on('data', (b: Buffer) => (got += b.toString()));
      await nextEvent(client, ['end']);
      assert.equal(got, 'hi');
      // The server's side is closed for writing, the client's is not: it can still send.
      client.end('after your end');
      await until(() => events.length === 1, "the server to see the client's end");
      assert.deepEqual(events, ['server got after your end then end']);
      await until(() => client.destroyed && serverSide?.destroyed === true, 'both sockets to close');
      const st = (await relay.stats()).routes[0]!;
      assert.equal(st.resets, 0);
      assert.equal(st.activeConnections, 0);
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('carries a reset to the other side one delay later, as a network carries a RST', async () => {
    const accepted: Socket[] = [];
    const server = createServer((s) => accepted.push(s));
    const port = await listen(server);
    const slow = fixed(150);
    const relay = await DelayRelay.start({ seed: 1, routes: [route('x', port, slow)] });
    // Not before the delay (less what the relay takes off a read for its wake-up), nor long after.
    const oneDelay = (ms: number): boolean => ms >= 150 - EARLY_MS && ms < 150 + 100;
    try {
      // Client resets: the server's socket errors one forward delay later.
      const c1 = await open(relay.port('x'));
      await until(() => accepted.length === 1, 'the server to accept');
      const s1 = accepted[0]!;
      const t0 = performance.now();
      c1.resetAndDestroy();
      const e1 = await nextEvent(s1, ['error', 'close']);
      assert.ok(oneDelay(performance.now() - t0), `reset took ${performance.now() - t0} ms`);
      assert.equal(e1.event, 'error');
      assert.equal((e1.args[0] as NodeJS.ErrnoException).code, 'ECONNRESET');

      // Server resets: the client's socket errors one backward delay later.
      const c2 = await open(relay.port('x'));
      await until(() => accepted.length === 2, 'the second accept');
      const t1 = performance.now();
      accepted[1]!.resetAndDestroy();
      const e2 = await nextEvent(c2, ['error']);
      assert.ok(oneDelay(performance.now() - t1), `reset took ${performance.now() - t1} ms`);
      assert.equal((e2.args[0] as NodeJS.ErrnoException).code, 'ECONNRESET');
      await until(() => c2.destroyed, 'the client socket to close');
      const st = (await relay.stats()).routes[0]!;
      assert.equal(st.resets, 2);
      assert.equal(st.connections, 2);
    } finally {
      await relay.close();
      server.close();
    }
  });

  // A one-way delay long enough that a reset passed on at once would come well before the data.
  const HELD_MS = 150;
  // How early a release may look from outside: the relay dates a read up to one wake-up (at most
  // 1 ms, MAX_WAKE_LATENCY_MS) back, to when the bytes most likely arrived.
  const EARLY_MS = 1;

  /** What the relay has read in one direction of route `name` so far: released or held. */
  const readSoFar =
    (relay: DelayRelay, name: string, dir: 'forward' | 'backward') => async (): Promise<number> => {
      const r = (await relay.stats()).routes.find((x) => x.name === name)!;
      return r[dir].bytes + r[dir].queuedBytes;
    };

  /** The receiver got exactly `payload`, none of it before the delay, then the reset. */
  function assertDeliveredThenReset(got: Received, payload: Buffer, t0: number, what: string): void {
    assert.equal(got.bytes.length, payload.length, `${what}: bytes delivered before the reset`);
    assert.ok(got.bytes.equals(payload), `${what}: the bytes intact and in order`);
    const after = got.firstAt - t0;
    assert.ok(after >= HELD_MS - EARLY_MS, `${what}: first byte after ${after} ms (delay ${HELD_MS})`);
    // ECONNRESET on a read or on the answer to the end; EPIPE if the kernel had already reported it.
    assert.ok(
      got.errorCode === 'ECONNRESET' || got.errorCode === 'EPIPE',
      `${what}: closed by a reset, not '${got.errorCode}' (ended: ${got.ended})`,
    );
    assert.equal(got.dataAfterEnd, false, `${what}: no data after the reset`);
    // Right behind the last bytes, not one more delay later.
    const gap = got.closedAt - got.lastAt;
    assert.ok(gap < HELD_MS / 2, `${what}: reset ${gap} ms after the last byte`);
  }

  it('delivers the bytes it holds for the other side before passing on a reset, each way', async () => {
    const accepted: Socket[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => accepted.push(s));
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 5, routes: [route('rr', port, fixed(HELD_MS))] });
    try {
      // The client writes and resets: the server gets it all one delay later, then the reset.
      const c1 = await open(relay.port('rr'), true);
      await until(() => accepted.length === 1, 'the server to accept');
      const toServer = randomBytes(32 * 1024);
      const s1Got = receiveUntilClosed(accepted[0]!);
      const t1 = await writeThenReset(c1, toServer, 8, readSoFar(relay, 'rr', 'forward'));
      assertDeliveredThenReset(await s1Got, toServer, t1, 'client reset');

      // The server does the same: the client gets it all, then the reset.
      const c2 = await open(relay.port('rr'), true);
      await until(() => accepted.length === 2, 'the second accept');
      const toClient = randomBytes(32 * 1024);
      const c2Got = receiveUntilClosed(c2);
      const t2 = await writeThenReset(accepted[1]!, toClient, 8, readSoFar(relay, 'rr', 'backward'));
      assertDeliveredThenReset(await c2Got, toClient, t2, 'server reset');

      const st = (await relay.stats()).routes[0]!;
      assert.equal(st.resets, 2);
      assert.equal(st.forward.bytes, toServer.length);
      assert.equal(st.backward.bytes, toClient.length);
      await untilNoConnections(relay);
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('a client that resets before its connection has crossed still reaches the target: connect, bytes, reset', async () => {
    const received: Promise<Received>[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => received.push(receiveUntilClosed(s)));
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 6, routes: [route('early', port, fixed(HELD_MS))] });
    try {
      const c = await open(relay.port('early'), true);
      const payload = randomBytes(16 * 1024);
      const t0 = await writeThenReset(c, payload, 4, readSoFar(relay, 'early', 'forward'));
      assert.equal(received.length, 0, 'the target sees nothing before one delay');
      await until(() => received.length === 1, 'the target to see the connection');
      assertDeliveredThenReset(await received[0]!, payload, t0, 'reset before the connect crossed');
      assert.equal((await relay.stats()).routes[0]!.resets, 1);
      await untilNoConnections(relay);
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('delivers the bytes it holds before a clean end (FIN) too, and the end after them', async () => {
    const received: Promise<Received>[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => received.push(receiveUntilClosed(s)));
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 7, routes: [route('fin', port, fixed(HELD_MS))] });
    try {
      const c = await open(relay.port('fin'), true);
      await until(() => received.length === 1, 'the server to accept');
      let answer = '';
      c.on('data', (b: Buffer) => (answer += b.toString()));
      const clientEnded = nextEvent(c, ['end'], 3000);
      const payload = randomBytes(32 * 1024);
      const t0 = performance.now();
      c.end(payload);
      const got = await received[0]!;
      assert.ok(got.bytes.equals(payload), `${got.bytes.length} of ${payload.length} bytes before the end`);
      assert.ok(got.firstAt - t0 >= HELD_MS - EARLY_MS, `first byte after ${got.firstAt - t0} ms`);
      assert.equal(got.ended, true);
      assert.equal(got.errorCode, '', 'a clean end, no reset');
      assert.equal(got.dataAfterEnd, false);
      // The server's answer to the end crosses back: the connection was half-closed, not reset.
      await clientEnded;
      assert.equal(answer, '?');
      assert.equal((await relay.stats()).routes[0]!.resets, 0);
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('a reset on a cut route waits behind the bytes held there until the route is restored', async () => {
    const received: Promise<Received>[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => received.push(receiveUntilClosed(s)));
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 8, routes: [route('cut', port, fixed(5))] });
    try {
      // One connection open before the cut, one opened during it (its connect held too).
      const before = await open(relay.port('cut'), true);
      await until(() => received.length === 1, 'the server to accept');
      await relay.block(['cut'], true);
      const during = await open(relay.port('cut'), true);
      const payload = randomBytes(16 * 1024);
      const sent = readSoFar(relay, 'cut', 'forward');
      await writeThenReset(before, payload, 4, sent);
      // The second connection's bytes come after the first's in the route's counters.
      await writeThenReset(during, payload, 4, async () => (await sent()) - payload.length);
      // Nothing crosses a cut route, a reset no more than bytes or a connect.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(received.length, 1, 'the connect crossed the cut');
      const held = await Promise.race([received[0]!, new Promise((r) => setTimeout(() => r('held'), 0))]);
      assert.equal(held, 'held', 'the reset crossed the cut');
      assert.equal((await relay.stats()).routes[0]!.forward.queuedBytes, 2 * payload.length);
      // Restored, each connection's chunks are overdue and go out in one pass: the second one's
      // bytes are written while its target socket is still connecting, and must not be lost to
      // the reset that follows them at once.
      await relay.block(['cut'], false);
      await until(() => received.length === 2, 'the connect held by the cut');
      for (const [i, got] of (await Promise.all(received)).entries()) {
        assert.ok(got.bytes.equals(payload), `#${i}: ${got.bytes.length} of ${payload.length} bytes`);
        assert.ok(
          got.errorCode === 'ECONNRESET' || got.errorCode === 'EPIPE',
          `#${i}: closed with '${got.errorCode}'`,
        );
      }
      await untilNoConnections(relay);
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('a one-way cut holds one direction only: the other crosses, and the held bytes follow once restored', async () => {
    // An echo server: what it hears from the dialler, it says back.
    const server = createServer((s) => s.on('data', (b: Buffer) => s.write(b)));
    const port = await listen(server);
    const relay = await DelayRelay.start({ seed: 9, routes: [route('one', port, fixed(5))] });
    try {
      const c = await open(relay.port('one'));
      let heard = '';
      c.on('data', (b: Buffer) => (heard += b.toString()));
      c.write('a');
      await until(
        () => heard === 'a',
        () => `the echo before the cut (heard '${heard}')`,
      );
      // The answers cut: the dialler's bytes still reach the server, whose echo is held.
      await relay.block(['one'], true, 'backward');
      c.write('b');
      await heldIn(relay, 'backward', 'the echo held');
      assert.equal(heard, 'a');
      assert.ok((await relay.stats()).routes[0]!.forward.bytes >= 2, 'the dialler reached the server');
      await relay.block(['one'], false, 'backward');
      await until(
        () => heard === 'ab',
        () => `the held echo after the restore (heard '${heard}')`,
      );
      // The dialler cut: nothing reaches the server, so nothing comes back; restored, both follow.
      await relay.block(['one'], true, 'forward');
      c.write('c');
      await heldIn(relay, 'forward', 'the write held');
      assert.equal(heard, 'ab');
      await relay.block(['one'], false, 'both');
      await until(
        () => heard === 'abc',
        () => `the echo after the restore (heard '${heard}')`,
      );
      c.destroy();
    } finally {
      await relay.close();
      server.close();
    }
  });

  it('resets the client when the target refuses the connection', async () => {
    const server = createServer();
    const deadPort = await listen(server);
    await new Promise<void>((r) => server.close(() => r()));
    const relay = await DelayRelay.start({ seed: 1, routes: [route('dead', deadPort, fixed(1))] });
    try {
      const c = await open(relay.port('dead'));
      const e = await nextEvent(c, ['close']);
      assert.equal(e.args[0], true, 'closed with an error');
    } finally {
      await relay.close();
    }
  });

  it('rejects bad routes before listening', async () => {
    await assert.rejects(
      DelayRelay.start({ seed: 1, routes: [route('a', 1, fixed(1)), route('a', 2, fixed(1))] }),
      /duplicate relay route 'a'/,
    );
    await assert.rejects(
      DelayRelay.start({
        seed: 1,
        routes: [route('a', 1, { delayMs: -1, jitterMs: 0, distribution: 'normal' })],
      }),
      RangeError,
    );
  });

  it('close() leaves no listening port, no open connection and no handle behind; it is idempotent', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout');
    const echo = await startEchoServer();
    const relay = await DelayRelay.start({ seed: 1, routes: [route('c', echo.port, fixed(5))] });
    await relay.addRoutes([route('d', echo.port, fixed(5))]);
    const port = relay.port('c');
    assert.notEqual(relay.port('d'), port);
    const client = await open(port);
    try {
      client.write('ping');
      await nextEvent(client, ['data']);
      await Promise.all([relay.close(), relay.close()]);
      await relay.close();
      // The relayed connection is gone ...
      await until(() => client.destroyed, 'the relayed connection to close');
      // ... and so is the listener.
      await assert.rejects(open(port), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');
      await assert.rejects(relay.stats(), /relay closed/);
    } finally {
      client.destroy();
      await relay.close();
      await echo.close();
    }
    const leftover = () => {
      const now = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout');
      return now.length === before.length && now.every((r, i) => r === before[i]);
    };
    await until(leftover, () => `no leftover handles (have ${process.getActiveResourcesInfo().join(', ')})`);
  });

  it('close() returns in bounded time with releases pending, and with the relay thread stuck', async () => {
    const echo = await startEchoServer();
    try {
      // Releases pending: a second of delay, bytes in flight.
      const relay = await DelayRelay.start({ routes: [route('slow', echo.port, fixed(1000))], seed: 1 });
      const s = await open(relay.port('slow'));
      for (let i = 0; i < 100; i++) s.write(randomBytes(1024));
      await new Promise((r) => setTimeout(r, 50));
      let t0 = performance.now();
      await relay.close();
      assert.ok(
        performance.now() - t0 < 1500,
        `close with releases pending took ${performance.now() - t0} ms`,
      );

      // The relay thread stuck in a loop (fault injection): it answers nothing, not even the close;
      // close() gives it its grace and terminates it.
      const stuck = await DelayRelay.start({ routes: [route('slow', echo.port, fixed(200))], seed: 2 });
      const s2 = await open(stuck.port('slow'));
      s2.write(randomBytes(4096));
      const stalled = stuck.stall(600_000).catch((err: Error) => err);
      await new Promise((r) => setTimeout(r, 100));
      t0 = performance.now();
      await stuck.close();
      const took = performance.now() - t0;
      assert.ok(took < 5000, `close with the thread stuck took ${took} ms`);
      assert.ok((await stalled) instanceof Error, 'the stuck request failed instead of hanging');
    } finally {
      await echo.close();
    }
  });

  it('a cut route stalls its connections without a reset, holds new ones, and releases all in order when restored', async () => {
    const echo = await startEchoServer();
    const relay = await DelayRelay.start({ routes: [route('link', echo.port, fixed(5))], seed: 3 });
    try {
      const s = await open(relay.port('link'));
      const got: Buffer[] = [];
      s.on('data', (b: Buffer) => got.push(b));
      let closed = false;
      s.on('close', () => (closed = true));
      s.write('a');
      await until(
        () => Buffer.concat(got).toString() === 'a',
        () => 'the echo before the cut',
      );
      await relay.block(['link'], true);
      s.write('b');
      // A second connection opened during the cut does not reach the target.
      const late = await open(relay.port('link'));
      const lateGot: Buffer[] = [];
      late.on('data', (b: Buffer) => lateGot.push(b));
      late.write('x');
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(Buffer.concat(got).toString(), 'a', 'nothing crosses a cut route');
      assert.equal(Buffer.concat(lateGot).length, 0);
      assert.equal(closed, false, 'a cut is a stall, not a reset');
      const held = (await relay.stats()).routes[0]!;
      assert.ok(held.forward.queuedBytes >= 2, `held ${held.forward.queuedBytes} bytes`);
      const restoredAt = performance.now();
      await relay.block(['link'], false);
      await until(
        () => Buffer.concat(got).toString() === 'ab' && Buffer.concat(lateGot).toString() === 'x',
        () => `after the restore: ${Buffer.concat(got).toString()} / ${Buffer.concat(lateGot).toString()}`,
      );
      assert.ok(performance.now() - restoredAt < 500, 'released at once, its delay having passed');
      // Lateness counts from the restore, not from when the bytes arrived.
      const after = (await relay.stats()).routes[0]!;
      assert.ok(after.forward.latenessMaxMs < 200, `lateness ${after.forward.latenessMaxMs} ms`);
      await assert.rejects(relay.block(['nope'], true), /no relay route 'nope'/);
    } finally {
      await relay.close();
      await echo.close();
    }
  });

  it('routes that name their sources share one port: the client’s address picks the route, a stranger is turned away', async () => {
    // Two targets that say who they are; both routes listen on one port of 127.0.0.1.
    const named = async (who: string): Promise<number> => {
      const server = createServer((c) => c.end(who));
      return listen(server);
    };
    const a = await named('to-a');
    const b = await named('to-b');
    // Free ports, asked of the kernel (a port next to a free one may be any connection's own).
    const freePort = async (): Promise<number> => {
      const probe = createServer();
      const free = await listen(probe);
      probe.close();
      return free;
    };
    const port = await freePort();
    const relay = await DelayRelay.start({
      seed: 1,
      routes: [
        // An address, and a name looked up when a client comes (localhost: 127.0.0.1).
        { ...route('from-2', a, fixed(1)), listenPort: port, acceptFrom: '127.0.0.2' },
        { ...route('from-localhost', b, fixed(1)), listenPort: port, acceptFrom: 'localhost' },
      ],
    });
    const readFrom = (localAddress: string): Promise<string> =>
      new Promise((resolve) => {
        const s = connect({ host: HOST, port, localAddress });
        leftovers.add(s);
        s.on('error', ignoreError);
        const got: Buffer[] = [];
        s.on('data', (d: Buffer) => got.push(d));
        s.on('close', () => resolve(Buffer.concat(got).toString()));
      });
    try {
      assert.equal(relay.port('from-2'), port);
      assert.equal(relay.port('from-localhost'), port);
      assert.equal(await readFrom('127.0.0.2'), 'to-a');
      assert.equal(await readFrom('127.0.0.1'), 'to-b');
      assert.equal(await readFrom('127.0.0.3'), '', 'no route takes 127.0.0.3');
      const stats = await relay.stats();
      assert.equal(stats.worker.unclaimed, 1);
      assert.deepEqual(
        stats.routes.map((r) => [r.name, r.connections]),
        [
          ['from-2', 1],
          ['from-localhost', 1],
        ],
      );
      // Two routes on one port for one source: refused when added, nothing left listening.
      const other = await freePort();
      await assert.rejects(
        DelayRelay.start({
          seed: 1,
          routes: [
            { ...route('x', a, fixed(1)), listenPort: other, acceptFrom: '127.0.0.5' },
            { ...route('y', b, fixed(1)), listenPort: other, acceptFrom: '127.0.0.5' },
          ],
        }),
        /'x' and 'y' listen on one port and both take connections from 127.0.0.5/,
      );
    } finally {
      await relay.close();
    }
  });
});
