// Each target's member plan where a container runtime places it. Docker (per-pair routes): every
// member on its holder's address with the target's own ports, a peer in another data center at
// the relay's address for that ordered pair, its files among the plan's. Swarm (by-source routes):
// peer ports of its own per member, peers by their names on the overlay, those abroad pointed at
// the relay's one address in /etc/hosts, each route taking only its source's connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology } from '../../src/topology/topology.js';
import { pairAddressPlan } from '../../src/runtime/docker/bridge-addresses.js';
import { planZkMembers } from '../../src/targets/zookeeper/zk-members.js';
import { ZK_MEMBERS } from '../../src/targets/zookeeper/zk-member-kind.js';
import { planEtcd } from '../../src/targets/etcd/etcd-plan.js';
import { ETCD_MEMBERS } from '../../src/targets/etcd/etcd-member-kind.js';
import { planPoleMembers } from '../../src/targets/pole/pole-members.js';
import { POLE_MEMBERS } from '../../src/targets/pole/pole-member-kind.js';
import { byIndexPorts } from '../../src/runtime/member-ports.js';
import type { MemberKind, MemberShapePlan, Placement } from '../../src/targets/member-plan.js';
import type { RelayedNode, RouteListen } from '../../src/shaping/shaper.js';
import type { Dial } from '../../src/shaping/shaper.js';
import type { Address, NodeId } from '../../src/vocabulary/names.js';

/**
 * The relay's dial table for a plan that keeps the members' ports, as startNodeRelay makes it: the
 * route's listen address across data centers (the relay's advertised one where it names none),
 * the member's own address inside one.
 */
function relayDial(
  members: readonly RelayedNode[],
  listenAt: (from: NodeId, to: NodeId, port: string, target: Address) => RouteListen,
  relayAddress: string,
): Dial {
  return (from, to, port = 'peer') => {
    const m = members.find((x) => x.id === to)!;
    const target = port === 'peer' ? m.peer : m.more![port]!;
    if (t.node(from).datacenter === t.node(to).datacenter) return target;
    const at = listenAt(from, to, port, target);
    return { host: at.host ?? relayAddress, port: at.port };
  };
}

interface Shaped {
  members: readonly RelayedNode[];
  plan: MemberShapePlan;
  listenAt: (from: NodeId, to: NodeId, port: string, target: Address) => RouteListen;
}

/** Where the docker runtime places members: holders' addresses, customary ports, per-pair routes. */
function dockerPlacement(kind: MemberKind, shaped: { last?: Shaped }): Placement {
  const pairs = pairAddressPlan(t, SUBNET);
  const listenAt = (from: NodeId, to: NodeId, _port: string, at: Address): RouteListen => ({
    host: pairs.hostOf(from, to),
    port: at.port,
  });
  return {
    topology: t,
    seed: 1,
    fsync: true,
    onThisMachine: false,
    portsOf: () => kind.ports,
    bindHost: '0.0.0.0',
    hostOf: (id) => addresses.get(id)!,
    routes: 'per-pair',
    shape: (members, plan) => {
      shaped.last = { members, plan, listenAt };
      return Promise.resolve(relayDial(members, listenAt, 'relay-unused'));
    },
    configPath: (name) => `/config/${name}`,
    dataDir: () => '/data',
  };
}

