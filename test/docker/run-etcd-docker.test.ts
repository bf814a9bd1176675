// `pole-bench run --target etcd --runtime docker`: Debian's etcd 3.4 in containers of the
// pole-bench-etcd image, one per member in its holder's namespace, peers across data centers through
// the relay's per-pair addresses on the run's bridge. The paper's two data centers with the leader
// killed, checked as on the process runtime; and a member that cannot start failing the run at once
// with etcd's own words, leaving no container or network behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { cpuLabels, dockerLeftovers, dockerRunThatCannotStart, dockerSkipReason } from './docker-env.js';
import { checkPaper2dcEtcdRun } from '../support/etcd-run-checks.js';
import { assertRunExit, ROOT, runCliOnAQuietMachine } from '../support/run-cli.js';

const PAPER_2DC = join(ROOT, 'topologies', 'paper-2dc.yaml');

test('paper-2dc on etcd in containers: p5 killed, another elected, latency over the model, nothing lost or left', async (t) => {
  const skip = await dockerSkipReason('etcd');
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-etcd-docker-'));
  try {
    const r = await runCliOnAQuietMachine(
      [
        'run',
        PAPER_2DC,
        '--target',
        'etcd',
        '--runtime',
        'docker',
        '--rate',
        '50',
        '--duration',
        '40s',
        '--kill-at',
        '15s',
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
    checkPaper2dcEtcdRun(result, (l) => t.diagnostic(l));
    // The self-check sees the members and the agents through their containers' cgroups.
    const labels = (g: string): string[] => cpuLabels(result, g);
    assert.deepEqual(labels('nodes').sort(), ['p1', 'p2', 'p3', 'p4', 'p5']);
    assert.deepEqual(labels('agents').sort(), ['cern', 'tud']);
    const events = (await readFile(join(out, 'events.jsonl'), 'utf8')).trim().split('\n');
    assert.ok(events.some((l) => l.includes('"ev":"leader-lost"') && l.includes('"src":"etcd-log"')));
    assert.deepEqual(await dockerLeftovers(), [], 'nothing labelled is left after the run');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test("an etcd container that cannot start fails the run at once with etcd's message, exit 3, nothing left", async (t) => {
  const skip = await dockerSkipReason('etcd');
  if (skip) return t.skip(skip);
  const r = await dockerRunThatCannotStart(PAPER_2DC, 'etcd', {
    POLE_BENCH_ETCD_ARGS: '--quota-backend-bytes=notanumber',
  });
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.output, /exited \(status \d+\) before it started/);
  assert.match(r.output, /invalid value "notanumber" for flag -quota-backend-bytes/);
  assert.ok(r.ms < 30_000, 'failed at once, not after a start timeout');
  assert.deepEqual(await dockerLeftovers(), []);
});
