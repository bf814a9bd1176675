// The swarm runtime's planning, with no swarm: each data center's placement from the nodes' labels
// or --place (and the error naming the missing label), and the service specs a topology becomes:
// placement constraints, the run's labels everywhere, dnsrr, restart none, NET_ADMIN, the volume.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology } from '../../src/topology/topology.js';
import {
  PlacementError,
  SwarmPlan,
  gatedCommand,
  memberStartScript,
  parsePlaceFlag,
  resolvePlacement,
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

test('a member: one replica, restart none, dnsrr, NET_ADMIN, its volume, labelled, placed in its data center, behind its gate', () => {
  const spec = plan.member({ id: 'p5', image: 'pole-bench-node:0.1.0', ports: [7001, 7002] });
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
  assert.deepEqual(c.Command, gatedCommand('p5'), 'behind the start gate');
  assert.deepEqual(c.CapabilityAdd, ['NET_ADMIN']);
  assert.equal(c.Init, true);
  assert.deepEqual(
    c.Mounts?.map((m) => [m.Type, m.Source, m.Target]),
    [['volume', 'pb-r1-x-p5-data', '/data']],
  );
  // No swarm config (its read-only tmpfs fails to remount now and then), no Hosts: the start
  // script brings both. The gate dials the harness named in the environment.
  assert.equal(c.Configs, undefined);
  assert.equal(c.Hosts, undefined);
  assert.ok(c.Env?.includes('POLE_BENCH_HARNESS=192.0.2.2:4000') && c.Env.includes('POLE_BENCH_TOKEN=tok'));
  for (const labels of [spec.Labels, c.Labels, c.Mounts?.[0]?.VolumeOptions?.Labels]) {
    assert.equal(labels?.[DOCKER_LABELS.managed], 'true');
    assert.equal(labels?.[DOCKER_LABELS.run], 'r1-x');
    assert.equal(labels?.[DOCKER_LABELS.node], 'p5');
    assert.equal(labels?.[DOCKER_LABELS.role], 'node');
  }
  // A restart pins the member to the node its volume is on.
  const pinned = plan.member({ ...{ id: 'p1', image: 'i', ports: [] }, pinnedNode: 'n1' });
  const pt = pinned.TaskTemplate as ContainerTaskSpec;
  assert.deepEqual(pt.Placement?.Constraints, ['node.labels.pole-bench.dc==tud', 'node.id==n1']);
  assert.throws(() => gatedCommand('p1"; rm'), /plain/);
});

test("a member's gate in bash: dials the harness, says who it is, runs the script it is sent: files byte for byte and read-only, the command's words as sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-gate-'));
  const server = createServer();
  try {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const bytes = Buffer.from([0, 1, 2, 0x27, 0x22, 0x24, 0x0a, 0xff, ...Buffer.from('{"peers":["p1"]}\n')]);
    const files = [
      { path: `${dir}/config/p1.json`, data: Buffer.from('{"id":"p1"}') },
      { path: `${dir}/config/sub/odd.bin`, data: bytes },
    ];
    const words = ["it's", 'a b', '$HOME', '`x`', ''];
    // The command says something on stdout and on stderr: stdout must come back over the gate's
    // connection (the member's events), stderr stay the task's.
    const script = memberStartScript({
      cmd: [
        'sh',
        '-c',
        `printf '%s|' "$@" "$ODD" "$TUNED" > ${dir}/args; echo '{"ev":"started"}'; echo oops >&2`,
        'sh',
        ...words,
      ],
      env: ["ODD=it's $HOME `x`", 'TUNED=glibc.malloc.hugetlb=1:a=b'],
      files,
    });
    let hello = '';
    let back = '';
    const closed = new Promise<void>((resolve) =>
      server.on('connection', (socket) => {
        socket.once('data', (d) => {
          hello = d.toString();
          socket.end(script);
          socket.on('data', (b: Buffer) => (back += b.toString()));
        });
        socket.on('close', () => resolve());
      }),
    );
    const [cmd, ...args] = gatedCommand('p1', `${dir}/start.sh`);
    const child = spawn(cmd!, args, {
      env: { PATH: process.env.PATH, POLE_BENCH_HARNESS: `127.0.0.1:${port}`, POLE_BENCH_TOKEN: 'tok' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(hello), { token: 'tok', role: 'gate', key: 'p1' });
    await closed;
    assert.equal(back, '{"ev":"started"}\n', "the command's stdout, over the gate's connection");
    assert.equal(stderr, 'oops\n', "its stderr, the task's own");
    for (const f of files) {
      assert.deepEqual(readFileSync(f.path), f.data);
      assert.equal(statSync(f.path).mode & 0o777, 0o444);
    }
    assert.equal(
      readFileSync(join(dir, 'args'), 'utf8'),
      [...words, "it's $HOME `x`", 'glibc.malloc.hugetlb=1:a=b'].map((w) => `${w}|`).join(''),
      'the words and the variables as given, nothing expanded',
    );
    assert.throws(() => memberStartScript({ cmd: ['x'], env: ['A B=1'], files: [] }), /NAME=value/);
    assert.throws(() => memberStartScript({ cmd: ['x'], env: ['NOVALUE'], files: [] }), /NAME=value/);
    assert.match(
      memberStartScript({ cmd: ['x'], files: [], hosts: ['10.0.0.9 pb-r-p1', "odd ' line"] }),
      /^printf '%s\\n' '10\.0\.0\.9 pb-r-p1' 'odd '\\'' line' >> \/etc\/hosts$/m,
    );
    assert.throws(
      () => memberStartScript({ cmd: ['x'], files: [{ path: "/config/a b'.json", data: Buffer.alloc(0) }] }),
      /plain/,
    );
    assert.throws(
      () => memberStartScript({ cmd: ['x'], files: [{ path: 'config/p1.json', data: Buffer.alloc(0) }] }),
      /absolute/,
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('agents, relay and fault helper: placed, labelled, dialling the harness back', () => {
  const agent = plan.agent('tud');
  const at = agent.TaskTemplate as ContainerTaskSpec;
  assert.equal(agent.Name, 'pb-r1-x-agent-tud');
  assert.deepEqual(at.Placement?.Constraints, ['node.labels.pole-bench.dc==tud']);
  // Straight to the task's module in the image's copy of the package: a file this build has.
  const cmd = at.ContainerSpec?.Command ?? [];
  assert.deepEqual(cmd, ['node', '/opt/pole-bench/dist/src/runtime/swarm/swarm-task-main.js', 'agent']);
  assert.ok(statSync(join(ROOT, cmd[1]!.slice('/opt/pole-bench/'.length))).isFile());
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_HARNESS=192.0.2.2:4000'));
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_TOKEN=tok'));
  assert.ok(at.ContainerSpec?.Env?.includes('POLE_BENCH_DC=tud'));
  assert.deepEqual(at.RestartPolicy, { Condition: 'none' });
  const relay = plan.relay();
  assert.equal(relay.Name, plan.relayHost);
  assert.equal(relay.EndpointSpec?.Mode, 'dnsrr');
  assert.deepEqual(
    (relay.TaskTemplate as ContainerTaskSpec).Placement?.Constraints,
    ['node.role==manager'],
    'on a manager: the loss of a worker host must not take every link',
  );
  const faults = plan.faultHelper();
  const ft = faults.TaskTemplate as ContainerTaskSpec;
  assert.deepEqual(faults.Mode, { Global: {} });
  assert.deepEqual(
    ft.ContainerSpec?.Mounts?.map((m) => [m.Source, m.Target]),
    [['/var/run/docker.sock', '/var/run/docker.sock']],
    "the node's Docker socket, nothing else of the node's",
  );
  assert.ok(ft.ContainerSpec?.Env?.includes('POLE_BENCH_SWARM_NODE={{.Node.ID}}'));
  for (const s of [agent, relay, faults]) assert.equal(s.Labels?.[DOCKER_LABELS.run], 'r1-x');
  const net = plan.network();
  assert.equal(net.Driver, 'overlay');
  assert.equal(net.Attachable, true);
  assert.equal(net.Labels?.[DOCKER_LABELS.run], 'r1-x');
});

test('a task with no role it knows exits 2; one without the harness to dial, 3, saying what is missing', async () => {
  const main = join(ROOT, 'dist', 'src', 'runtime', 'swarm', 'swarm-task-main.js');
  const exit = (args: string[]) =>
    new Promise<{ code: number | null; err: string }>((resolve) => {
      const p = spawn(process.execPath, [main, ...args], {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      p.stderr.on('data', (b: Buffer) => (err += b.toString()));
      p.on('close', (code) => resolve({ code, err }));
    });
  const bad = await exit(['bogus']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /ROLE must be one of agent, relay, faults, not bogus/);
  const lost = await exit(['relay']);
  assert.equal(lost.code, 3);
  assert.match(lost.err, /POLE_BENCH_HARNESS and POLE_BENCH_TOKEN must be set/);
});
