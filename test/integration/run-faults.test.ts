// Network faults in a run, end to end on the process runtime with the relay: the leader's data
// center partitioned off and healed (paper-3dc-partition: the paper's deployment 1 with exactly
// `{at: 15s, partition: [caltech]}` then `{at: 30s, heal: all}`), a follower isolated while it
// runs, and a harness whose parent dies mid-run stopping and cleaning up like Ctrl-C.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { assertRunExit, ROOT, RUN_JS, runCli } from '../support/run-cli.js';
import { checkPartitionRun, eventsOf } from '../support/partition-checks.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';

test("partition of the leader's data center: it steps down, the others elect and serve, after the heal the cut-off members catch up, nothing lost", async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-partition-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'topologies', 'paper-3dc-partition.yaml'),
      '--runtime',
      'process',
      '--rate',
      '200',
      '--seed',
      '5',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    await checkPartitionRun(JSON.parse(r.stdout) as RunResult, out);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('an isolated follower changes nothing for the clients of the other data centers', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-isolate-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'test', 'fixtures', 'isolate-follower-3dc.yaml'),
      '--runtime',
      'process',
      '--seed',
      '6',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assertSelfCheckClean(result);
    assert.equal(result.leaders.cause, null, 'the leader was never taken out');
    assert.equal(result.writes.lost, 0);
    const events = await eventsOf(out);
    const cut = events.find((e) => e.ev === 'fault' && e.action === 'isolate');
    assert.deepEqual(cut?.cutOff, ['p1']);
    // p1 noticed: it lost its leader while cut off, and serves again after the heal.
    const healAt = events.find((e) => e.ev === 'fault' && e.action === 'heal')!.t as number;
    assert.ok(events.some((e) => e.ev === 'leader-lost' && e.node === 'p1' && (e.t as number) < healAt));
    assert.ok(events.some((e) => e.ev === 'serving' && e.node === 'p1' && (e.t as number) > healAt));
    // While p1 is cut off (the "degraded" window: from the cut to the end, the leader never taken
    // out) the other data centers' writes still meet the model: p1 is not needed for a quorum. A
    // quorum that waited for p1 would add a round trip to fnal (53-77 ms) to every write, so it
    // would move the window's median by at least half of the shortest such trip. The median, not
    // the mean: a local CI run's caltech window had a mean of 58.78 ms (model 9.88) while reruns of
    // the same build had 13.74 and 14.58: something held a share of that window's writes for long
    // (what, that run's files, deleted with it, cannot say), which a mean carries and the median of
    // every write does not, while a quorum through p1 would move both. The floor is the window's own
    // traced writes, so it cannot tell this by itself. The stalls the nodes saw from the cut on,
    // and the window's mean and p99, are printed beside it for the next run that strays.
    const viaFnal = Math.min(53.26, 77.06) / 2;
    const cutAt = cut!.t as number;
    const stalls = events.filter((e) => e.ev === 'loop-stalled' && (e.t as number) >= cutAt);
    t.diagnostic(
      `loop stalls from the cut on: ${stalls.length}, longest ${Math.max(0, ...stalls.map((e) => Number(e.ms)))} ms`,
    );
    for (const dc of ['caltech', 'slac']) {
      const w = result.latency[dc]?.degraded;
      const model = result.model[dc]?.before as number;
      const p50 = w?.p50 as number;
      t.diagnostic(
        `${dc}: ${w?.count} writes, p50 ${p50.toFixed(2)} ms, mean ${w?.mean?.toFixed(2)}, p99 ${w?.p99?.toFixed(2)}, model ${model}`,
      );
      assert.ok(
        p50 >= model * 0.98 && p50 < model + viaFnal,
        `${dc}: p50 ${p50} ms for model ${model} (a quorum through p1 adds ${viaFnal} ms or more)`,
      );
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('a link to the leader degrades: the latency oracle resigns it for a better-placed member, and the report says so', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-degrade-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'topologies', 'paper-3dc-degrade.yaml'),
      '--runtime',
      'process',
      // 90 s, not the file's 60: p2 needs three checks in a row that find another member 20 %
      // better, and on a busy 2-core machine that has taken from a few seconds to past 40 s.
      '--duration',
      '90s',
      '--rate',
      '200',
      '--seed',
      '8',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assertSelfCheckClean(result);
    assert.equal(result.leaders.initial, 'p2');
    const chain = result.leaders.resignations;
    const resigned = chain[0];
    assert.ok(resigned, 'p2 resigned');
    assert.equal(resigned.leader, 'p2');
    assert.ok(resigned.atS > 20, `resigned at ${resigned.atS} s, after the link changed at 20 s`);
    assert.equal(result.leaders.cause?.action, 'link');
    assert.equal(result.leaders.elected, resigned.successor);
    // Each resignation by the rule, on the scores it recorded: the successor's latency score 20 %
    // (the file's margin) under the leader's own.
    for (const r of chain)
      assert.ok(
        1 - r.successorScore[2]! / r.own[2]! >= 0.2,
        `${r.leader} for ${r.successor} at ${r.atS} s: ${r.successorScore[2]} against its own ${r.own[2]}`,
      );
    // Where leadership ends: p1 (fnal, 53 ms from slac and 77 from caltech) is the model's best
    // (latency score 96.7 ms), p3 (slac) p2's equal (121.0). The first successor need not be
    // either: a member whose view lags the change can score itself better than it is (p4, at
    // caltech, 152.7 by the model) and later resign in turn. The test asks that the resignations
    // end with a leader the model calls no worse than p2.
    const last = chain.at(-1)!.successor;
    t.diagnostic(
      `resignations: ${chain.map((r) => `${r.leader}→${r.successor} at ${r.atS.toFixed(1)} s`).join(', ')}`,
    );
    assert.ok(['p1', 'p3'].includes(last), `leadership ended at ${last}`);
    assert.equal(result.writes.lost, 0);
    for (const dc of ['caltech', 'slac', 'fnal'])
      t.diagnostic(
        `${dc} after: mean ${result.latency[dc]?.after?.mean?.toFixed(2)} ms, model ${result.model[dc]?.after}`,
      );
    const report = await readFile(join(out, 'report.md'), 'utf8');
    assert.match(report, /Resigned: p2 at [\d.]+ s for p\d/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('a run whose parent dies (a wrapper killed by a timeout) stops and cleans up like Ctrl-C', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-orphan-'));
  const out = join(tmp, 'out');
  // The wrapper starts the run and says its pid; the test then SIGKILLs the wrapper, as `timeout`
  // does to `npx`, and the run is left an orphan.
  const wrapperCode = [
    "const { spawn } = require('node:child_process');",
    `const c = spawn(process.execPath, ${JSON.stringify([RUN_JS, 'run', join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml'), '--runtime', 'process', '--duration', '60s', '--kill-at', '30s', '--out', out])}, { stdio: ['ignore', 'inherit', 'inherit'] });`,
    'console.log(`pid ${c.pid}`);',
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const wrapper = spawn(process.execPath, ['-e', wrapperCode], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: tmp },
  });
  let stdout = '';
  let stderr = '';
  wrapper.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  wrapper.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  let pid = 0;
  try {
    const deadline = Date.now() + 60_000;
    while (!/\] load/.test(stderr)) {
      assert.ok(Date.now() < deadline, `the load did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    pid = Number(/pid (\d+)/.exec(stdout)?.[1]);
    assert.ok(pid > 0, stdout);
    wrapper.kill('SIGKILL');
    const gone = Date.now() + 30_000;
    while (alive(pid)) {
      assert.ok(Date.now() < gone, `pole-bench (pid ${pid}) still runs 30 s after its parent died`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // oclif folds the message over lines, each starting with " ›".
    assert.match(
      stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' '),
      /the parent process \(pid \d+\) went away: every process, relay and temp dir was removed/,
    );
    const left = (await readdir(tmp)).filter((n) => n !== 'out');
    assert.deepEqual(left, [], 'no temp dir is left');
    const stray = await strayProcessesUnder(tmp);
    assert.deepEqual(stray, [], 'no process of the run is left');
  } finally {
    wrapper.kill('SIGKILL');
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    await rm(tmp, { recursive: true, force: true });
  }
});

test('a run SIGTERMed through a wrapper (timeout(1), as a CI step limit does) exits 3 and leaves no process or temp dir', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-term-'));
  try {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const c = spawn(
        'timeout',
        [
          '--preserve-status',
          // Into the load: it started 7-9 s after the command on this 2-core VM (2026-11-29).
          '18',
          process.execPath,
          RUN_JS,
          'run',
          join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml'),
          '--runtime',
          'process',
          '--duration',
          '60s',
          '--kill-at',
          '30s',
          '--out',
          join(tmp, 'out'),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TMPDIR: tmp } },
      );
      let stderr = '';
      c.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      c.once('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr.replace(/\s*›\s*/g, ' '), /interrupted \(SIGTERM\)/);
    assert.deepEqual(
      (await readdir(tmp)).filter((n) => n !== 'out'),
      [],
      'no temp dir is left',
    );
    assert.deepEqual(await strayProcessesUnder(tmp), [], 'no process of the run is left');
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line mentions `dir` (the run's own TMPDIR: its nodes' configs are there). */
async function strayProcessesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmd = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dir)) out.push(`${name}: ${cmd.replace(/\0/g, ' ')}`);
  }
  return out;
}

test('two members killed and restarted in turn (Fig. 8b): each restart is a restart, both catch up by snapshot, nothing lost', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-fig8b-'));
  try {
    // 1 MB of state and 16 s instead of 50 MB and 30 s: the same faults, in less time.
    const r = await runCli([
      'run',
      join(ROOT, 'topologies', 'paper-fig8b-3dc.yaml'),
      '--runtime',
      'process',
      '--preload',
      '1MB',
      '--duration',
      '16s',
      '--seed',
      '3',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    const faults = (await eventsOf(out))
      .filter((e) => e.ev === 'fault')
      .map((e) => `${String(e['action'])} ${String(e['target'])}`);
    assert.deepEqual(faults, ['kill p2', 'kill p3', 'kill p5', 'restart p2', 'restart p3']);
    assert.equal(result.leaders.elected, 'p4', 'history elects the higher sid of the two up to date');
    // Both came back past the sync diff limit: each was sent the whole state, and installed it.
    for (const to of ['p2', 'p3']) {
      const s = result.snapshots.filter((x) => x.to === to);
      assert.ok(s.length >= 1 && s.every((x) => x.transferMs !== null && x.bytes > 1e6), JSON.stringify(s));
    }
    assert.equal(result.writes.lost, 0);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
