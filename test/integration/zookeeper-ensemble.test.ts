// A real ZooKeeper 3.8 ensemble (Debian's package, three QuorumPeerMain JVMs on loopback) started
// by the zookeeper target, driven by the harness's own client: every request it speaks, pipelining,
// watches and ephemeral nodes, a leader kill seen through ZooKeeper's own log lines, and nothing
// left running after stop().
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseTopology } from '../../src/topology/topology.js';
import { zookeeperTarget } from '../../src/targets/zookeeper/zookeeper-target.js';
import type { ProcessMembers } from '../../src/runtime/process/member-processes.js';
import { startPlannedProcesses } from '../../src/runtime/process/planned-processes.js';
import { noShaper } from '../../src/shaping/no-shaper.js';
import { zookeeperSkip } from '../support/prerequisites.js';
import type { ZkError } from '../../src/targets/zookeeper/client/zk-client.js';
import { ZkClient } from '../../src/targets/zookeeper/client/zk-client.js';
import type { WatcherEvent } from '../../src/targets/zookeeper/client/zk-protocol.js';
import { compareZxid } from '../../src/vocabulary/zxid.js';
import { checkZkAckedWrites } from '../../src/targets/zookeeper/zk-checker.js';
import { prepareZkSlots } from '../../src/targets/zookeeper/zk-write-client.js';
import { SLOTS } from '../../src/targets/slots.js';
import type { AckedWrite } from '../../src/vocabulary/names.js';

const TOPOLOGY = parseTopology(
  'zk-lan-3.yaml',
  [
    'datacenters: [{ name: lan, nodes: [p1, p2, p3] }]',
    'cluster: { initialLeader: p3, timers: { tickMs: 100, syncLimit: 5, initLimit: 10 } }',
    'workload: { rate: 100 }',
    'scenario: { duration: 10s }',
  ].join('\n'),
);

let members: ProcessMembers;
let pids: number[] = [];

before(async () => {
  if (zookeeperSkip) return; // each test below says why
  const shaper = noShaper(TOPOLOGY, 'one data center');
  members = await startPlannedProcesses(zookeeperTarget, {
    topology: TOPOLOGY,
    seed: 1,
    fsync: true,
    shape: (m, plan) => shaper.install({ members: m, plan }),
  });
  pids = ['p1', 'p2', 'p3'].map((id) => members.pid(id) as number);
  // A server closes client connections until it has synced with its leader: wait for all three.
  await Promise.all(
    ['p1', 'p2', 'p3'].map((id) => members.waitFor((e) => e.node === id && e.ev === 'serving', 30_000)),
  );
});

after(async () => {
  await members?.stop();
});

const connectTo = (id: string, o: { onWatch?: (e: WatcherEvent) => void } = {}): Promise<ZkClient> => {
  const a = members.clientAddress(id);
  return ZkClient.connect(a.host, a.port, { sessionTimeoutMs: 2_000, requestTimeoutMs: 10_000, ...o });
};

test('the initial leader leads: it started first with a quorum of lower sids', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  // The leader's own `serving` (a follower's names its leader): which comes first in the book
  // depends on two processes' pipes, not on ZooKeeper.
  const serving = await members.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 30_000);
  assert.equal(serving.node, 'p3');
  assert.equal(serving.ev === 'serving' && serving.epoch, 1);
  const following = await members.waitFor((e) => e.ev === 'following' && e.node === 'p1', 30_000);
  assert.equal(following.ev === 'following' && following.leader, 'p3');
});

