// `pole-bench run --runtime swarm` across hosts: a local swarm of three Docker-in-Docker hosts made
// by `pole-bench swarm up`, one per data center of paper-3dc-deployment-1, and the run on it with
// the leader killed. Every member, agent and fault helper then runs in another engine than the
// harness's, and the members of different data centers on different hosts, reached through the
// swarm's overlay. The oracle's leader elected, nothing lost, the report written, and after the
// run nothing of it on any host; after `swarm down`, nothing of the swarm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineAt, findSwarmResources } from '../../src/swarm/dind-host.js';
import type { SwarmUpResult } from '../../src/swarm/local-swarm.js';
import { ROOT, runCli } from '../support/run-cli.js';
import { dockerSkipReason, passedSwarmRun, swarmLeftovers, topScored } from './docker-env.js';

const TOPOLOGY = join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml');

test('paper-3dc-deployment-1 on a 3-host local swarm, a data center per host: p5 killed, the oracle’s leader elected, nothing lost or left', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const found = await findSwarmResources();
  if (found.hosts.length + found.networks.length > 0)
    return t.skip('a local swarm is up on this machine already (pole-bench swarm down removes it)');
  const dir = mkdtempSync(join(tmpdir(), 'pole-swarm-hosts-'));
  const env = { ...process.env, POLE_SWARM_STATE: join(dir, 's') };
  try {
    const t0 = performance.now();
    const up = await runCli(['swarm', 'up', '--topology', TOPOLOGY, '--images', 'node', '--json'], env);
    assert.equal(up.code, 0, up.stderr);
    const swarm = JSON.parse(up.stdout) as SwarmUpResult;
    t.diagnostic(`swarm up (3 hosts, node image): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    assert.deepEqual(
      swarm.state.hosts.map((h) => h.dc),
      ['caltech', 'slac', 'fnal'],
    );

    const out = join(dir, 'run');
    const t1 = performance.now();
    const r = await runCli(
      [
        'run',
        TOPOLOGY,
        '--runtime',
        'swarm',
        '--oracle',
        'history',
        '--rate',
        '200',
        '--duration',
        '30s',
        '--kill-at',
        '12s',
        '--seed',
        '3',
        '--json',
        '--out',
        out,
      ],
      { ...env, DOCKER_HOST: swarm.dockerHost },
    );
    t.diagnostic(`run took ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    const result = passedSwarmRun(r);
    // history: the survivor with the newest log, ties to the highest id (ZooKeeper's rule). p4, in
    // p5's data center, has p5's last writes first and wins, unless it lags on the busy machine: a
    // run here read p4 at 3615 and p1-p3 at 3617, and p3 led, as the rule says.
    const top = topScored(result.leaders.scores);
    assert.equal(result.leaders.elected, top.at(-1), JSON.stringify(result.leaders.scores));
    if (result.leaders.elected !== 'p4')
      t.diagnostic(`${result.leaders.elected} elected: scores ${JSON.stringify(result.leaders.scores)}`);
    assert.equal(result.writes.lost, 0);
    assert.equal(result.writes.acked, result.writes.attempted);
    assert.ok(existsSync(join(out, 'report.md')) && existsSync(join(out, 'result.json')), 'report written');
    // The relay's delays, measured through it from where it runs, are the topology's.
    for (const [a, b, rtt] of [
      ['slac', 'caltech', 9.88],
      ['slac', 'fnal', 53.26],
      ['caltech', 'fnal', 77.06],
    ] as const) {
      const m = result.links[a]?.[b]?.measuredRttMs ?? result.links[b]?.[a]?.measuredRttMs ?? NaN;
      assert.ok(m >= rtt - 0.5 && m <= rtt + 3, `${a}→${b}: measured ${m} ms, configured ${rtt}`);
    }
    for (const dc of ['caltech', 'slac', 'fnal'])
      for (const w of ['before', 'after'] as const) {
        const s = result.latency[dc]?.[w];
        const model = result.model[dc]?.[w] ?? NaN;
        const floor = result.floor.perDc[dc]?.[w] ?? NaN;
        t.diagnostic(
          `${dc} ${w}: mean ${s?.mean?.toFixed(2)} ms, p50 ${s?.p50?.toFixed(2)}, model ${model.toFixed(2)} + floor ${floor.toFixed(2)} (${s?.count} writes)`,
        );
        assert.ok((s?.count ?? 0) > 100, `${dc} ${w}: ${s?.count} writes`);
        // Every path has the modelled delay in it: no median under it.
        assert.ok((s?.p50 ?? NaN) >= 0.98 * model, `${dc} ${w}: p50 ${s?.p50} under the model ${model}`);
      }
    // Nothing of the run on any host: no service, config, network, container or volume, and no
    // start-gate folder in the host's /tmp (its fault helper's to remove).
    for (const h of swarm.state.hosts) {
      assert.deepEqual(await swarmLeftovers(engineAt(h.dockerHost), h.role === 'manager'), [], h.name);
      const gates = spawnSync('docker', ['exec', h.name, 'ls', '-A', '/tmp/pole-bench-gates'], {
        encoding: 'utf8',
        env: { ...process.env, DOCKER_HOST: '' },
      });
      assert.match(
        `${gates.stdout}${gates.stderr}`,
        /No such file or directory/,
        `${h.name}: ${gates.stdout}`,
      );
    }
  } finally {
    const down = await runCli(['swarm', 'down'], env);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(down.code, 0, down.stderr);
    const left = await findSwarmResources();
    assert.deepEqual([...left.hosts, ...left.networks], [], 'nothing of the swarm left');
  }
});
