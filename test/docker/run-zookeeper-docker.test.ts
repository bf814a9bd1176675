// `pole-bench run --target zookeeper --runtime docker`: stock ZooKeeper 3.8 in containers of the
// pole-bench-zookeeper image, one per member in its holder's namespace, peers across data centers
// through the relay's per-pair addresses on the run's bridge. The paper's two data centers with
// the leader killed, checked as on the process runtime; and a member that cannot start failing the
// run at once with ZooKeeper's own words, leaving no container, network or bridge address behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { cpuLabels, dockerLeftovers, dockerRunThatCannotStart, dockerSkipReason } from './docker-env.js';
import { assertRunExit, ROOT, runCliOnAQuietMachine } from '../support/run-cli.js';
import { checkPaper2dcZkRun } from '../support/zk-run-checks.js';

const PAPER_2DC = join(ROOT, 'topologies', 'paper-2dc.yaml');

/** Addresses of the runs' subnets (10.231.x.y) still on an interface of this host. */
function runAddressesOnHost(): string[] {
  const out = execFileSync('ip', ['-o', '-4', 'address', 'show'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => / inet 10\.231\./.test(l));
}

test('paper-2dc on ZooKeeper in containers: p5 killed, another elected, latency over the model, nothing lost or left', async (t) => {
  const skip = await dockerSkipReason('zookeeper');
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-zk-docker-'));
  try {
    const r = await runCliOnAQuietMachine(
      [
        'run',
        PAPER_2DC,
        '--target',
        'zookeeper',
        '--runtime',
        'docker',
        // 100 writes/s, not 200: on the 2-core VM of 2026-11-26 the five JVMs, the relay and the two
        // agents kept the machine 78 % busy at 200/s (tud's mean before the kill 8-10 ms over model +
        // floor in two runs, queueing for the CPU) and 49-56 % at 100/s (3.3-3.4 ms over, allowed 5.7-5.8).
        '--rate',
        '100',
        '--duration',
        '40s',
        '--kill-at',
        '20s',
        '--seed',
        '7',
        '--out',
        out,
        '--json',
      ],
      process.env,
      console.log,
    );
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.runtime, 'docker');
    for (const dc of ['tud', 'cern'])
      for (const w of ['before', 'after'] as const)
        t.diagnostic(
          `${dc} ${w}: mean ${result.latency[dc]?.[w]?.mean?.toFixed(2)} ms, model ${result.model[dc]?.[w]}, floor ${result.floor.perDc[dc]?.[w]?.toFixed(2)}`,
        );
    t.diagnostic(`recovery ${JSON.stringify(result.recovery)}; writes ${JSON.stringify(result.writes)}`);
    // In containers ZooKeeper's first seconds of load stall more (per-second p99s of 150-230 ms
    // about every 5 s until some 15 s in): tud's mean before the kill was 27.4, 27.9 and 30.1 ms
    // in three runs at this seed (model 20.75, floor 1.8), so 15 ms of slack instead of 10. Since
    // 2026-11-28 the median is held to it (zk-run-checks.ts): in six runs tud's medians were
    // −1.2..+8.4 ms over, with per-second p99s of up to 2 s well after the kill as well.
    checkPaper2dcZkRun(result, 15, (l) => t.diagnostic(l));
    // The self-check sees the JVMs and the agents through their containers' cgroups.
    const labels = (g: string): string[] => cpuLabels(result, g);
    assert.deepEqual(labels('nodes').sort(), ['p1', 'p2', 'p3', 'p4', 'p5']);
    assert.deepEqual(labels('agents').sort(), ['cern', 'tud']);
    const events = (await readFile(join(out, 'events.jsonl'), 'utf8')).trim().split('\n');
    assert.ok(events.some((l) => l.includes('"ev":"serving"') && l.includes('"src":"zk-log"')));
    // A follower in tud names its leader in cern by the relay's address for that pair.
    assert.ok(
      events.some(
        (l) => l.includes('"ev":"following"') && /"address":"10\.231\.\d+\.(1[2-9]\d|2\d\d):2888"/.test(l),
      ),
      'a follower reached its leader through a per-pair relay address',
    );
    assert.deepEqual(await dockerLeftovers(), [], 'nothing labelled is left after the run');
    assert.deepEqual(runAddressesOnHost(), [], 'the relay addresses went with the bridge');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test("a ZooKeeper container that cannot start fails the run at once with ZooKeeper's message, exit 3, nothing left", async (t) => {
  const skip = await dockerSkipReason('zookeeper');
  if (skip) return t.skip(skip);
  const r = await dockerRunThatCannotStart(PAPER_2DC, 'zookeeper', {
    POLE_BENCH_ZK_CONFIG: 'clientPort=notaport',
  });
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.output, /exited \(status 2\) before it started/);
  assert.match(r.output, /Invalid config, exiting abnormally/);
  assert.match(r.output, /For input string: "notaport"/);
  assert.ok(r.ms < 30_000, 'failed at once, not after a start timeout');
  assert.deepEqual(await dockerLeftovers(), []);
  assert.deepEqual(runAddressesOnHost(), []);
});