test('create, getData, setData, exists, getChildren, sync and delete on a real server', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const zk = await connectTo('p1');
  try {
    const created = await zk.create('/t', Buffer.from('v0'));
    assert.equal(created.value, '/t');
    await assert.rejects(zk.create('/t', Buffer.from('again')), (e: ZkError) => e.code === 'NODEEXISTS');
    const set = await zk.setData('/t', Buffer.from('v1'));
    assert.equal(set.value.version, 1);
    assert.ok(compareZxid(set.zxid, created.zxid) > 0);
    assert.deepEqual(set.value.mzxid, set.zxid);
    await assert.rejects(zk.setData('/t', Buffer.from('x'), 0), (e: ZkError) => e.code === 'BADVERSION');
    await zk.create('/t/a', Buffer.alloc(0));
    await zk.create('/t/b', Buffer.alloc(0));
    assert.deepEqual((await zk.getChildren('/t')).sort(), ['a', 'b']);
    // Another server sees the write after a sync.
    const other = await connectTo('p2');
    try {
      await other.sync('/t');
      const got = await other.getData('/t');
      assert.equal(got.data.toString(), 'v1');
      assert.equal(got.stat.version, 1);
    } finally {
      await other.close();
    }
    await zk.delete('/t/a');
    assert.equal(await zk.exists('/t/a'), undefined);
    await assert.rejects(zk.getData('/nope'), (e: ZkError) => e.code === 'NONODE');
  } finally {
    await zk.close();
  }
});

test('a multi of creates applies all of them in one transaction, or none when one exists; slots prepared twice are kept', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const zk = await connectTo('p1');
  try {
    await zk.create('/multi', Buffer.alloc(0));
    const some = (names: string[]) =>
      names.map((n) => ({ path: `/multi/${n}`, data: Buffer.from(n), mode: 'persistent' as const }));
    const zxid = await zk.createAll(some(['a', 'b', 'c']));
    assert.deepEqual((await zk.getChildren('/multi')).sort(), ['a', 'b', 'c']);
    // One transaction: every node has the multi's zxid as its creation.
    for (const n of ['a', 'b', 'c']) {
      const got = await zk.getData(`/multi/${n}`);
      assert.equal(got.data.toString(), n);
      assert.deepEqual(got.stat.czxid, zxid);
    }
    // b exists: NODEEXISTS, and neither d nor e (before and after it) was created.
    await assert.rejects(zk.createAll(some(['d', 'b', 'e'])), (e: ZkError) => e.code === 'NODEEXISTS');
    assert.deepEqual((await zk.getChildren('/multi')).sort(), ['a', 'b', 'c']);
    // A directory's slots in one multi; prepared again (every slot there), it is kept as it is.
    await prepareZkSlots(members.clientAddress('p1'), '/multi/slots');
    const first = await zk.exists(`/multi/slots/s${SLOTS - 1}`);
    assert.ok(first, 'the last slot exists');
    assert.equal((await zk.getChildren('/multi/slots')).length, SLOTS);
    await zk.delete('/multi/slots/s7');
    await prepareZkSlots(members.clientAddress('p1'), '/multi/slots');
    assert.equal((await zk.getChildren('/multi/slots')).length, SLOTS);
    assert.deepEqual(
      (await zk.exists(`/multi/slots/s${SLOTS - 1}`))?.czxid,
      first.czxid,
      'kept, not made again',
    );
  } finally {
    await zk.close();
  }
});

test('pipelining: a thousand setData in flight at once, answered in order', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const zk = await connectTo('p2');
  try {
    await zk.create('/pipe', Buffer.alloc(0));
    const data = Buffer.alloc(1024, 1);
    const replies = Array.from({ length: 1000 }, () => zk.setData('/pipe', data));
    // All of them were sent before any reply could come back.
    assert.equal(zk.inFlight, 1000);
    const done = await Promise.all(replies);
    for (let i = 1; i < done.length; i++) {
      assert.ok(compareZxid(done[i]!.zxid, done[i - 1]!.zxid) > 0, `reply ${i} out of order`);
      assert.equal(done[i]!.value.version, i + 1);
    }
  } finally {
    await zk.close();
  }
});

test('an ephemeral sequential node goes with its session, and a watch says so', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const watched: WatcherEvent[] = [];
  const watcher = await connectTo('p1', { onWatch: (e) => watched.push(e) });
  const owner = await connectTo('p2');
  try {
    await watcher.create('/election', Buffer.alloc(0));
    const mine = await owner.create('/election/n-', Buffer.from('owner'), 'ephemeralSequential');
    assert.match(mine.value, /^\/election\/n-\d{10}$/);
    // p1 may not have applied p2's create yet: ZooKeeper orders reads per session, across servers
    // only after a sync.
    await watcher.sync('/election');
    assert.ok(await watcher.exists(mine.value, true));
    await owner.close();
    const deadline = Date.now() + 10_000;
    while (watched.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(watched[0], { type: 2, state: 3, path: mine.value }); // NodeDeleted, SyncConnected
    assert.equal(await watcher.exists(mine.value), undefined);
  } finally {
    await watcher.close();
    await owner.close();
  }
});

