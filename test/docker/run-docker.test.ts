// `pole-bench run` on the Docker runtime: the short two-data-center run with a leader kill,
// checked like the process runtime's; the same topology on both runtimes agreeing; Ctrl-C
// leaving no container or network behind; the leader's data center partitioned off and healed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RunResult } from '../../src/report/result.js';
import { CHECKS } from '../../src/report/self-check.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';
import { cpuLabels, dockerLeftovers, dockerSkipReason } from './docker-env.js';
import { topScored } from '../support/scores.js';
import { assertRunExit, ROOT, runCli, startRunUntilLoad, type RunningCli } from '../support/run-cli.js';
import { checkPartitionRun } from '../support/partition-checks.js';
import { checkNodeTunables } from '../support/node-tunables-check.js';
import { linkReading } from '../support/link-reading.js';

const RUN_JS = join(ROOT, 'bin', 'run.js');
const TOPOLOGY = join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml');

function runJson(args: string[]): Promise<{ code: number; result?: RunResult; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [RUN_JS, 'run', TOPOLOGY, '--json', ...args],
      { maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        let result: RunResult | undefined;
        try {
          result = JSON.parse(stdout) as RunResult;
        } catch {
          result = undefined;
        }
        resolve({ code, stderr, ...(result ? { result } : {}) });
      },
    ),
  );
}

function checkRun(result: RunResult, diagnostic: (s: string) => void): void {
  assert.equal(result.leaders.initial, 'p5');
  // In containers the tunables go by each container's Env.
  checkNodeTunables(result);
  // The kill takes whoever serves at 4 s. A follower that stops hearing p5 for syncLimit (500 ms:
  // a stall of the busy 2-core CI machine) elects another before the kill (a CI run saw p4); the
  // run must then say so itself, as an election no fault explains and a self-check violation.
  // The run is then suspect (its "before" window mixes two leaders and an outage) and says why;
  // otherwise it passes with every cross-check held or not evaluated.
  const early = result.elections.unprovoked.filter((u) => u.atS < (result.recovery.faultAtS ?? Infinity));
  const killed = early.at(-1)?.leader ?? 'p5';
  if (early.length > 0) {
    diagnostic(`${result.runtime}: leader changed before the kill: ${JSON.stringify(early)}`);
    assert.equal(result.verdict, 'suspect', result.errors.join('; '));
    assert.ok(
      result.selfCheck.violations.some((v) => v.startsWith(CHECKS.oneLeaderBefore)),
      result.selfCheck.violations.join('; '),
    );
  } else {
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assertSelfCheckClean(result);
  }
  assert.equal(result.leaders.killed, killed);
  assert.ok(result.leaders.elected && result.leaders.elected !== killed);
  const r = result.recovery;
  assert.ok(r.detectMs! <= r.electedMs! && r.electedMs! <= r.servingMs! && r.servingMs! <= r.firstCommitMs!);
  for (const dc of ['east', 'west']) {
    assert.ok((result.latency[dc]?.before?.count ?? 0) > 100, `${dc} before`);
    assert.ok((result.latency[dc]?.after?.count ?? 0) > 100, `${dc} after`);
    // The delay is in every path: no window's median under the model (network only).
    for (const w of ['before', 'after'] as const) {
      const p50 = result.latency[dc]?.[w]?.p50 ?? NaN;
      const model = result.model[dc]?.[w] ?? NaN;
      assert.ok(p50 >= 0.98 * model, `${result.runtime} ${dc} ${w}: p50 ${p50} ms under the model ${model}`);
    }
  }
  // The link's delay is in the containers' path, once (the relay's accuracy itself is relay.test's,
  // to 0.6 ms): never under it, and over it, beyond what the machine added to the undelayed route
  // read beside it, by what a busy 2-core machine adds to a round trip through the bridge and the
  // relay's threads (local CI runs read 12.04 ms as the probes' mean, and 11.87 as their median at
  // load average 5.7, with no undelayed route read); a missing or doubled delay (0 or 20) fails.
  const link = linkReading(result, 'east', 'west');
  assert.ok(link.measuredMs >= 10 - 0.5 && link.beyondMs <= 10 + 3, link.said);
  assert.equal(result.writes.lost, 0);
  assert.equal(result.writes.acked, result.writes.attempted);
  // The self-check sees every node and agent, in containers too (through their cgroups).
  const labels = (g: string): string[] => cpuLabels(result, g);
  assert.deepEqual(labels('nodes'), ['p1', 'p2', 'p3', 'p4', 'p5']);
  assert.deepEqual(labels('agents'), ['east', 'west']);
  assert.ok((result.cpu.groups.nodes?.pctOfCore ?? 0) > 0 && (result.cpu.groups.agents?.pctOfCore ?? 0) > 0);
  // Traced writes joined across containers: one clock for all.
  assert.ok(result.anatomy.complete > 0 && (result.anatomy.perDc.east?.before?.maxSumErrorMs ?? 1) <= 0.2);
}

