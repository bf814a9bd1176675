// The load agent as `pole-bench run` uses it: a `pole-bench agent` child process driven over the
// IPC channel, writing to a real three-node cluster. Checks the books (every write counted once,
// as acknowledged or failed), that every acknowledged write is on the leader exactly once, that
// phases and intervals arrive as asked, and that the agent exits cleanly; then the same with a
// follower SIGKILLed mid-run.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { LAN_TIMERS } from '../../src/bench/node-bench.js';
import { PoleClient } from '../../src/node/net/client.js';
import { AgentProcess } from '../../src/load/agent-process.js';
import type { DoneMessage, IntervalMessage, LoadSpec } from '../../src/load/agent-protocol.js';
import { ProcessCluster } from '../../src/bench/process-cluster.js';

const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));
const RATE = 300;
let cluster: ProcessCluster;
let leader: string;

before(async () => {
  cluster = await ProcessCluster.start({ nodes: 3, fsync: true, initialLeader: 'p3', timers: LAN_TIMERS });
  leader = (await cluster.waitForServingLeader(20_000)).leader;
});

after(async () => {
  await cluster?.stop();
});

function spec(name: string, endpoints: LoadSpec['endpoints']): LoadSpec {
  return {
    dc: 'dc1',
    endpoints,
    rate: RATE,
    size: 1024,
    arrival: 'constant',
    seed: 11,
    durationMs: 3_000,
    requestTimeoutMs: 2_000,
    writeDeadlineMs: 5_000,
    clientIdPrefix: `${name}-${process.pid}-${Date.now()}`,
    pathPrefix: `/${name}`,
    phase: 'warmup',
  };
}

function endpointsOfAll(): LoadSpec['endpoints'] {
  return cluster.ids.map((id) => ({ node: id, ...cluster.clientAddress(id) }));
}

/** Every acknowledged write is on the leader at its zxid, applied once (version 0: paths are unique). */
async function assertOnLeader(done: DoneMessage): Promise<void> {
  const client = await PoleClient.connect('127.0.0.1', cluster.clientAddress(leader).port);
  try {
    const reads = await Promise.all(done.acked.map(([path]) => client.read(path)));
    done.acked.forEach(([path, epoch, counter], i) => {
      const r = reads[i];
      assert.ok(r, `the leader lacks acknowledged ${path}`);
      assert.deepEqual(r.zxid, { epoch, counter }, `${path} is at another zxid`);
      assert.equal(r.version, 0, `${path} was applied more than once`);
      assert.equal(r.data.length, 1024);
    });
  } finally {
    await client.close();
  }
}

function assertBooksBalance(done: DoneMessage, intervals: readonly IntervalMessage[]): void {
  const t = done.totals;
  assert.equal(t.acked + t.failed, t.attempted, 'every write is acknowledged or failed');
  assert.ok(t.timedOut <= t.failed && t.overflow <= t.failed);
  assert.equal(new Set(done.acked.map(([p]) => p)).size, t.acked, 'each acknowledged write listed once');
  assert.equal(done.acked.length, t.acked);
  const sum = (f: (m: IntervalMessage) => number): number => intervals.reduce((a, m) => a + f(m), 0);
  assert.equal(
    sum((m) => m.sent),
    t.attempted - t.overflow,
    'intervals add up to the totals: sent',
  );
  assert.equal(
    sum((m) => m.acked),
    t.acked,
    'intervals add up: acked',
  );
  assert.equal(
    sum((m) => m.failed),
    t.failed,
    'intervals add up: failed',
  );
  const phaseCounts = Object.values(done.phases).reduce((a, p) => a + p.corrected.count, 0);
  assert.equal(phaseCounts, t.acked, 'phases add up to the acknowledged writes');
  assert.equal(done.lateness.count, t.attempted - t.overflow);
  const phaseSent = Object.values(done.phases).reduce((a, p) => a + p.lateness.count, 0);
  assert.equal(phaseSent, t.attempted - t.overflow, 'per-phase lateness counts every sent write');
}

async function assertGone(pid: number | undefined): Promise<void> {
  assert.ok(pid !== undefined);
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the agent process is gone');
}

