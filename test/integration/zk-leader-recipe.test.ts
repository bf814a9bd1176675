// ZooKeeper's leader recipe as election participants, against a real ZooKeeper 3.8 ensemble of
// three servers: the first to join leads, a crashed leader hands over to the next in line once
// the server expired its session, a paused leader stops believing it leads when its lease runs
// out (before anybody else leads), and no two participants ever believe they lead at once, by
// their own events. A short tick keeps it quick: sessions of 4 ticks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseTopology } from '../../src/topology/topology.js';
import { zookeeperTarget } from '../../src/targets/zookeeper/zookeeper-target.js';
import type { ProcessMembers } from '../../src/runtime/process/member-processes.js';
import { startPlannedProcesses } from '../../src/runtime/process/planned-processes.js';
import { noShaper } from '../../src/shaping/no-shaper.js';
import { zookeeperSkip } from '../support/prerequisites.js';
import { ZkRecipeParticipant } from '../../src/election/zookeeper/zk-leader-recipe.js';
import { ZkClient } from '../../src/targets/zookeeper/client/zk-client.js';
import type { WatcherEvent } from '../../src/targets/zookeeper/client/zk-protocol.js';
import { type ElectionEvent } from '../../src/election/participant.js';
import { wallNowMs } from '../../src/util/wall-clock.js';

const TICK_MS = 200;
const SESSION_MS = 4 * TICK_MS;
/**
 * A crashed leader's session expires within T (+ a tick of ZooKeeper's rounding) of the last
 * message the server had from it; then the deletion is committed and watched, and the heir reads
 * the children once. Two seconds cover that on a busy 2-core machine.
 */
const FAILOVER_BOUND_MS = SESSION_MS + 2_000;
const SERVERS = ['p1', 'p2', 'p3'];

const TOPOLOGY = parseTopology(
  'zk-recipe-3.yaml',
  [
    'datacenters: [{ name: lan, nodes: [p1, p2, p3] }]',
    `cluster: { initialLeader: p3, timers: { tickMs: ${TICK_MS}, syncLimit: 5, initLimit: 10 } }`,
    'workload: { rate: 100 }',
    'scenario: { duration: 10s }',
  ].join('\n'),
);

let members: ProcessMembers;
let pids: number[] = [];
const everyone: ZkRecipeParticipant[] = [];

before(async () => {
  if (zookeeperSkip) return; // each test below says why
  const shaper = noShaper(TOPOLOGY, 'one data center');
  members = await startPlannedProcesses(zookeeperTarget, {
    topology: TOPOLOGY,
    seed: 1,
    fsync: true,
    shape: (m, plan) => shaper.install({ members: m, plan }),
  });
  pids = SERVERS.map((id) => members.pid(id) as number);
  await Promise.all(SERVERS.map((id) => members.waitFor((e) => e.node === id && e.ev === 'serving', 30_000)));
});

after(async () => {
  await Promise.allSettled(everyone.map((p) => p.stop()));
  await members?.stop();
});

/** Participants of one group, their events in the order emitted (so in time order), one listener. */
class Group {
  readonly events: ElectionEvent[] = [];
  readonly ps: ZkRecipeParticipant[] = [];
  onEvent: ((e: ElectionEvent) => void) | undefined;

  constructor(private readonly root: string) {}

  /** Joins one more participant, with a session on `server`. */
  async join(name: string, server: string): Promise<ZkRecipeParticipant> {
    const a = members.clientAddress(server);
    const p = new ZkRecipeParticipant(name, {
      host: a.host,
      port: a.port,
      sessionTimeoutMs: SESSION_MS,
      root: this.root,
      emit: (e) => {
        this.events.push(e);
        this.onEvent?.(e);
      },
    });
    everyone.push(p);
    this.ps.push(p);
    await p.start();
    return p;
  }

  leaders(): string[] {
    return this.ps.filter((p) => p.isLeader()).map((p) => p.name);
  }

  of(name: string, ev: ElectionEvent['ev']): ElectionEvent[] {
    return this.events.filter((e) => e.participant === name && e.ev === ev);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.ps.map((p) => p.stop()));
  }
}

