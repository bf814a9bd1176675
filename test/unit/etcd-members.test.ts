// etcd's flags and hosts files for a three-data-center topology, as exact text (targets/etcd/
// etcd-members.ts): every member gets the same --initial-cluster of named peer URLs, and resolves
// the names of members in other data centers to the relay's address for that pair.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  etcdMemberId,
  etcdTimers,
  planEtcdMembers,
  type EtcdSlot,
} from '../../src/targets/etcd/etcd-members.js';
import { pairHost } from '../../src/targets/pair-host.js';
import { parseTopology } from '../../src/topology/topology.js';
import { ROOT } from '../support/run-cli.js';

const t = parseTopology(
  'paper-3dc-deployment-1.yaml',
  readFileSync(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'), 'utf8'),
);
// caltech = {p4, p5}, slac = {p2, p3}, fnal = {p1}; sids 1..5 in the order of t.nodes.
const slots: EtcdSlot[] = t.nodes.map((n, i) => ({
  id: n.id,
  sid: n.sid,
  clientPort: 2000 + i,
  peerPort: 3000 + i,
}));
const dcOf = new Map(t.nodes.map((n) => [n.id, n.datacenter]));

test('the topology timers in etcd terms: the election timeout is syncLimit ticks, the heartbeat half a tick', () => {
  assert.deepEqual(etcdTimers(t), { heartbeatMs: 50, electionMs: 500 });
});

test("a member's id is etcd's: SHA-1 of its peer URLs and the cluster token (checked against etcd 3.4.23)", () => {
  // etcd 3.4.23 started with --initial-advertise-peer-urls http://pb-e1:23801 and token "tok"
  // logged itself as 3348e619458c3785.
  assert.equal(etcdMemberId(['http://pb-e1:23801'], 'tok'), '3348e619458c3785');
});

test('every member gets the same initial cluster; peers in other data centers resolve to the relay', () => {
  const plan = planEtcdMembers(t, slots, {
    // As the relay's plan answers: a peer in the same data center directly, else the pair's address.
    dial: (from, to) => ({
      host: dcOf.get(from) === dcOf.get(to) ? '127.0.0.1' : pairHost(t, from, to),
      port: slots.find((s) => s.id === to)!.peerPort,
    }),
    dirOf: (id) => `/tmp/run/${id}`,
    token: 'pole-bench-paper-3dc-deployment-1-7',
    hostOf: () => '127.0.0.1',
    bindHost: '127.0.0.1',
  });
  const p4 = plan.find((m) => m.id === 'p4')!;
  const i4 = t.nodes.findIndex((n) => n.id === 'p4');
  const sid = (id: string): number => t.nodes.find((n) => n.id === id)!.sid;
  const cluster = slots.map((s) => `${s.id}=http://pb-e${s.sid}:${s.peerPort}`).join(',');
  assert.deepEqual(p4.args, [
    '--name=p4',
    '--data-dir=/tmp/run/p4',
    `--listen-peer-urls=http://127.0.0.1:${3000 + i4}`,
    `--initial-advertise-peer-urls=http://pb-e${sid('p4')}:${3000 + i4}`,
    `--listen-client-urls=http://127.0.0.1:${2000 + i4}`,
    `--advertise-client-urls=http://127.0.0.1:${2000 + i4}`,
    `--initial-cluster=${cluster}`,
    '--initial-cluster-token=pole-bench-paper-3dc-deployment-1-7',
    '--initial-cluster-state=new',
    '--heartbeat-interval=50',
    '--election-timeout=500',
    '--logger=zap',
    '--log-outputs=stdout',
    '--log-level=info',
  ]);
  // Its own data center (p5) and itself on 127.0.0.1; slac and fnal at the relay's pair addresses.
  assert.deepEqual(
    p4.etcHosts,
    t.nodes.map(
      (n) => `${dcOf.get(n.id) === 'caltech' ? '127.0.0.1' : pairHost(t, 'p4', n.id)} pb-e${n.sid}`,
    ),
  );
  // Ids differ per member and are what etcd will call them.
  assert.equal(new Set(plan.map((m) => m.memberId)).size, 5);
  assert.equal(
    p4.memberId,
    etcdMemberId([`http://pb-e${sid('p4')}:${3000 + i4}`], 'pole-bench-paper-3dc-deployment-1-7'),
  );
});

test('a shaping that moves a peer to another port is refused: the peer URLs name the real ports', () => {
  assert.throws(
    () =>
      planEtcdMembers(t, slots, {
        dial: () => ({ host: '127.0.0.1', port: 9 }),
        dirOf: (id) => `/tmp/run/${id}`,
        token: 'x',
        hostOf: () => '127.0.0.1',
        bindHost: '127.0.0.1',
      }),
    /moved p\d's way to p\d to a port of its own/,
  );
});

test('in containers: every member on etcd ports of its own address, listening on all, its peers abroad at the relay', () => {
  const address = new Map(t.nodes.map((n) => [n.id, `10.231.7.${10 + n.sid}`]));
  const ports = t.nodes.map((n) => ({ id: n.id, sid: n.sid, clientPort: 2379, peerPort: 2380 }));
  const plan = planEtcdMembers(t, ports, {
    dial: (from, to) => ({
      host: dcOf.get(from) === dcOf.get(to) ? address.get(to)! : `10.231.7.${130 + t.node(to).sid}`,
      port: 2380,
    }),
    dirOf: () => '/data',
    token: 'tok',
    hostOf: (id) => address.get(id)!,
    bindHost: '0.0.0.0',
  });
  const p1 = plan.find((m) => m.id === 'p1')!;
  const sid1 = t.node('p1').sid;
  assert.deepEqual(p1.args.slice(0, 6), [
    '--name=p1',
    '--data-dir=/data',
    '--listen-peer-urls=http://0.0.0.0:2380',
    `--initial-advertise-peer-urls=http://pb-e${sid1}:2380`,
    '--listen-client-urls=http://0.0.0.0:2379',
    `--advertise-client-urls=http://10.231.7.${10 + sid1}:2379`,
  ]);
  // p1 is alone in fnal: itself at its own address, everyone else at the relay's.
  assert.deepEqual(
    p1.etcHosts,
    t.nodes.map((n) => `10.231.7.${n.id === 'p1' ? 10 + n.sid : 130 + n.sid} pb-e${n.sid}`),
  );
  // The same cluster and ids as anywhere else: ids come from the names and ports alone.
  assert.equal(p1.memberId, etcdMemberId([`http://pb-e${sid1}:2380`], 'tok'));
});
