// `swarm up`'s flags without Docker: how hosts, data centers, the manager and the images are laid
// out, and the flag each bad input is blamed on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostRunArgs } from '../../src/runtime/swarm/local/dind-host.js';
import { dcConstraint, hostLabels } from '../../src/runtime/swarm/local/swarm-labels.js';
import {
  MAX_HOSTS,
  planSwarm,
  sameShape,
  SwarmInputError,
} from '../../src/runtime/swarm/local/swarm-plan.js';
import { DOCKER_LABELS, isOrphan } from '../../src/runtime/docker/docker-labels.js';

const shape = (p: ReturnType<typeof planSwarm>): string[] =>
  p.hosts.map((h) => `${h.name}:${h.dc}:${h.role}`);

function rejects(input: Parameters<typeof planSwarm>[0], flag: string, problem: RegExp): void {
  assert.throws(
    () => planSwarm(input),
    (e: unknown) =>
      e instanceof SwarmInputError && e.flag === flag && e.exitCode === 2 && problem.test(e.message),
  );
}

test('no flags: three hosts d1..d3, the first the one manager, every image', () => {
  const p = planSwarm({});
  assert.deepEqual(shape(p), [
    'pole-bench-swarm-1:d1:manager',
    'pole-bench-swarm-2:d2:worker',
    'pole-bench-swarm-3:d3:worker',
  ]);
  assert.deepEqual(p.images, ['node', 'zookeeper', 'etcd']);
});

test('--nodes alone names the data centers d1..dN; --dcs alone sets the number of hosts', () => {
  assert.deepEqual(planSwarm({ nodes: 2 }).dcs, ['d1', 'd2']);
  const p = planSwarm({ dcs: 'slac, fnal,caltech' });
  assert.deepEqual(shape(p), [
    'pole-bench-swarm-1:slac:manager',
    'pole-bench-swarm-2:fnal:worker',
    'pole-bench-swarm-3:caltech:worker',
  ]);
});

test('more hosts than data centers: round robin; a topology gives its data centers in order', () => {
  assert.deepEqual(
    planSwarm({ nodes: 5, dcs: 'a,b' }).hosts.map((h) => h.dc),
    ['a', 'b', 'a', 'b', 'a'],
  );
  assert.deepEqual(
    planSwarm({ topologyDcs: ['caltech', 'slac', 'fnal'] }).hosts.map((h) => h.dc),
    ['caltech', 'slac', 'fnal'],
  );
});

test('bad input is blamed on its flag', () => {
  rejects(
    { nodes: 2, dcs: 'a,b,c' },
    '--nodes',
    /2 hosts cannot hold the 3 data centers of --dcs \(a, b, c\)/,
  );
  rejects({ nodes: 0 }, '--nodes', /1 or more/);
  rejects({ nodes: MAX_HOSTS + 1 }, '--nodes', new RegExp(`at most ${MAX_HOSTS}`));
  rejects({ dcs: 'a,,b' }, '--dcs', /comma-separated/);
  rejects({ dcs: 'a,a' }, '--dcs', /"a" is named twice/);
  rejects({ dcs: 'us east' }, '--dcs', /"us east" cannot be a swarm node label/);
  rejects({ dcs: '-a' }, '--dcs', /"-a" cannot/);
  rejects({ topologyDcs: ['x', 'x'] }, '--topology', /named twice/);
  rejects({ images: 'node,postgres' }, '--images', /unknown image "postgres"/);
});

test('--images: a subset in a fixed order, or none', () => {
  assert.deepEqual(planSwarm({ images: 'zookeeper,node' }).images, ['node', 'zookeeper']);
  assert.deepEqual(planSwarm({ images: 'node' }).images, ['node']);
  assert.deepEqual(planSwarm({ images: 'none' }).images, []);
});

test('sameShape compares hosts, data centers and roles', () => {
  const p = planSwarm({ nodes: 2 });
  assert.equal(sameShape(p, p.hosts), true);
  assert.equal(sameShape(p, planSwarm({ nodes: 3 }).hosts), false);
  assert.equal(sameShape(p, planSwarm({ dcs: 'd1,x' }).hosts), false);
});

test("--mono-shift: a data center's hosts get their shift, into the shape and the engine's environment; bad input blamed on the flag", () => {
  const p = planSwarm({ nodes: 4, dcs: 'a,b,c', monoShift: 'a=1000, c=5s' });
  assert.deepEqual(
    p.hosts.map((h) => `${h.name}:${h.dc}:${h.monoShiftS ?? '-'}`),
    [
      'pole-bench-swarm-1:a:1000',
      'pole-bench-swarm-2:b:-',
      'pole-bench-swarm-3:c:5',
      'pole-bench-swarm-4:a:1000',
    ],
  );
  assert.equal(
    sameShape(p, planSwarm({ nodes: 4, dcs: 'a,b,c' }).hosts),
    false,
    'a shift is part of the shape',
  );
  const opts = { image: 'i', network: 'n', socketDir: '/s', gid: 0 };
  assert.ok(hostRunArgs(p.hosts[0]!, opts).join(' ').includes('--env POLE_BENCH_MONO_SHIFT_S=1000'));
  assert.ok(!hostRunArgs(p.hosts[1]!, opts).join(' ').includes('MONO_SHIFT'));
  rejects({ dcs: 'a,b', monoShift: 'x=10' }, '--mono-shift', /no host emulates data center "x"/);
  rejects({ dcs: 'a,b', monoShift: 'a=-3' }, '--mono-shift', /expected dc=seconds/);
  rejects({ dcs: 'a,b', monoShift: 'a=0' }, '--mono-shift', /1 to 10000000 seconds/);
  rejects({ dcs: 'a,b', monoShift: 'a=1,a=2' }, '--mono-shift', /named twice/);
});

test('a host runs with the DinD options, the swarm labels and its socket folder; it is never an orphan', () => {
  const h = planSwarm({ dcs: 'east,west' }).hosts[1]!;
  const args = hostRunArgs(h, {
    image: 'pole-bench-dind:9',
    network: 'net',
    socketDir: '/s/hosts/x',
    gid: 1000,
  });
  const joined = args.join(' ');
  for (const opt of [
    '--cap-add ALL',
    '--cap-drop SYS_RESOURCE',
    '--security-opt seccomp=unconfined',
    '--security-opt apparmor=unconfined',
    '--security-opt systempaths=unconfined',
    '--volume /sys/fs/cgroup:/sys/fs/cgroup:rw',
    '--tmpfs /var/lib/docker:exec',
    '--volume /s/hosts/x:/run/pole-bench-dind',
    '--name pole-bench-swarm-2 --hostname pole-bench-swarm-2 --network net',
    '--label pole-bench=true',
    '--label pole-bench.run=swarm',
    '--label pole-bench.dc=west',
    '--label pole-bench.swarm-role=worker',
  ]) {
    assert.ok(joined.includes(opt), `missing ${opt} in: ${joined}`);
  }
  assert.ok(!joined.includes('--privileged'));
  assert.deepEqual(args.slice(-2), ['pole-bench-dind:9', '1000']);
  // A run starting reaps orphans (harness gone): the swarm's hosts have no harness and must stay.
  const labels = hostLabels('west', 'worker');
  assert.equal(labels[DOCKER_LABELS.persistent], 'true');
  assert.equal(isOrphan(labels), false);
  assert.equal(dcConstraint('west'), 'node.labels.pole-bench.dc==west');
});
