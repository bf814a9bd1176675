// The node's half of the latency anatomy: which writes it stamps, which steps, and when it reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { traceEveryFor, WriteTracer } from '../../src/node/trace/write-tracer.js';
import { nodeConfigSchema } from '../../src/node/config.js';
import type { TraceEventFields } from '../../src/vocabulary/node-events.js';
import type { Txn } from '../../src/node/core/types.js';

function tracer(): { t: WriteTracer; out: TraceEventFields[]; tick: (ms: number) => void } {
  let now = 1000;
  const out: TraceEventFields[] = [];
  const t = new WriteTracer(
    (f) => out.push(f),
    () => now,
  );
  return { t, out, tick: (ms) => (now += ms) };
}

const txn = (requestId: number, counter: number): Txn => ({
  zxid: { epoch: 2, counter },
  path: `/w/${requestId}`,
  data: new Uint8Array(0),
  clientId: 'c',
  requestId,
});

describe('WriteTracer', () => {
  it('stamps a traced write through a follower contact and reports it at the reply', () => {
    const { t, out, tick } = tracer();
    t.clientWrite(7, 'c', 64);
    tick(0.1);
    t.peerOut({
      type: 'REQUEST',
      epoch: 2,
      clientId: 'c',
      requestId: 64,
      path: '/w/64',
      data: new Uint8Array(0),
    });
    tick(5);
    t.peerIn('p5', {
      type: 'PROPOSAL',
      epoch: 2,
      commitZxid: { epoch: 2, counter: 8 },
      txns: [txn(63, 9), txn(64, 10)],
    });
    const rounds = t.persisting([{ op: 'append', txns: [txn(63, 9), txn(64, 10)] }]);
    tick(1);
    t.durable(rounds);
    t.peerOut({ type: 'ACK', epoch: 2, zxid: { epoch: 2, counter: 10 } });
    tick(5);
    // A cumulative COMMIT past the write: the contact waits for its reply before reporting.
    t.peerIn('p5', { type: 'COMMIT', epoch: 2, zxid: { epoch: 2, counter: 12 } });
    assert.equal(out.length, 0);
    tick(0.2);
    t.replied(7);
    assert.equal(out.length, 1);
    assert.deepEqual(out[0], {
      client: 'c',
      req: 64,
      zxid: '2:10',
      s: {
        clientRecv: 1000,
        forwardSent: 1000.1,
        proposalRecv: 1005.1,
        persistStart: 1005.1,
        durable: 1006.1,
        ackSent: 1006.1,
        commitRecv: 1011.1,
        replySent: 1011.3,
      },
    });
    assert.equal(t.open, 0);
  });

  it('stamps only one write in TRACE_EVERY, and nothing for the others', () => {
    const { t, out } = tracer();
    t.clientWrite(1, 'c', 63);
    t.peerIn('p1', {
      type: 'REQUEST',
      epoch: 2,
      clientId: 'c',
      requestId: 65,
      path: '/w',
      data: new Uint8Array(0),
    });
    t.persisting([{ op: 'append', txns: [txn(63, 1), txn(65, 2)] }]);
    t.replied(1);
    assert.equal(t.open, 0);
    assert.equal(out.length, 0);
  });

  it("traces one write in the run's `every`: a slow load more of its writes, never more than one in 64 apart", () => {
    let now = 0;
    const out: TraceEventFields[] = [];
    const t = new WriteTracer(
      (f) => out.push(f),
      () => now,
      16,
    );
    for (const req of [15, 16, 17, 32, 48]) {
      t.clientWrite(req, 'c', req);
      now += 1;
      t.replied(req);
    }
    assert.deepEqual(
      out.map((f) => f.req),
      [16, 32, 48],
    );
    // 14-28 traced writes a second in all, as a power of two, one in 64 at the most.
    assert.deepEqual([1, 8, 50, 200, 400, 1000, 5000].map(traceEveryFor), [1, 1, 2, 8, 16, 64, 64]);
    const base = {
      id: 'p1',
      listen: { peerPort: 0, clientPort: 0, httpPort: 0 },
      peers: [
        { id: 'p2', host: '127.0.0.1', port: 1 },
        { id: 'p3', host: '127.0.0.1', port: 2 },
      ],
      dataDir: '/d',
    };
    assert.equal(nodeConfigSchema.parse(base).traceEvery, 64, 'the default');
    assert.equal(nodeConfigSchema.parse({ ...base, traceEvery: 16 }).traceEvery, 16);
    assert.throws(() => nodeConfigSchema.parse({ ...base, traceEvery: 0 }));
  });

  it('as leader: the first ACK per follower, the decision, and a report at the first COMMIT out', () => {
    const { t, out, tick } = tracer();
    t.peerIn('p1', {
      type: 'REQUEST',
      epoch: 2,
      clientId: 'c',
      requestId: 128,
      path: '/w',
      data: new Uint8Array(0),
    });
    const r = t.persisting([{ op: 'append', txns: [txn(128, 3)] }]);
    tick(1);
    t.durable(r);
    t.peerOut({ type: 'PROPOSAL', epoch: 2, commitZxid: { epoch: 2, counter: 2 }, txns: [txn(128, 3)] });
    tick(2);
    t.peerIn('p3', { type: 'ACK', epoch: 2, zxid: { epoch: 2, counter: 3 } });
    tick(1);
    t.peerIn('p4', { type: 'ACK', epoch: 2, zxid: { epoch: 2, counter: 4 } });
    t.peerIn('p3', { type: 'ACK', epoch: 2, zxid: { epoch: 2, counter: 4 } });
    t.decided({ epoch: 2, counter: 4 });
    t.peerOut({ type: 'COMMIT', epoch: 2, zxid: { epoch: 2, counter: 4 } });
    t.peerOut({ type: 'COMMIT', epoch: 2, zxid: { epoch: 2, counter: 4 } });
    assert.equal(out.length, 1);
    assert.deepEqual(out[0]!.acks, { p3: 1003, p4: 1004 });
    assert.equal(out[0]!.s.leaderRecv, 1000);
    assert.equal(out[0]!.s.decided, 1004);
    assert.equal(out[0]!.s.commitSent, 1004);
  });
});