test('a two-data-center run in containers with a leader kill; both runtimes agree', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-docker-e2e-'));
  try {
    const d = await runJson(['--runtime', 'docker', '--seed', '12', '--out', join(out, 'docker')]);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(d.result?.runtime, 'docker');
    checkRun(d.result!, (m) => t.diagnostic(m));
    assert.deepEqual(await dockerLeftovers(), [], 'nothing labelled is left after the run');
    const p = await runJson(['--runtime', 'process', '--seed', '12', '--out', join(out, 'process')]);
    assert.equal(p.code, 0, p.stderr);
    checkRun(p.result!, (m) => t.diagnostic(m));
    // Both elect by the same rule (history: the newest log wins). Which follower holds the newest
    // log when p5 dies depends on the instant of the kill, so the leaders agree when the scores the
    // election saw tie at the top (the tie is then broken the same way), and otherwise each runtime
    // must have elected its own top-scoring candidate.
    const top = (r: RunResult): string[] => topScored(r.leaders.scores);
    for (const r of [d.result!, p.result!])
      assert.ok(
        top(r).includes(r.leaders.elected!),
        `${r.runtime}: ${r.leaders.elected} is not top-scored in ${JSON.stringify(r.leaders.scores)}`,
      );
    if (top(d.result!).join() === top(p.result!).join())
      assert.equal(d.result!.leaders.elected, p.result!.leaders.elected, 'the same leader is elected');
    // What both runtimes must agree on is the network's part of a write beyond the model: each
    // window's mean less the run's own floor (its traced writes' mean of all but the delay the
    // shaping added) and less the paper's model for the leader that run elected. The runtimes may
    // elect leaders in different data centers (above): a local CI run read east after at 8.87 ms
    // in docker against 18.92 as processes, 10 ms apart, as east's model is 10 under a leader in
    // east and 20 under one in west (the leaders were not printed then; they are now). The
    // rest is what a hop costs, and containers cost more per hop (the bridge, the proxies) by an
    // amount that follows the machine's load: raw medians were compared here until a CI run read
    // west before (model 0) at 37.85 ms in docker against 16.46 as processes, all of it floor. A
    // missing or doubled delay moves the network part by the whole link (10 or 20 ms); chance
    // moves it by the standard errors of the two floors' samples (one write in 16 is traced at
    // 200 writes/s: 18-19 per data center and window).
    for (const dc of ['east', 'west'])
      for (const w of ['before', 'after'] as const) {
        const net = (r: RunResult): { ms: number; se: number } => {
          const traced = r.anatomy.perDc[dc]![w]!;
          const floor = r.floor.perDc[dc]![w]!;
          return {
            ms: r.latency[dc]![w]!.sentMean! - floor - r.model[dc]![w]!,
            se: traced.writes > 1 && traced.sdMs !== undefined ? traced.sdMs / Math.sqrt(traced.writes) : 0,
          };
        };
        const a = net(d.result!);
        const b = net(p.result!);
        const allowed = Math.max(3, 3 * Math.hypot(a.se, b.se));
        const pa = d.result!.latency[dc]![w]!.p50!;
        const pb = p.result!.latency[dc]![w]!.p50!;
        t.diagnostic(
          `${dc} ${w}: network part over the model docker ${a.ms.toFixed(2)} ± ${a.se.toFixed(2)} ms (leader ${d.result!.leaders.elected}, model ${d.result!.model[dc]![w]}), ` +
            `process ${b.ms.toFixed(2)} ± ${b.se.toFixed(2)} (leader ${p.result!.leaders.elected}, model ${p.result!.model[dc]![w]}); allowed ±${allowed.toFixed(2)}; p50 docker ${pa.toFixed(2)}, process ${pb.toFixed(2)}`,
        );
        assert.ok(
          Math.abs(a.ms - b.ms) <= allowed,
          `${dc} ${w}: network part over the model docker ${a.ms.toFixed(2)} ms vs process ${b.ms.toFixed(2)} ms (allowed ±${allowed.toFixed(2)})`,
        );
      }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('Ctrl-C in the middle of a docker run: no container or network with the run label is left', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-docker-int-'));
  let run: RunningCli | undefined;
  try {
    run = await startRunUntilLoad([
      TOPOLOGY,
      '--runtime',
      'docker',
      '--duration',
      '60s',
      '--kill-at',
      '30s',
      '--out',
      out,
    ]);
    assert.ok((await dockerLeftovers()).length >= 11, 'network, 5 holders and 5 nodes exist mid-run');
    run.child.kill('SIGINT');
    assert.equal(await run.exited, 3, run.output().stderr);
    assert.deepEqual(await dockerLeftovers(), []);
  } finally {
    run?.child.kill('SIGKILL');
    await rm(out, { recursive: true, force: true });
  }
});

test("partition of the leader's data center in containers: it steps down, the others elect, the cut-off members catch up, nothing lost or left", async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-docker-partition-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'topologies', 'paper-3dc-partition.yaml'),
      '--runtime',
      'docker',
      '--rate',
      '200',
      '--seed',
      '5',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.runtime, 'docker');
    await checkPartitionRun(result, out);
    assert.deepEqual(await dockerLeftovers(), [], 'nothing labelled is left after the run');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('a docker run SIGTERMed through a wrapper (timeout(1), as a CI step limit does) leaves no container, network or temp dir', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-docker-term-'));
  try {
    // timeout sends SIGTERM to the harness after 35 s: well into the load (the run would take 60 s).
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        'timeout',
        [
          '--preserve-status',
          '35',
          process.execPath,
          RUN_JS,
          'run',
          TOPOLOGY,
          '--runtime',
          'docker',
          '--duration',
          '60s',
          '--kill-at',
          '30s',
          '--out',
          join(tmp, 'out'),
        ],
        { env: { ...process.env, TMPDIR: tmp } },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    assert.equal(r.code, 3, `the harness exits 3 on SIGTERM: ${r.stderr}`);
    assert.match(r.stderr.replace(/\s*›\s*/g, ' '), /interrupted \(SIGTERM\)/);
    assert.deepEqual(await dockerLeftovers(), []);
    assert.deepEqual(
      (await readdir(tmp)).filter((n) => n !== 'out'),
      [],
      'no temp dir is left',
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
