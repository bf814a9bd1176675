// The ZooKeeper target planned as containers. Docker runtime (per-pair routes): every member on
// its holder's address with ZooKeeper's own ports, a peer in another data center at the relay's
// address for that ordered pair, and the files it reads (zoo.cfg, hosts file, myid, log4j) in the
// config dir. Swarm (by-source routes): ports of its own per member, peers by their names on the
// overlay, those abroad pointed at the relay's one address in /etc/hosts, each route taking only
// its source's connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology } from '../../src/topology/topology.js';
import { pairAddressPlan } from '../../src/runtime/docker/bridge-addresses.js';
import {
  planZkContainers,
  zkPortsByIndex,
  ZK_CONTAINER_PORTS,
} from '../../src/targets/zookeeper/zk-container-ensemble.js';
import type { RelayedNode } from '../../src/shaping/relay/relay-shaping.js';
import type { Dial, ShapePlan } from '../../src/shaping/shaper.js';

/**
 * The relay's dial table for a plan that keeps the members' ports, as startNodeRelay makes it: the
 * route's listen address across data centers (the relay's advertised one where it names none),
 * the member's own address inside one.
 */
function relayDial(members: readonly RelayedNode[], p: ShapePlan, relayAddress: string): Dial {
  return (from, to, port = 'peer') => {
    const m = members.find((x) => x.id === to)!;
    const target = port === 'peer' ? m.peer : m.more![port]!;
    if (t.node(from).datacenter === t.node(to).datacenter) return target;
    const at = p.listenAt!(from, to, port, target);
    return { host: at.host ?? relayAddress, port: at.port };
  };
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const t = loadTopology(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'));
const SUBNET = '10.231.9.0/24';
const addresses = new Map(t.nodes.map((n) => [n.id, `10.231.9.${10 + n.sid}`]));

test('relay addresses: one per ordered pair of members in different data centers, in the upper half', () => {
  const pairs = pairAddressPlan(t, SUBNET);
  const all = pairs.all();
  const crossPairs = t.nodes.flatMap((a) =>
    t.nodes.filter((b) => b.datacenter !== a.datacenter).map((b) => [a.id, b.id] as const),
  );
  assert.equal(all.length, crossPairs.length);
  assert.equal(new Set(all).size, all.length, 'no address is shared');
  for (const a of all) {
    const last = Number(a.split('.')[3]);
    assert.ok(a.startsWith('10.231.9.') && last >= 128 && last <= 253, a);
  }
  const [from, to] = crossPairs[0]!;
  assert.notEqual(pairs.hostOf(from, to), pairs.hostOf(to, from), 'each direction its own');
  const sameDc = t.nodes.find((n) => n.id !== from && n.datacenter === t.node(from).datacenter);
  if (sameDc) assert.throws(() => pairs.hostOf(from, sameDc.id), /same data center/);
});

test('a ZooKeeper member in a container: its own address and ports, other data centers at their pair address', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-zk-containers-'));
  try {
    const pairs = pairAddressPlan(t, SUBNET);
    let shaped: { members: readonly RelayedNode[]; plan: ShapePlan } | undefined;
    const plan = await planZkContainers({
      topology: t,
      seed: 1,
      fsync: true,
      addresses,
      configDir: dir,
      peerRoutes: { kind: 'per-pair', host: (from, to) => pairs.hostOf(from, to) },
      shape: (members, p) => {
        shaped = { members, plan: p };
        return Promise.resolve(relayDial(members, p, 'relay-unused'));
      },
    });
    assert.equal(plan.image, 'zookeeper');
    assert.equal(plan.clientPort, ZK_CONTAINER_PORTS.client);
    assert.equal(shaped?.plan.direction, 'both', 'either side of a pair may dial the election port');
    for (const m of shaped!.members) {
      assert.deepEqual(m.peer, { host: addresses.get(m.id), port: 2888 });
      assert.deepEqual(m.more?.election, { host: addresses.get(m.id), port: 3888 });
    }
    const files = (await readdir(dir)).sort();
    for (const n of t.nodes)
      for (const ext of ['cfg', 'hosts', 'myid']) assert.ok(files.includes(`${n.id}.${ext}`));
    assert.ok(files.includes('log4j.properties'));
    const me = t.nodes[0]!;
    const cfg = await readFile(join(dir, `${me.id}.cfg`), 'utf8');
    assert.match(cfg, new RegExp(`^clientPortAddress=${addresses.get(me.id)!.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(cfg, /^clientPort=2181$/m);
    assert.match(cfg, /^dataDir=\/data$/m);
    for (const n of t.nodes) assert.match(cfg, new RegExp(`^server\\.${n.sid}=pb-m${n.sid}:2888:3888$`, 'm'));
    const hosts = new Map(
      (await readFile(join(dir, `${me.id}.hosts`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string])
        .map(([ip, name]) => [name, ip]),
    );
    for (const n of t.nodes) {
      const want =
        n.id === me.id
          ? addresses.get(n.id)
          : n.datacenter === me.datacenter
            ? addresses.get(n.id)
            : pairs.hostOf(me.id, n.id);
      assert.equal(hosts.get(`pb-m${n.sid}`), want, `${me.id} reaches ${n.id}`);
    }
    assert.equal(await readFile(join(dir, `${me.id}.myid`), 'utf8'), `${me.sid}\n`);
    const member = plan.members.find((m) => m.id === me.id)!;
    assert.deepEqual(member.cmd.slice(0, 2), ['sh', '-c']);
    assert.ok(member.cmd.includes(`-Djdk.net.hosts.file=/config/${me.id}.hosts`));
    assert.equal(member.cmd.at(-1), `/config/${me.id}.cfg`);
    // The initial leader first with a quorum of lower sids, the rest once it serves.
    const leader = t.cluster.initialLeader;
    if (leader !== undefined && plan.startOrder.then.length > 0) assert.equal(plan.startOrder.after, leader);
    assert.deepEqual(
      [...plan.startOrder.first, ...plan.startOrder.then].sort(),
      t.nodes.map((n) => n.id).sort(),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a ZooKeeper member on the swarm: ports of its own, peers by name, those abroad at the relay by /etc/hosts', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-zk-swarm-'));
  const names = new Map(t.nodes.map((n) => [n.id, `pb-run-${n.id}`]));
  const RELAY = '10.0.5.9';
  try {
    let shaped: { members: readonly RelayedNode[]; plan: ShapePlan } | undefined;
    const plan = await planZkContainers({
      topology: t,
      seed: 1,
      fsync: true,
      addresses: names,
      configDir: dir,
      peerRoutes: { kind: 'by-source' },
      shape: (members, p) => {
        shaped = { members, plan: p };
        return Promise.resolve(relayDial(members, p, RELAY));
      },
    });
    const ports = t.nodes.map((_, i) => zkPortsByIndex(i));
    const all = ports.flatMap((p) => [p.quorum, p.election]);
    assert.equal(new Set(all).size, all.length, 'no two members share a peer port');
    for (const [i, n] of t.nodes.entries()) {
      const m = shaped!.members.find((x) => x.id === n.id)!;
      assert.deepEqual(m.peer, { host: names.get(n.id), port: ports[i]!.quorum });
      assert.deepEqual(m.more?.election, { host: names.get(n.id), port: ports[i]!.election });
    }
    // Every route abroad listens on the peer's own port on the relay's address, for its source alone.
    const [from, to] = [t.nodes[0]!, t.nodes.find((n) => n.datacenter !== t.nodes[0]!.datacenter)!];
    const toM = shaped!.members.find((x) => x.id === to.id)!;
    assert.deepEqual(shaped!.plan.listenAt!(from.id, to.id, 'election', toM.more!.election!), {
      port: toM.more!.election!.port,
      acceptFrom: names.get(from.id),
    });
    const files = (await readdir(dir)).sort();
    assert.ok(!files.some((f) => f.endsWith('.hosts')), 'no hosts file: the container resolves');
    for (const [i, me] of t.nodes.entries()) {
      const cfg = await readFile(join(dir, `${me.id}.cfg`), 'utf8');
      assert.match(cfg, /^clientPortAddress=0\.0\.0\.0$/m);
      assert.match(cfg, /^clientPort=2181$/m);
      assert.match(cfg, /^quorumListenOnAllIPs=true$/m);
      for (const [j, n] of t.nodes.entries())
        assert.match(
          cfg,
          new RegExp(`^server\\.${n.sid}=${names.get(n.id)}:${ports[j]!.quorum}:${ports[j]!.election}$`, 'm'),
        );
      const member = plan.members.find((m) => m.id === me.id)!;
      const abroad = t.nodes.filter((n) => n.datacenter !== me.datacenter);
      assert.deepEqual(
        member.etcHosts,
        abroad.map((n) => `${RELAY} ${names.get(n.id)}`),
        `${me.id}: its peers abroad at the relay, none at home`,
      );
      assert.ok(!member.cmd.some((a) => a.startsWith('-Djdk.net.hosts.file')));
      assert.ok(member.cmd.includes('-Dsun.net.inetaddr.ttl=1'), 'a restarted peer is looked up again');
      // The leader's address in "connected to leader" lines is the relay's or a task's: its port says who.
      const leader = t.nodes.at(-1)!;
      const events = member.translate(
        `2026-11-26T21:00:00.000Z INFO Learner Successfully connected to leader, using address: ${names.get(leader.id)}/10.0.5.77:${ports.at(-1)!.quorum}`,
      );
      const following = events.find((e) => e.ev === 'following');
      assert.equal(
        following?.ev === 'following' ? following.leader : undefined,
        leader.id,
        `${me.id} (#${i})`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
