// The swarm runtime's planning, with no swarm: each data center's placement from the nodes' labels
// or --place (and the error naming the missing label), and the service specs a topology becomes:
// placement constraints, the run's labels everywhere, dnsrr, restart none, NET_ADMIN, the volume.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology } from '../../src/topology/topology.js';
import {
  PlacementError,
  SwarmPlan,
  memberFileEnv,
  parsePlaceFlag,
  resolvePlacement,
  writeFilesScript,
  type SwarmNodeView,
} from '../../src/runtime/swarm/swarm-plan.js';
import type { ContainerTaskSpec } from 'dockerode';
import { DOCKER_LABELS } from '../../src/runtime/docker/docker-labels.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const t = loadTopology(join(ROOT, 'topologies', 'paper-2dc.yaml'));
const DCS = ['tud', 'cern'];
const node = (id: string, labels: Record<string, string>, usable = true): SwarmNodeView => ({
  id,
  hostname: `host-${id}`,
  labels,
  usable,
});

test('placement: the pole-bench.dc label, a node carrying several, and --place by hostname or id', () => {
  const two = [node('n1', { 'pole-bench.dc': 'tud' }), node('n2', { 'pole-bench.dc': 'cern' })];
  assert.deepEqual(
    [...resolvePlacement(DCS, two)],
    [
      ['tud', 'node.labels.pole-bench.dc==tud'],
      ['cern', 'node.labels.pole-bench.dc==cern'],
    ],
  );
  const one = [node('n1', { 'pole-bench.dc.tud': 'true', 'pole-bench.dc.cern': 'true' })];
  assert.equal(resolvePlacement(DCS, one).get('cern'), 'node.labels.pole-bench.dc.cern==true');
  const placed = resolvePlacement(
    DCS,
    [node('n1', {})],
    new Map([
      ['tud', 'host-n1'],
      ['cern', 'n1'],
    ]),
  );
  assert.deepEqual([...placed.values()], ['node.id==n1', 'node.id==n1']);
});

test('placement: a data center no usable node carries is an error naming the label and --place', () => {
  const nodes = [node('n1', { 'pole-bench.dc': 'tud' }), node('n2', { 'pole-bench.dc': 'cern' }, false)];
  assert.throws(
    () => resolvePlacement(DCS, nodes),
    (err: Error) =>
      err instanceof PlacementError &&
      /data center cern/.test(err.message) &&
      /--label-add pole-bench\.dc=cern/.test(err.message) &&
      /--place cern=NODE/.test(err.message),
  );
  assert.throws(
    () => resolvePlacement(DCS, nodes, new Map([['tud', 'nowhere']])),
    /no ready, active node .*nowhere/,
  );
  assert.throws(() => resolvePlacement(DCS, nodes, new Map([['mars', 'host-n1']])), /no data center mars/);
  assert.deepEqual(
    [...parsePlaceFlag('tud=a, cern=b')],
    [
      ['tud', 'a'],
      ['cern', 'b'],
    ],
  );
  assert.throws(() => parsePlaceFlag('tud'), /expected dc=node/);
  assert.throws(() => parsePlaceFlag('tud=a,tud=b'), /placed twice/);
});

const plan = new SwarmPlan({
  topology: t,
  runId: 'r1-x',
  image: 'pole-bench-node:0.1.0',
  placement: resolvePlacement(DCS, [
    node('n1', { 'pole-bench.dc': 'tud' }),
    node('n2', { 'pole-bench.dc': 'cern' }),
  ]),
  harness: { host: '192.0.2.2', port: 4000, token: 'tok' },
});