test('a killed leader: followers see it in the log, elect another, and serve writes again', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const zk = await connectTo('p1');
  const since = members.events.length;
  await members.kill('p3');
  const detected = await members.waitFor((e) => e.ev === 'leader-lost', 10_000, since);
  const elected = await members.waitFor((e) => e.ev === 'elected' && e.node === e.leader, 15_000, since);
  const serving = await members.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 15_000, since);
  assert.ok(elected.node === 'p1' || elected.node === 'p2');
  assert.equal(serving.node, elected.node);
  const epoch = serving.ev === 'serving' ? serving.epoch : undefined;
  assert.ok(epoch !== undefined && epoch >= 2, `epoch ${epoch}`);
  assert.ok(detected.t <= elected.t && elected.t <= serving.t);
  // The session on p1 went when p1 stopped serving to elect; a new one writes.
  await assert.rejects(zk.setData('/pipe', Buffer.from('x')));
  // The surviving follower takes clients once it has synced with the new leader.
  const follower = elected.node === 'p1' ? 'p2' : 'p1';
  await members.waitFor((e) => e.node === follower && e.ev === 'serving', 15_000, since);
  const again = await connectTo(follower);
  try {
    const r = await again.setData('/pipe', Buffer.from('after'));
    assert.equal(r.zxid.epoch, epoch);
  } finally {
    await again.close();
  }
});

test('the final read goes on through members that drop its sessions part-way, reading them again', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  // After the test above p3 is dead: p1 and p2 are the quorum, one of them leading.
  const leading = members.events.findLast((e) => e.ev === 'serving' && e.leader === undefined);
  assert.ok(leading, 'a leader serves');
  const leader = leading.node;
  const dirs = Array.from({ length: 8 }, (_, i) => `/final-read/d${i}`);
  for (const d of dirs) await prepareZkSlots(members.clientAddress(leader), d);
  const zk = await connectTo(leader);
  const acked: AckedWrite[] = [];
  try {
    const data = Buffer.alloc(16, 1);
    for (const d of dirs) {
      const writes = Array.from({ length: SLOTS }, (_, i) => zk.setData(`${d}/s${i}`, data));
      (await Promise.all(writes)).forEach((r, i) => acked.push({ path: `${d}/${i}`, zxid: r.zxid }));
    }
  } finally {
    await zk.close();
  }
  // One request at a time, so that the read lasts; the leader paused past syncLimit (5 ticks of
  // 100 ms) meanwhile: its follower stops serving and drops its clients, and so does the leader
  // once resumed and alone. A check that gave up on a dropped session failed the run here.
  const since = members.events.length;
  const check = checkZkAckedWrites({
    nodes: ['p1', 'p2'].map((id) => ({ id, address: members.clientAddress(id) })),
    acked,
    concurrency: 1,
  });
  await new Promise((r) => setTimeout(r, 200));
  members.pause(leader);
  await new Promise((r) => setTimeout(r, 2_000));
  members.resume(leader);
  const result = await check;
  const dropped = members.events
    .slice(since)
    .filter((e) => e.ev === 'leader-lost' || e.ev === 'stepped-down' || e.ev === 'election-started');
  t.diagnostic(
    `checked ${result.checked}; sessions dropped by ${[...new Set(dropped.map((e) => e.node))].join(', ')}`,
  );
  assert.ok(dropped.length > 0, 'the pause made a member stop serving while the read ran');
  assert.equal(result.checked, acked.length);
  assert.deepEqual(result.lost, []);
});

test('stop() ends every JVM of the ensemble, and none left a file behind, the killed leader included', async (t) => {
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
    // A JVM keeps its perf data in /tmp whatever TMPDIR says, and only removes it as it exits: p3
    // was SIGKILLed above.
    const perfData = join('/tmp', `hsperfdata_${userInfo().username}`, String(pid));
    assert.equal(existsSync(perfData), false, `${perfData} left behind`);
  }
});