/** Where the swarm runtime places members: names on the overlay, ports by index, one relay address. */
function swarmPlacement(kind: MemberKind, shaped: { last?: Shaped }, relay: string): Placement {
  const listenAt = (from: NodeId, _to: NodeId, _port: string, at: Address): RouteListen => ({
    port: at.port,
    acceptFrom: names.get(from)!,
  });
  return {
    topology: t,
    seed: 1,
    fsync: true,
    onThisMachine: false,
    portsOf: byIndexPorts(t, kind),
    bindHost: '0.0.0.0',
    hostOf: (id) => names.get(id)!,
    routes: 'by-source',
    shape: (members, plan) => {
      shaped.last = { members, plan, listenAt };
      return Promise.resolve(relayDial(members, listenAt, relay));
    },
    configPath: (name) => `/config/${name}`,
    dataDir: () => '/data',
  };
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const t = loadTopology(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'));
const SUBNET = '10.231.9.0/24';
const addresses = new Map(t.nodes.map((n) => [n.id, `10.231.9.${10 + n.sid}`]));
const names = new Map(t.nodes.map((n) => [n.id, `pb-run-${n.id}`]));
const RELAY = '10.0.5.9';

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
  const pairs = pairAddressPlan(t, SUBNET);
  const shaped: { last?: Shaped } = {};
  const plan = await planZkMembers(dockerPlacement(ZK_MEMBERS, shaped));
  assert.equal(shaped.last?.plan.direction, 'both', 'either side of a pair may dial the election port');
  assert.equal(shaped.last?.plan.keepPorts, true, 'the server lines name the real ports');
  for (const m of shaped.last!.members) {
    assert.deepEqual(m.peer, { host: addresses.get(m.id), port: 2888 });
    assert.deepEqual(m.more?.election, { host: addresses.get(m.id), port: 3888 });
  }
  const files = new Map(plan.files.map((f) => [f.name, f.text]));
  for (const n of t.nodes) for (const ext of ['cfg', 'hosts']) assert.ok(files.has(`${n.id}.${ext}`));
  assert.ok(files.has('log4j.properties'));
  const me = t.nodes[0]!;
  const cfg = files.get(`${me.id}.cfg`)!;
  assert.match(cfg, new RegExp(`^clientPortAddress=${addresses.get(me.id)!.replace(/\./g, '\\.')}$`, 'm'));
  assert.match(cfg, /^clientPort=2181$/m);
  assert.match(cfg, /^dataDir=\/data$/m);
  for (const n of t.nodes) assert.match(cfg, new RegExp(`^server\\.${n.sid}=pb-m${n.sid}:2888:3888$`, 'm'));
  const hosts = new Map(
    files
      .get(`${me.id}.hosts`)!
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
  const member = plan.members.find((m) => m.id === me.id)!;
  assert.deepEqual(member.dataFiles, [{ name: 'myid', text: `${me.sid}\n` }]);
  assert.equal(member.program, 'java', "the image's java");
  assert.ok(member.args.includes(`-Djdk.net.hosts.file=/config/${me.id}.hosts`));
  assert.ok(
    member.args.includes(
      '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar',
    ),
  );
  assert.equal(member.args.at(-1), `/config/${me.id}.cfg`);
  assert.equal(member.etcHosts, undefined, 'the JVM resolves from its own file');
  // The initial leader first with a quorum of lower sids, the rest once it serves.
  const leader = t.cluster.initialLeader;
  if (leader !== undefined && plan.startOrder.then.length > 0) assert.equal(plan.startOrder.after, leader);
  assert.deepEqual(
    [...plan.startOrder.first, ...plan.startOrder.then].sort(),
    t.nodes.map((n) => n.id).sort(),
  );
});

test('a ZooKeeper member on the swarm: ports of its own, peers by name, those abroad at the relay by /etc/hosts', async () => {
  const shaped: { last?: Shaped } = {};
  const plan = await planZkMembers(swarmPlacement(ZK_MEMBERS, shaped, RELAY));
  const ports = t.nodes.map((n) => byIndexPorts(t, ZK_MEMBERS)(n.id));
  const all = ports.flatMap((p) => [p.quorum!, p.election!]);
  assert.equal(new Set(all).size, all.length, 'no two members share a peer port');
  for (const [i, n] of t.nodes.entries()) {
    assert.deepEqual(ports[i], { client: 2181, quorum: 2888 + i, election: 3888 + i });
    const m = shaped.last!.members.find((x) => x.id === n.id)!;
    assert.deepEqual(m.peer, { host: names.get(n.id), port: ports[i]!.quorum });
    assert.deepEqual(m.more?.election, { host: names.get(n.id), port: ports[i]!.election });
  }
  const files = new Map(plan.files.map((f) => [f.name, f.text]));
  assert.ok(![...files.keys()].some((f) => f.endsWith('.hosts')), 'no hosts file: the container resolves');
  for (const [i, me] of t.nodes.entries()) {
    const cfg = files.get(`${me.id}.cfg`)!;
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
    assert.ok(!member.args.some((a) => a.startsWith('-Djdk.net.hosts.file')));
    assert.ok(member.args.includes('-Dsun.net.inetaddr.ttl=1'), 'a restarted peer is looked up again');
    // The leader's address in "connected to leader" lines is the relay's or a task's: its port says who.
    const leader = t.nodes.at(-1)!;
    const events = member.translate(
      `2026-11-26T21:00:00.000Z INFO Learner Successfully connected to leader, using address: ${names.get(leader.id)}/10.0.5.77:${ports.at(-1)!.quorum}`,
    );
    const following = events.find((e) => e.ev === 'following');
    assert.equal(following?.ev === 'following' ? following.leader : undefined, leader.id, `${me.id} (#${i})`);
  }
});

test('an etcd member on the swarm: a peer port of its own, peer URLs by name, only peers abroad at the relay', async () => {
  const shaped: { last?: Shaped } = {};
  const plan = await planEtcd(swarmPlacement(ETCD_MEMBERS, shaped, RELAY));
  const portsOf = byIndexPorts(t, ETCD_MEMBERS);
  const cluster = t.nodes.map((n, i) => `${n.id}=http://${names.get(n.id)}:${2380 + i}`).join(',');
  for (const [i, me] of t.nodes.entries()) {
    assert.deepEqual(portsOf(me.id), { client: 2379, peer: 2380 + i });
    const m = plan.members.find((x) => x.id === me.id)!;
    assert.equal(m.program, 'etcd');
    assert.ok(m.args.includes(`--initial-cluster=${cluster}`), `${me.id}: the same cluster for all`);
    assert.ok(m.args.includes(`--listen-peer-urls=http://0.0.0.0:${2380 + i}`));
    assert.ok(m.args.includes(`--initial-advertise-peer-urls=http://${names.get(me.id)}:${2380 + i}`));
    const abroad = t.nodes.filter((n) => n.datacenter !== me.datacenter);
    assert.deepEqual(
      m.etcHosts,
      abroad.map((n) => `${RELAY} ${names.get(n.id)}`),
    );
  }
  // Every route abroad on the peer's own port at the relay's address, for its source alone.
  const [from, to] = [t.nodes[0]!, t.nodes.find((n) => n.datacenter !== t.nodes[0]!.datacenter)!];
  const toM = shaped.last!.members.find((x) => x.id === to.id)!;
  assert.deepEqual(shaped.last!.listenAt(from.id, to.id, 'peer', toM.peer), {
    port: toM.peer.port,
    acceptFrom: names.get(from.id),
  });
  assert.ok(plan.afterStart, 'leadership is handed to the initial leader once all have started');
});

test('an etcd member in a docker container: the customary ports, every peer name in its /etc/hosts', async () => {
  const pairs = pairAddressPlan(t, SUBNET);
  const plan = await planEtcd(dockerPlacement(ETCD_MEMBERS, {}));
  const me = t.nodes[0]!;
  const m = plan.members.find((x) => x.id === me.id)!;
  assert.ok(m.args.includes('--listen-peer-urls=http://0.0.0.0:2380'));
  assert.deepEqual(
    m.etcHosts,
    t.nodes.map(
      (n) =>
        `${n.datacenter === me.datacenter ? addresses.get(n.id) : pairs.hostOf(me.id, n.id)} pb-e${n.sid}`,
    ),
  );
});

test('the POLE node on the swarm keeps its customary ports: the relay picks its routes, so none need moving', async () => {
  const shaped: { last?: Shaped } = {};
  const plan = await planPoleMembers(swarmPlacement(POLE_MEMBERS, shaped, RELAY));
  assert.equal(shaped.last?.plan.keepPorts, false);
  for (const n of t.nodes)
    assert.deepEqual(byIndexPorts(t, POLE_MEMBERS)(n.id), { peer: 7000, client: 7001, http: 7002 });
  const config = JSON.parse(plan.files.find((f) => f.name === `${t.nodes[0]!.id}.json`)!.text) as {
    listen: { host: string; peerPort: number };
    dataDir: string;
  };
  assert.deepEqual([config.listen.host, config.listen.peerPort, config.dataDir], ['0.0.0.0', 7000, '/data']);
  const member = plan.members[0]!;
  assert.deepEqual(member.args, ['node', '--config', `/config/${t.nodes[0]!.id}.json`]);
});

test('ports by index refuse a peer port moved onto a client port', () => {
  const kind: MemberKind = { ...ETCD_MEMBERS, ports: { client: 2381, peer: 2380 } };
  assert.throws(() => byIndexPorts(t, kind), /p\d's peer port 2381 is its client or status port/);
});
