// The faults leader election fears, end to end on the process runtime with the relay: a leader
// cut off one way (it sends, it hears no one), a bridge, a ring of majorities, a minority paused
// and every member restarted one by one, then a schedule drawn by a nemesis's seed; each run ends
// with nothing acknowledged lost, its reads checked, and the schedule it ran in its report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { loadTopologyForRun } from '../../src/run/run-overrides.js';
import { assertRunExit, ROOT, runCli } from '../support/run-cli.js';
import { checkFearsRun } from '../support/fears-checks.js';

test('a one-way cut of the leader deposes it; a bridge, a ring and a paused minority are survived; a roll restarts all', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-fears-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'test', 'fixtures', 'fears-2dc.yaml'),
      '--runtime',
      'process',
      '--seed',
      '11',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    checkFearsRun(result);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    assert.match(report, /\| 4\.0 s \| oneway \| leader \| #1 \| written \|/);
    assert.match(report, /\| 21\.0 s \| roll \| all \| {2}\| written \|/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('a nemesis draws its schedule from --nemesis-seed, and the run carries out and prints exactly that', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-nemesis-'));
  const file = join(ROOT, 'topologies', 'paper-2dc-nemesis.yaml');
  try {
    const args = ['--duration', '30s', '--nemesis-seed', '5'];
    const r = await runCli([
      'run',
      file,
      '--runtime',
      'process',
      '--rate',
      '150',
      ...args,
      '--seed',
      '2',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.writes.lost, 0);
    const planned = loadTopologyForRun(file, { duration: '30s', nemesisSeed: 5 }).scenario.faults;
    assert.ok(planned.length >= 4);
    assert.deepEqual(
      result.scenario.faults?.map((f) => `${f.atS} ${f.action}`),
      planned.map((f) => `${f.atMs / 1000} ${f.action}`),
    );
    assert.equal(result.scenario.nemesis?.seed, 5);
    // Each drawn fault struck when the schedule says (a roll marks its steps besides; a fault may
    // wait for the election the one before it caused).
    for (const f of planned)
      assert.ok(
        result.timeline.faults.some(
          (m) => m.action === f.action && m.atS >= f.atMs / 1000 - 0.05 && m.atS < f.atMs / 1000 + 3,
        ),
        `${f.action} at ${f.atMs} ms struck: ${JSON.stringify(result.timeline.faults)}`,
      );
    const report = await readFile(join(out, 'report.md'), 'utf8');
    assert.match(report, /drawn faults by the nemesis: .*, seed 5\)/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