test('a member: one replica, restart none, dnsrr, NET_ADMIN, its volume and files, labelled, placed in its data center', () => {
  const spec = plan.member({
    id: 'p5',
    image: 'pole-bench-node:0.1.0',
    cmd: ['node', '/opt/pole-bench/bin/run.js', 'node', '--config', '/config/p5.json'],
    files: [{ path: '/config/p5.json', data: Buffer.from('{"id":"p5"}') }],
    ports: [7001, 7002],
  });
  assert.equal(spec.Name, 'pb-r1-x-p5');
  assert.deepEqual(spec.Mode, { Replicated: { Replicas: 1 } });
  assert.equal(spec.EndpointSpec?.Mode, 'dnsrr');
  assert.deepEqual(
    spec.EndpointSpec?.Ports?.map((p) => [p.TargetPort, p.PublishMode, p.PublishedPort]),
    [
      [7001, 'host', undefined],
      [7002, 'host', undefined],
    ],
  );
  const task = spec.TaskTemplate as ContainerTaskSpec;
  assert.deepEqual(task.RestartPolicy, { Condition: 'none' });
  assert.deepEqual(task.Placement?.Constraints, ['node.labels.pole-bench.dc==cern']);
  assert.deepEqual(task.Networks, [{ Target: 'pb-r1-x', Aliases: [] }]);
  const c = task.ContainerSpec!;
  assert.deepEqual(c.Command?.slice(0, 2), ['sh', '-c'], 'behind the start gate');
  assert.match(
    c.Command![2]!,
    /^mkdir -p \/config && .* && rm -f \/gate\/p5\.fifo && mkfifo \/gate\/p5\.fifo && read _ < \/gate\/p5\.fifo && rm -f \/gate\/p5\.fifo && exec "\$@"$/,
    'its files written first, then the gate',
  );
  assert.deepEqual(c.Command?.slice(3), [
    'gate',
    'node',
    '/opt/pole-bench/bin/run.js',
    'node',
    '--config',
    '/config/p5.json',
  ]);
  assert.deepEqual(c.CapabilityAdd, ['NET_ADMIN']);
  assert.equal(c.Init, true);
  assert.deepEqual(
    c.Mounts?.map((m) => [m.Type, m.Source, m.Target]),
    [
      ['volume', 'pb-r1-x-p5-data', '/data'],
      // The node's gate folder of the run (made by its helper), not a volume: see swarm-plan.ts.
      ['bind', '/tmp/pole-bench-gates/r1-x', '/gate'],
    ],
  );
  // No swarm config (its read-only tmpfs fails to remount now and then): the file rides in the env.
  assert.equal(c.Configs, undefined);
  assert.deepEqual(c.Env, [`POLE_BENCH_FILE_0=${Buffer.from('{"id":"p5"}').toString('base64')}`]);
  for (const labels of [spec.Labels, c.Labels, c.Mounts?.[0]?.VolumeOptions?.Labels]) {
    assert.equal(labels?.[DOCKER_LABELS.managed], 'true');
    assert.equal(labels?.[DOCKER_LABELS.run], 'r1-x');
    assert.equal(labels?.[DOCKER_LABELS.node], 'p5');
    assert.equal(labels?.[DOCKER_LABELS.role], 'node');
  }
  // A restart pins the member to the node its volume is on.
  const pinned = plan.member({
    ...{ id: 'p1', image: 'i', cmd: ['x'], files: [], ports: [] },
    pinnedNode: 'n1',
  });
  const pt = pinned.TaskTemplate as ContainerTaskSpec;
  assert.deepEqual(pt.Placement?.Constraints, ['node.labels.pole-bench.dc==tud', 'node.id==n1']);
  assert.deepEqual(pt.ContainerSpec?.Command?.slice(3), ['gate', 'x']);
});

test("a member's files: the gate's shell writes each from its environment variable, byte for byte, read-only", () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-files-'));
  try {
    const bytes = Buffer.from([0, 1, 2, 0x27, 0x22, 0x24, 0x0a, 0xff, ...Buffer.from('{"peers":["p1"]}\n')]);
    const files = [
      { path: `${dir}/config/p1.json`, data: Buffer.from('{"id":"p1"}') },
      { path: `${dir}/config/sub/odd.bin`, data: bytes },
    ];
    const env = {
      PATH: process.env.PATH,
      ...Object.fromEntries(files.map((f, i) => [memberFileEnv(i), f.data.toString('base64')])),
    };
    execFileSync('sh', ['-c', writeFilesScript(files)], { env });
    for (const f of files) {
      assert.deepEqual(readFileSync(f.path), f.data);
      assert.equal(statSync(f.path).mode & 0o777, 0o444);
    }
    assert.equal(writeFilesScript([]), '');
    assert.throws(() => writeFilesScript([{ path: "/config/a b'.json", data: Buffer.alloc(0) }]), /plain/);
    assert.throws(() => writeFilesScript([{ path: 'config/p1.json', data: Buffer.alloc(0) }]), /absolute/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('agents, relay and fault helper: placed, labelled, dialling the harness back', () => {
  const agent = plan.agent('tud');
  const at = agent.TaskTemplate as ContainerTaskSpec;
  assert.equal(agent.Name, 'pb-r1-x-agent-tud');
  assert.deepEqual(at.Placement?.Constraints, ['node.labels.pole-bench.dc==tud']);
  assert.deepEqual(at.ContainerSpec?.Args, ['swarm-task', 'agent']);
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_HARNESS=192.0.2.2:4000'));
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_TOKEN=tok'));
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_DC=tud'));
  assert.deepEqual(at.RestartPolicy, { Condition: 'none' });
  const relay = plan.relay();
  assert.equal(relay.Name, plan.relayHost);
  assert.equal(relay.EndpointSpec?.Mode, 'dnsrr');
  const faults = plan.faultHelper();
  const ft = faults.TaskTemplate as ContainerTaskSpec;
  assert.deepEqual(faults.Mode, { Global: {} });
  assert.deepEqual(
    ft.ContainerSpec?.Mounts?.map((m) => [m.Source, m.Target]),
    [
      ['/var/run/docker.sock', '/var/run/docker.sock'],
      ['/tmp', '/node-tmp'],
    ],
    "the node's Docker socket, and its /tmp, where it makes and removes the run's gate folder",
  );
  assert.ok(ft.ContainerSpec?.Env?.includes('POLE_BENCH_SWARM_NODE={{.Node.ID}}'));
  for (const s of [agent, relay, faults]) assert.equal(s.Labels?.[DOCKER_LABELS.run], 'r1-x');
  const net = plan.network();
  assert.equal(net.Driver, 'overlay');
  assert.equal(net.Attachable, true);
  assert.equal(net.Labels?.[DOCKER_LABELS.run], 'r1-x');
});
