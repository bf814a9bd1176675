// The load agent in-process against a scripted fake node (a real TCP server speaking the client
// protocol): retries keep their ids and count once, a non-retryable error fails at once, a write
// that gets no answer times out at its deadline, overflow beyond maxInFlight is counted, stop()
// ends the run early, and the `done` message passes the protocol's own check.
import { writeClientFor } from '../../src/targets/registry.js';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FrameDecoder } from '../../src/util/wire/frame-decoder.js';
import type { ClientErrorName } from '../../src/node/net/client-protocol.js';
import { decodeRequest, encodeErrorReply, encodeWriteOk } from '../../src/node/net/client-protocol.js';
import { LoadAgent } from '../../src/load/load-agent.js';
import {
  AGENT_PROTOCOL_VERSION,
  FAULT_PHASE,
  msg,
  parseAgentMessage,
  parseHarnessMessage,
  type AgentMessage,
  type LoadSpec,
} from '../../src/load/agent-protocol.js';

type Behaviour = 'ok' | 'hang' | 'hold' | ClientErrorName;

interface Seen {
  readonly clientId: string;
  readonly requestId: number;
  readonly path: string;
}

/** A fake node: answers each write as `behave(requestId, attempt)` says; remembers every request. */
class FakeNode {
  readonly seen: Seen[] = [];
  /** Replies to writes answered 'hold', sent when the test calls them. */
  readonly held: Array<() => void> = [];
  private readonly attempts = new Map<number, number>();
  private readonly sockets = new Set<Socket>();
  private counter = 0;
  behave: (requestId: number, attempt: number) => Behaviour = () => 'ok';
  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeNode> {
    const server = createServer();
    const node = new FakeNode(server);
    server.on('connection', (s) => node.serve(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return node;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  reset(): void {
    this.seen.length = 0;
    this.held.length = 0;
    this.attempts.clear();
    this.behave = () => 'ok';
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder(1 << 20);
    socket.on('data', (chunk: Buffer) => {
      decoder.push(chunk, (frame) => {
        const r = decodeRequest(frame, 1 << 20);
        if (!r.ok || r.req.op !== 1) return;
        const { tag, clientId, requestId, path } = r.req;
        this.seen.push({ clientId, requestId, path });
        const attempt = (this.attempts.get(requestId) ?? 0) + 1;
        this.attempts.set(requestId, attempt);
        const b = this.behave(requestId, attempt);
        if (b === 'hang') return;
        if (b === 'hold') {
          this.held.push(() => socket.write(encodeWriteOk(tag, { epoch: 1, counter: ++this.counter })));
          return;
        }
        socket.write(
          b === 'ok' ? encodeWriteOk(tag, { epoch: 1, counter: ++this.counter }) : encodeErrorReply(tag, b),
        );
      });
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let node: FakeNode;
before(async () => {
  node = await FakeNode.start();
});
after(async () => {
  await node.stop();
});

function spec(over: Partial<LoadSpec> = {}): LoadSpec {
  return {
    dc: 'east',
    endpoints: [{ node: 'f1', host: '127.0.0.1', port: node.port }],
    rate: 500,
    size: 64,
    arrival: 'constant',
    seed: 3,
    durationMs: 400,
    requestTimeoutMs: 2_000,
    writeDeadlineMs: 1_000,
    clientIdPrefix: 'unit',
    pathPrefix: '/load',
    ...over,
  };
}

async function run(
  s: LoadSpec,
  onMessage?: (m: AgentMessage, a: LoadAgent) => void,
): Promise<{ done: AgentMessage[]; all: AgentMessage[] }> {
  const all: AgentMessage[] = [];
  const agent: LoadAgent = new LoadAgent(
    s,
    (m) => {
      all.push(JSON.parse(JSON.stringify(m)) as AgentMessage);
      onMessage?.(m, agent);
    },
    writeClientFor,
  );
  await agent.run();
  return { done: all.filter((m) => m.type === 'done'), all };
}

describe('load agent (in-process, fake node)', () => {
  it('retries with the same ids and counts once; fails non-retryable errors at once; times out silent writes', async () => {
    node.reset();
    // By requestId: every 7th never answered, every 10th refused as TOO_LARGE, every 3rd answered
    // NOT_LEADER_YET on its first attempt (then acknowledged).
    node.behave = (id, attempt) =>
      id % 7 === 0
        ? 'hang'
        : id % 10 === 0
          ? 'TOO_LARGE'
          : id % 3 === 0 && attempt === 1
            ? 'NOT_LEADER_YET'
            : 'ok';
    const { done } = await run(spec());
    const d = parseAgentMessage(done[0]);
    assert.ok(d.type === 'done');
    const ids = Array.from({ length: 200 }, (_, i) => i + 1);
    const hang = ids.filter((id) => id % 7 === 0);
    const tooLarge = ids.filter((id) => id % 7 !== 0 && id % 10 === 0);
    const retried = ids.filter((id) => id % 7 !== 0 && id % 10 !== 0 && id % 3 === 0);
    assert.deepEqual(d.totals, {
      attempted: 200,
      acked: 200 - hang.length - tooLarge.length,
      failed: hang.length + tooLarge.length,
      timedOut: hang.length,
      overflow: 0,
      retries: retried.length,
      // By the last error: a write nobody answered never failed an attempt (DEADLINE).
      failedCodes: { DEADLINE: hang.length, TOO_LARGE: tooLarge.length },
    });
    // Every attempt of a write carries its one (clientId, requestId) and path.
    for (const s of node.seen) {
      assert.equal(s.clientId, 'unit-east');
      assert.equal(s.path, `/load/east/${s.requestId}`);
    }
    assert.equal(node.seen.length, 200 + retried.length);
    assert.deepEqual(
      d.acked.map(([p]) => p).sort(),
      ids
        .filter((id) => !hang.includes(id) && !tooLarge.includes(id))
        .map((id) => `/load/east/${id}`)
        .sort(),
    );
    assert.equal(d.phases.warmup!.failed, hang.length + tooLarge.length);
    assert.equal(d.sentRate, 500);
  });

  it('a write in flight when the fault phase begins counts in the fault phase, not in the one it was sent in', async () => {
    node.reset();
    // Writes 20-24 get no reply until the fault phase has begun (a leader killed under them); when
    // write 26 arrives the test starts the fault phase, then lets 20-24 through; 40 starts "after".
    let agent: LoadAgent | undefined;
    node.behave = (id) => {
      if (id >= 20 && id <= 24) return 'hold';
      if (id === 26) {
        agent!.setPhase(FAULT_PHASE);
        for (const reply of node.held.splice(0)) reply();
      }
      if (id === 40) agent!.setPhase('after');
      return 'ok';
    };
    const { done } = await run(spec({ rate: 100, durationMs: 500, phase: 'before' }), (m, a) => {
      agent = a;
    });
    const d = parseAgentMessage(done[0]);
    assert.ok(d.type === 'done');
    assert.equal(d.totals.acked, 50);
    const before = d.phases.before!.corrected.count;
    const gap = d.phases[FAULT_PHASE]!.corrected.count;
    const after = d.phases.after!.corrected.count;
    assert.equal(before + gap + after, 50);
    // 1-19 were answered 70 ms before the fault; 25 and 26 may land on either side of it; 20-24
    // were still waiting and are the fault's, whatever their send time said.
    assert.ok(before >= 19 && before <= 21, `before: ${before} writes`);
    assert.ok(gap >= 5 + 13, `fault phase: ${gap} writes`);
  });

  it('counts writes beyond maxInFlight as failed (overflow) without sending them', async () => {
    node.reset();
    node.behave = () => 'hang';
    const { done } = await run(spec({ rate: 1000, durationMs: 100, maxInFlight: 5, writeDeadlineMs: 200 }));
    const t = done[0]!.type === 'done' ? done[0]!.totals : undefined;
    assert.deepEqual(t, {
      attempted: 100,
      acked: 0,
      failed: 100,
      timedOut: 5,
      overflow: 95,
      retries: 0,
      failedCodes: { DEADLINE: 5, OVERFLOW: 95 },
    });
    assert.equal(node.seen.length, 5);
  });

  it('stop() ends an open-ended run early; intervals, then done, are the last messages', async () => {
    node.reset();
    const t0 = performance.timeOrigin + performance.now();
    const { all } = await run(spec({ durationMs: 0, rate: 200, intervalMs: 100 }), (m, a) => {
      if (m.type === 'started') setTimeout(() => a.stop(), 350);
    });
    const d = all[all.length - 1]!;
    assert.ok(d.type === 'done');
    assert.equal(all[0]!.type, 'started');
    const intervals = all.filter((m) => m.type === 'interval');
    assert.ok(intervals.length >= 3 && intervals.length <= 5, `${intervals.length} intervals of 100 ms`);
    assert.equal(all[all.length - 2]!.type, 'interval');
    const window = d.sendEndMs - d.startMs;
    assert.ok(window > 340 && window < 500, `sent for ${window} ms`);
    assert.ok(d.startMs >= t0);
    assert.ok(Math.abs(d.totals.attempted - window / 5) <= 2, `${d.totals.attempted} writes in ${window} ms`);
    assert.equal(d.totals.acked, d.totals.attempted, JSON.stringify(d.totals));
  });
});

describe('agent protocol', () => {
  it('checks the version and the fields of harness messages', () => {
    const start = msg.start(spec());
    assert.deepEqual(parseHarnessMessage(JSON.parse(JSON.stringify(start))), start);
    assert.deepEqual(parseHarnessMessage(msg.phase('after', 12.5)), {
      v: AGENT_PROTOCOL_VERSION,
      type: 'phase',
      name: 'after',
      atMs: 12.5,
    });
    assert.throws(() => parseHarnessMessage({ ...start, v: 2 }), /protocol version 2; this build speaks 1/);
    assert.throws(
      () => parseHarnessMessage({ ...start, rate: 0 }),
      /bad harness message \(type "start"\): rate: /,
    );
    assert.throws(() => parseHarnessMessage({ ...start, arrival: 'bursty' }), /arrival/);
    assert.throws(() => parseHarnessMessage({ ...start, pathPrefix: 'no-slash' }), /pathPrefix/);
    assert.throws(() => parseHarnessMessage({ v: 1, type: 'pause' }), /bad harness message/);
    assert.throws(() => parseHarnessMessage(null), /protocol version undefined/);
  });

  it('checks agent messages too', () => {
    assert.deepEqual(parseAgentMessage(msg.ready(42)), { v: 1, type: 'ready', pid: 42 });
    assert.throws(() => parseAgentMessage({ v: 1, type: 'interval', dc: 'x' }), /bad agent message/);
  });
});