test('an agent child process keeps its schedule, switches phases, reports every second and exits 0', async () => {
  const agent = await AgentProcess.spawn();
  try {
    agent.start(spec('healthy', endpointsOfAll()));
    const started = await agent.started;
    assert.equal(started.wake, 'thread', 'a low rate gets the precise clock thread');
    // One phase switch at an exact instant, one as the harness would send it live.
    agent.phase('before', started.startMs + 1_000);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (agent.intervals.length >= 2) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    agent.phase('after');
    const done = await agent.done;
    const exit = await agent.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    await assertGone(agent.pid);

    const t = done.totals;
    assert.equal(t.attempted, RATE * 3, 'a constant schedule sends exactly rate × duration');
    assert.equal(t.failed, 0, 'a healthy cluster acknowledges everything');
    assert.equal(t.acked, RATE * 3);
    assert.equal(done.targetRate, RATE);
    assert.ok(Math.abs(done.sentRate - RATE) < 1, `sent ${done.sentRate}/s`);
    assertBooksBalance(done, agent.intervals);

    // Phases by intended send time: the first second is warm-up, give or take the boundary write.
    assert.deepEqual(Object.keys(done.phases).sort(), ['after', 'before', 'warmup']);
    assert.ok(Math.abs(done.phases.warmup!.corrected.count - RATE) <= 1, 'one second of warm-up');
    assert.ok(done.phases.before!.corrected.count > 0 && done.phases.after!.corrected.count > 0);
    const first = done.firstAckAfter;
    assert.ok(first.warmup! < first.before! && first.before! < first.after!, 'first acks in phase order');
    assert.ok(first.before! >= started.startMs + 1_000);
    for (const p of Object.values(done.phases)) {
      assert.ok(
        p.corrected.p50 > 0 && p.corrected.p99 >= p.corrected.p50 && p.corrected.max >= p.corrected.p99,
      );
      assert.ok(p.corrected.mean >= p.uncorrected.mean, 'corrected latency includes the send lateness');
    }

    // Intervals: one per second from the start, plus the last, partial one at the end.
    const iv = agent.intervals;
    assert.ok(iv.length === 3 || iv.length === 4, `${iv.length} intervals`);
    iv.forEach((m, i) => {
      assert.equal(m.index, i);
      assert.equal(m.dc, 'dc1');
      if (i > 0) assert.ok(Math.abs(m.startMs - iv[i - 1]!.endMs) < 1e-6, 'intervals are contiguous');
    });
    for (const m of iv.slice(0, -1)) {
      const len = m.endMs - m.startMs;
      assert.ok(Math.abs(len - 1_000) < 150, `interval of ${len} ms`);
    }
    assert.equal(iv[0]!.startMs, started.startMs);
    assert.equal(iv[0]!.phase, 'warmup', 'an interval carries the phase in effect at its start');
    assert.equal(iv[1]!.phase, 'before');
    const order = ['warmup', 'before', 'after'];
    const ranks = iv.map((m) => order.indexOf(m.phase));
    assert.deepEqual(ranks, [...ranks].sort(), 'interval phases follow the switches');
    // The interval histograms decode and hold what the interval acknowledged.
    const { decodeHistogram } = await import('../../src/load/latency-recorders.js');
    for (const m of iv) assert.equal(decodeHistogram(m.histogram).totalCount, m.acked);

    await assertOnLeader(done);
  } finally {
    await agent.kill();
  }
});

test('a follower killed mid-run: retried writes count once and no acknowledged write is lost', async () => {
  const follower = cluster.ids.find((id) => id !== leader)!;
  const agent = await AgentProcess.spawn();
  try {
    agent.start(spec('follower-kill', endpointsOfAll()));
    await agent.started;
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (agent.intervals.length >= 1) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    await cluster.kill(follower);
    const done = await agent.done;
    assert.deepEqual(await agent.exited, { code: 0, signal: null });
    await assertGone(agent.pid);

    const t = done.totals;
    assert.equal(t.attempted, RATE * 3);
    assertBooksBalance(done, agent.intervals);
    assert.ok(t.retries > 0, 'writes sent to the killed follower were retried elsewhere');
    // The two survivors are a quorum: every write still gets through within its 5 s deadline.
    assert.equal(t.failed, 0, `failed ${t.failed} (timed out ${t.timedOut})`);
    await assertOnLeader(done);
  } finally {
    await agent.kill();
  }
});

test('an agent stopped before it was started still ends with an (empty) done and exits 0', async () => {
  const agent = await AgentProcess.spawn();
  try {
    agent.stop();
    const done = await agent.done;
    assert.equal(done.totals.attempted, 0);
    assert.deepEqual(done.acked, []);
    assert.deepEqual(await agent.exited, { code: 0, signal: null });
    agent.stop(); // ignored once the agent has gone
    agent.phase('late');
  } finally {
    await agent.kill();
  }
});

test('pole-bench agent without an IPC channel says who starts it and exits 2', async () => {
  const child = spawn(process.execPath, [RUN_JS, 'agent'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 2);
  assert.match(stderr, /pole-bench agent is started by `pole-bench run`/);
});