interface Interval {
  readonly who: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Each `lead` is a belief from its t to its `until`, cut short by the participant's next
 * `lead-lost` or `crashed` (and by `end`). Renewals overlap their own participant's earlier
 * intervals, which is no conflict: only different participants' intervals are compared.
 */
function leadIntervals(events: readonly ElectionEvent[], end: number): Interval[] {
  const out: Interval[] = [];
  for (const e of events) {
    if (e.ev !== 'lead') continue;
    const stop = events.find(
      (x) => x.participant === e.participant && (x.ev === 'lead-lost' || x.ev === 'crashed') && x.t >= e.t,
    );
    const to = Math.min(e.until ?? Infinity, stop?.t ?? Infinity, end);
    if (to > e.t) out.push({ who: e.participant, from: e.t, to });
  }
  return out;
}

/** Every pair of different participants' intervals that share an instant. */
function overlaps(iv: readonly Interval[]): [Interval, Interval][] {
  const out: [Interval, Interval][] = [];
  for (let i = 0; i < iv.length; i++)
    for (let j = i + 1; j < iv.length; j++) {
      const a = iv[i]!;
      const b = iv[j]!;
      if (a.who !== b.who && a.from < b.to && b.from < a.to) out.push([a, b]);
    }
  return out;
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = wallNowMs() + ms;
  while (!cond()) {
    if (wallNowMs() > deadline) throw new Error(`${what} within ${ms} ms`);
    await sleep(10);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

test('the helpers: renewals, cut by lead-lost or crashed, overlaps only between participants', () => {
  const ev = (e: object): ElectionEvent => e as ElectionEvent;
  const events = [
    ev({ t: 0, participant: 'a', ev: 'lead', until: 10 }),
    ev({ t: 5, participant: 'a', ev: 'lead', until: 15 }),
    ev({ t: 8, participant: 'a', ev: 'crashed' }),
    ev({ t: 12, participant: 'b', ev: 'lead', until: 20 }),
    ev({ t: 14, participant: 'b', ev: 'lead-lost', why: 'x' }),
    ev({ t: 13, participant: 'c', ev: 'lead', until: 30 }),
  ];
  const iv = leadIntervals(events, 25);
  assert.deepEqual(iv, [
    { who: 'a', from: 0, to: 8 },
    { who: 'a', from: 5, to: 8 },
    { who: 'b', from: 12, to: 14 },
    { who: 'c', from: 13, to: 25 },
  ]);
  assert.deepEqual(
    overlaps(iv).map(([x, y]) => [x.who, y.who]),
    [['b', 'c']],
  );
});

test('the client: acknowledgedSentAt follows the pings, abandon() leaves the session to expire, pause() holds what arrives', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const connect = (id: string, sessionMs: number, onWatch?: (e: WatcherEvent) => void): Promise<ZkClient> => {
    const a = members.clientAddress(id);
    return ZkClient.connect(a.host, a.port, {
      sessionTimeoutMs: sessionMs,
      requestTimeoutMs: 10_000,
      onWatch,
    });
  };
  const seen: { at: number; e: WatcherEvent }[] = [];
  // The watcher's session outlives its pause below by far (the most a 200 ms tick allows).
  const watcher = await connect('p2', 20 * TICK_MS, (e) => seen.push({ at: wallNowMs(), e }));
  const owner = await connect('p1', SESSION_MS);
  try {
    assert.equal(owner.sessionTimeoutMs, SESSION_MS);
    const first = owner.acknowledgedSentAt;
    assert.ok(first > 0 && first <= wallNowMs());
    await sleep((2 * SESSION_MS) / 3);
    assert.ok(owner.acknowledgedSentAt > first, 'a ping was acknowledged');

    await watcher.create('/client-test', new Uint8Array(0));
    const node = (await owner.create('/client-test/e', new Uint8Array(0), 'ephemeral')).value;
    await watcher.sync('/client-test');
    assert.ok(await watcher.exists(node, true));
    const lastAck = owner.acknowledgedSentAt;
    const at = wallNowMs();
    owner.abandon();
    assert.equal(owner.connected, false);
    await assert.rejects(owner.getData(node), (e: { code: string }) => e.code === 'CLOSED');
    // No closeSession: the node stays until the server expires the session.
    assert.ok(await watcher.exists(node), 'the node outlives the connection');
    await until(() => seen.length > 0, SESSION_MS + 2_000, 'the abandoned session did not expire');
    t.diagnostic(`abandoned session's node deleted ${(seen[0]!.at - at).toFixed(0)} ms after abandon()`);
    assert.deepEqual(seen[0]!.e, { type: 2, state: 3, path: node });
    assert.ok(
      seen[0]!.at >= lastAck + SESSION_MS,
      `deleted ${(seen[0]!.at - lastAck).toFixed(0)} ms after the last ack`,
    );

    // A paused client handles nothing until the pause ends, then everything in order.
    await watcher.create('/client-test/w', new Uint8Array(0));
    assert.ok(await watcher.exists('/client-test/w', true));
    const other = await connect('p3', SESSION_MS);
    try {
      watcher.pause(600);
      const ackBefore = watcher.acknowledgedSentAt;
      await other.delete('/client-test/w');
      await sleep(300);
      assert.equal(seen.length, 1, 'no notification during the pause');
      assert.equal(watcher.acknowledgedSentAt, ackBefore, 'no ping acknowledged during the pause');
      await until(() => seen.length > 1, 2_000, 'no notification after the pause');
      assert.deepEqual(seen[1]!.e, { type: 2, state: 3, path: '/client-test/w' });
      await until(() => watcher.acknowledgedSentAt > ackBefore, SESSION_MS, 'no ping after the pause');
    } finally {
      await other.close();
    }
  } finally {
    await watcher.close();
    await owner.close();
  }
});

test('ten participants: the first to join leads; three crashes each hand over to the next in line, without overlap', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const g = new Group('/pb-election/recipe-test/crashes');
  for (let i = 0; i < 10; i++) await g.join(`q${i}`, SERVERS[i % SERVERS.length]!);
  const ids = g.ps.map((p) => p.id as string);
  assert.deepEqual([...ids].sort(), ids, 'sequence numbers in the order of joining');
  assert.equal(g.of('q0', 'joined').length, 1);

  await until(() => g.leaders().length > 0, FAILOVER_BOUND_MS, 'nobody leads');
  assert.deepEqual(g.leaders(), ['q0']);
  // Its lease is renewed by acknowledged pings (every T/3) and nobody else leads meanwhile.
  await sleep(2 * SESSION_MS);
  assert.deepEqual(g.leaders(), ['q0']);
  assert.ok(g.of('q0', 'lead').length >= 4, `${g.of('q0', 'lead').length} lead events`);

  for (let k = 0; k < 3; k++) {
    const victim = g.ps[k]!;
    const heir = g.ps[k + 1]!;
    assert.ok(victim.isLeader(), `${victim.name} leads before crash ${k + 1}`);
    const leaseLeft = (g.of(victim.name, 'lead').at(-1) as { until: number }).until;
    const at = wallNowMs();
    victim.crash();
    assert.equal(victim.isLeader(), false);
    await until(() => g.leaders().length > 0, FAILOVER_BOUND_MS, `no leader after crash ${k + 1}`);
    assert.deepEqual(g.leaders(), [heir.name]);

    const crashed = g.of(victim.name, 'crashed');
    assert.equal(crashed.length, 1);
    const mine = leadIntervals(g.events, wallNowMs()).filter((i) => i.who === victim.name);
    assert.equal(Math.max(...mine.map((i) => i.to)), crashed[0]!.t, 'its belief ended at its crash');
    const first = g.of(heir.name, 'lead')[0]!;
    const failover = first.t - at;
    // The heir leads only once the server expired the crashed one's session: after its lease.
    assert.ok(first.t >= leaseLeft, `${heir.name} led ${(leaseLeft - first.t).toFixed(1)} ms into the lease`);
    assert.ok(failover <= FAILOVER_BOUND_MS, `failover ${failover.toFixed(0)} ms`);
    t.diagnostic(
      `crash ${k + 1}: ${victim.name} → ${heir.name} leads after ${failover.toFixed(0)} ms ` +
        `(the crashed one's lease had ${(leaseLeft - at).toFixed(0)} ms left; session ${SESSION_MS} ms)`,
    );
    await sleep(SESSION_MS / 2);
  }

  const end = wallNowMs();
  await g.stopAll();
  const found = overlaps(leadIntervals(g.events, end));
  assert.deepEqual(found, [], JSON.stringify(found));
  // Nothing from a crashed participant after its crash, and no errors from the others.
  for (const p of g.ps.slice(0, 3)) {
    const crashedAt = g.of(p.name, 'crashed')[0]!.t;
    assert.deepEqual(
      g.events.filter((e) => e.participant === p.name && e.t > crashedAt),
      [],
    );
  }
  assert.deepEqual(
    g.events.filter((e) => e.ev === 'error'),
    [],
  );
  assert.deepEqual(g.leaders(), []);
});

test('a leader paused past its lease stops believing it leads before the next one leads, and stays out', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const g = new Group('/pb-election/recipe-test/pause');
  for (let i = 0; i < 3; i++) await g.join(`r${i}`, SERVERS[i % SERVERS.length]!);
  await until(() => g.leaders().length > 0, FAILOVER_BOUND_MS, 'nobody leads');
  const [leader, heir] = [g.ps[0]!, g.ps[1]!];
  assert.deepEqual(g.leaders(), [leader.name]);

  let leaderBelievedAtHeirsLead: boolean | undefined;
  g.onEvent = (e) => {
    if (e.participant === heir.name && e.ev === 'lead' && leaderBelievedAtHeirsLead === undefined)
      leaderBelievedAtHeirsLead = leader.isLeader();
  };
  const pauseMs = SESSION_MS + 2_000;
  const at = wallNowMs();
  leader.pause(pauseMs);
  assert.equal(g.of(leader.name, 'paused').length, 1);
  await until(() => heir.isLeader(), FAILOVER_BOUND_MS, `${heir.name} does not lead`);
  assert.equal(leader.isLeader(), false);
  assert.equal(leaderBelievedAtHeirsLead, false);

  const lost = g.of(leader.name, 'lead-lost');
  assert.equal(lost.length, 1);
  const lostAt = lost[0]!.t;
  const heirFrom = g.of(heir.name, 'lead')[0]!.t;
  assert.ok(lostAt < heirFrom, `lead-lost at +${lostAt - at} ms, the heir leads at +${heirFrom - at} ms`);
  assert.ok(lostAt < at + pauseMs, 'the lease ran out during the pause');
  assert.match((lost[0] as { why: string }).why, /lease ran out/);
  t.diagnostic(
    `paused at 0: its lease ran out at +${(lostAt - at).toFixed(0)} ms, ` +
      `${heir.name} leads at +${(heirFrom - at).toFixed(0)} ms (session ${SESSION_MS} ms)`,
  );

  // After the pause it finds its session gone and does not lead again.
  await until(() => g.of(leader.name, 'error').length > 0, pauseMs + 2_000, 'no error after the pause');
  assert.match((g.of(leader.name, 'error')[0] as { message: string }).message, /session lost/);
  await sleep(SESSION_MS);
  assert.equal(leader.isLeader(), false);
  assert.equal(g.of(leader.name, 'lead').filter((e) => e.t > lostAt).length, 0);
  assert.deepEqual(g.leaders(), [heir.name]);

  const end = wallNowMs();
  await g.stopAll();
  const found = overlaps(leadIntervals(g.events, end));
  assert.deepEqual(found, [], JSON.stringify(found));
});

test('stop() ends every JVM of the ensemble', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  await members.stop();
  for (const pid of pids) {
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    assert.equal(alive, false, `pid ${pid} still runs`);
  }
});
