// `pole-bench run --target zookeeper` end to end on the process runtime: the paper's two data
// centers with stock ZooKeeper 3.8, its leader killed, checked on the result; and a member that
// cannot start failing the run at once with ZooKeeper's own words, leaving nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../../src/report/result.js';
import { REPORT_SECTIONS } from '../../src/report/markdown-report.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RUN_JS = join(ROOT, 'bin', 'run.js');
const PAPER_2DC = join(ROOT, 'topologies', 'paper-2dc.yaml');

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [RUN_JS, ...args], { maxBuffer: 64 << 20, env }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** QuorumPeerMain JVMs whose config lives under `dir` (this test's own TMPDIR). */
function zookeepersUnder(dir: string): string[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-af', 'QuorumPeerMain'], { encoding: 'utf8' });
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return out.split('\n').filter((l) => l.includes(dir));
}

test('paper-2dc on ZooKeeper: p5 killed, another elected, phases in order, latency over the model, nothing lost', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-zk-e2e-'));
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-zk-e2e-tmp-'));
  try {
    const r = await run(
      [
        'run',
        PAPER_2DC,
        '--target',
        'zookeeper',
        '--runtime',
        'process',
        '--rate',
        '200',
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
      { ...process.env, TMPDIR: tmp },
    );
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assert.equal(result.target, 'zookeeper');
    assert.equal(result.shaping.mode, 'relay');
    assert.equal(result.leaders.oracle, 'zookeeper-fle');
    assert.equal(result.leaders.initial, 'p5');
    assert.equal(result.leaders.killed, 'p5');
    assert.ok(result.leaders.elected && result.leaders.elected !== 'p5', `elected ${result.leaders.elected}`);
    assert.ok((result.leaders.epoch ?? 0) >= 2, `epoch ${result.leaders.epoch}`);
    const rec = result.recovery;
    for (const k of ['detectMs', 'electedMs', 'servingMs', 'firstCommitMs'] as const)
      assert.ok(typeof rec[k] === 'number' && rec[k] >= 0, `${k} = ${rec[k]}`);
    assert.ok(rec.detectMs! <= rec.electedMs! && rec.electedMs! <= rec.servingMs!, JSON.stringify(rec));
    assert.ok(rec.servingMs! <= rec.firstCommitMs!, JSON.stringify(rec));
    // Latency against the paper's model: never under it (the relay's delays are on every path; 2 %
    // jitter at most), and within 10 ms over the model plus the calibrated floor. The bar
    // (within max(15 %, 3 ms) of the model) is not met here: see docs/zookeeper.md for the figures.
    for (const dc of ['tud', 'cern'])
      for (const w of ['before', 'after'] as const) {
        const mean = result.latency[dc]?.[w]?.mean;
        const model = result.model[dc]?.[w];
        const floor = result.floor.perDc[dc]?.[w];
        assert.ok(
          typeof mean === 'number' && typeof model === 'number' && typeof floor === 'number',
          `${dc} ${w}`,
        );
        assert.ok(mean >= model * 0.98, `${dc} ${w}: ${mean} ms under the model ${model}`);
        assert.ok(mean <= model + floor + 10, `${dc} ${w}: ${mean} ms for model ${model} + floor ${floor}`);
      }
    assert.deepEqual(result.model.tud, { before: 20.75, after: 41.5 });
    assert.equal(result.writes.lost, 0);
    assert.equal(result.writes.failed, 0);
    assert.equal(result.writes.acked, result.writes.attempted);
    assert.ok(result.writes.acked >= 7_500, `${result.writes.acked} acked`);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    for (const section of REPORT_SECTIONS) assert.ok(report.includes(section), `report section ${section}`);
    assert.match(report, /zookeeper/);
    const events = (await readFile(join(out, 'events.jsonl'), 'utf8')).trim().split('\n');
    assert.ok(events.some((l) => l.includes('"ev":"serving"') && l.includes('"src":"zk-log"')));
    assert.deepEqual(zookeepersUnder(tmp), []);
    assert.deepEqual(await readdir(tmp), [], 'the run removed its temp dirs');
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});

test("a member that cannot start fails the run at once with ZooKeeper's message, exit 3, nothing left", async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-zk-bad-'));
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-zk-bad-tmp-'));
  try {
    const started = Date.now();
    const r = await run(['run', PAPER_2DC, '--target', 'zookeeper', '--runtime', 'process', '--out', out], {
      ...process.env,
      TMPDIR: tmp,
      POLE_BENCH_ZK_CONFIG: 'clientPort=notaport',
    });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout + r.stderr, /exited \(code 2, signal null\) before it started/);
    assert.match(r.stdout + r.stderr, /Invalid config, exiting abnormally/);
    assert.match(r.stdout + r.stderr, /For input string: "notaport"/);
    assert.ok(Date.now() - started < 30_000, 'failed at once, not after a start timeout');
    assert.deepEqual(zookeepersUnder(tmp), []);
    assert.deepEqual(await readdir(tmp), []);
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});

test('--oracle with the zookeeper target is a usage error (exit 2)', async () => {
  const r = await run(
    ['run', PAPER_2DC, '--target', 'zookeeper', '--oracle', 'latency', '--runtime', 'process'],
    process.env,
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--oracle.*needs --target pole/);
});
