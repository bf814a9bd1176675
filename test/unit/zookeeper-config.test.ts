// The ZooKeeper target's files and start order, from a topology: exact text, so that a change to
// what the members are told is a visible change here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadTopology } from '../../src/topology/topology.js';
import {
  zkMemberFiles as planZkMembers,
  startOrder,
  type ZkSlot,
} from '../../src/targets/zookeeper/zk-members.js';
import { pairHost } from '../../src/targets/pair-host.js';
import type { Dial } from '../../src/shaping/shaper.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const t = loadTopology(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'));
// Fixed ports: member k (sid k) has client 2000+k, quorum 3000+k, election 4000+k.
const slots: ZkSlot[] = t.nodes.map((n) => ({
  id: n.id,
  sid: n.sid,
  clientPort: 2000 + n.sid,
  quorumPort: 3000 + n.sid,
  electionPort: 4000 + n.sid,
}));

const portOf = (id: string, port = 'peer'): number => {
  const s = slots.find((x) => x.id === id)!;
  return port === 'peer' ? s.quorumPort : s.electionPort;
};
// What the relay's dial table says for this target: another data center at the pair's own
// loopback address, the same data center at 127.0.0.1; the member's own port numbers either way.
const relayed: Dial = (from, to, port = 'peer') => ({
  host: t.node(from).datacenter === t.node(to).datacenter ? '127.0.0.1' : pairHost(t, from, to),
  port: portOf(to, port),
});
const direct: Dial = (_from, to, port = 'peer') => ({ host: '127.0.0.1', port: portOf(to, port) });

test('zoo.cfg of a member of a 3-DC topology: timers, ports, a static ensemble by host names', () => {
  assert.deepEqual(
    t.nodes.map((n) => `${n.id}:${n.sid}`),
    ['p1:1', 'p2:2', 'p3:3', 'p4:4', 'p5:5'],
  );
  const plan = planZkMembers(t, slots, { dial: relayed, dirOf: (id) => `/data/${id}`, fsync: true });
  const p4 = plan.find((m) => m.id === 'p4')!;
  assert.equal(
    p4.zooCfg,
    [
      '# pole-bench: p4 (myid 4) of paper-3dc-deployment-1',
      'tickTime=100',
      'initLimit=10',
      'syncLimit=5',
      'dataDir=/data/p4',
      'clientPort=2004',
      'clientPortAddress=127.0.0.1',
      'maxClientCnxns=0',
      'forceSync=yes',
      'reconfigEnabled=false',
      'standaloneEnabled=false',
      'admin.enableServer=false',
      '4lw.commands.whitelist=mntr,srvr,ruok',
      'autopurge.purgeInterval=0',
      'server.1=pb-m1:3001:4001',
      'server.2=pb-m2:3002:4002',
      'server.3=pb-m3:3003:4003',
      'server.4=pb-m4:3004:4004',
      'server.5=pb-m5:3005:4005',
      '',
    ].join('\n'),
  );
  // p4 is in caltech with p5; fnal's p1 and slac's p2, p3 are reached through relay routes of
  // their own, p4 → peer, one loopback address per ordered pair (nodes indexed 0..4 by sid).
  assert.equal(
    p4.hosts,
    [
      '127.0.0.1 localhost',
      '127.13.10.1 pb-m1',
      '127.13.11.1 pb-m2',
      '127.13.12.1 pb-m3',
      '127.0.0.1 pb-m4',
      '127.0.0.1 pb-m5',
      '',
    ].join('\n'),
  );
  assert.equal(p4.quorumAddresses.get('127.13.10.1:3001'), 'p1');
  assert.equal(p4.quorumAddresses.get('127.0.0.1:3005'), 'p5');
  // Every member's zoo.cfg lists the same lines; only its own dataDir, ports and header differ.
  const serverLines = (cfg: string): string[] => cfg.split('\n').filter((l) => l.startsWith('server.'));
  for (const m of plan) assert.deepEqual(serverLines(m.zooCfg), serverLines(p4.zooCfg), m.id);
  // The other side of the same pair uses a different address: p1 reaches p4 at 127.10.13.1.
  assert.match(plan.find((m) => m.id === 'p1')!.hosts, /^127\.10\.13\.1 pb-m4$/m);
});

test('a shaping that moves a peer to a port of its own is refused: the server lines name ports', () => {
  const moved: Dial = (from, to, port) => ({ ...relayed(from, to, port), port: 40_000 });
  assert.throws(
    () => planZkMembers(t, slots, { dial: moved, dirOf: (id) => `/d/${id}`, fsync: true }),
    /moved p1's way to p2 to ports of its own/,
  );
});

test('without shaping every member is reached on 127.0.0.1; fsync off says forceSync=no', () => {
  const plan = planZkMembers(t, slots, { dial: direct, dirOf: (id) => `/d/${id}`, fsync: false });
  for (const m of plan) {
    assert.match(m.zooCfg, /^forceSync=no$/m);
    for (const line of m.hosts.trim().split('\n')) assert.match(line, /^127\.0\.0\.1 /, `${m.id}: ${line}`);
  }
});

test('start order: the initial leader with a quorum of lower sids first, the rest once it serves', () => {
  const members = [1, 2, 3, 4, 5].map((sid) => ({ id: `p${sid}`, sid }));
  assert.deepEqual(startOrder(members, 'p5'), { first: ['p5', 'p1', 'p2'], then: ['p3', 'p4'] });
  assert.deepEqual(startOrder(members, 'p3'), { first: ['p3', 'p1', 'p2'], then: ['p4', 'p5'] });
  assert.deepEqual(startOrder(members, undefined), { first: ['p1', 'p2', 'p3', 'p4', 'p5'], then: [] });
  // p2 has one member of lower sid; a quorum of five needs two more: ZooKeeper cannot be steered.
  assert.throws(() => startOrder(members, 'p2'), /p2 \(sid 2\) needs 2 members of lower sid/);
});
