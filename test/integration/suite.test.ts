// pole-bench suite end to end: two cells (one topology file each) × two repeats of a short
// two-data-center run with a leader kill; interrupted in its third run, resumed without redoing
// the two finished runs; one topology file changed afterwards, and only its cell run again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, RUN_JS, runCli } from '../support/run-cli.js';
import { descendants, stillAlive } from '../support/processes.js';
import type { SuiteDocument } from '../../src/experiment/suite-summary.js';
import type { RunResult } from '../../src/report/result.js';
import { topScored } from '../support/scores.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml');

async function suiteJson(out: string): Promise<SuiteDocument> {
  return JSON.parse(await readFile(join(out, 'suite.json'), 'utf8')) as SuiteDocument;
}

test(
  'a two-cell suite with repeats: interrupted, resumed without redoing finished runs, a changed cell run again',
  { timeout: 600_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-suite-'));
    try {
      const base = await readFile(FIXTURE, 'utf8');
      for (const n of [1, 2])
        await writeFile(join(dir, `cell${n}.yaml`), base.replace('name: e2e-2dc', `name: cell${n}`));
      const suiteFile = join(dir, 'two.yaml');
      await writeFile(
        suiteFile,
        [
          'name: two',
          'repeats: 2',
          'seed: 7',
          'runs: { duration: 6s, killAt: 3s, rate: 150 }',
          'matrix:',
          '  topology: [cell1.yaml, cell2.yaml]',
          '  oracle: [history]',
          '',
        ].join('\n'),
      );
      const out = join(dir, 'out');
      const args = ['suite', suiteFile, '--out', out, '--runtime', 'process'];

      // First pass: stopped with Ctrl-C once two runs have finished, during the third.
      const child = spawn(process.execPath, [RUN_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      const third = new Promise<void>((resolve) =>
        child.stderr.on('data', (b: Buffer) => {
          stderr += b.toString();
          if (/2\/4 runs finished .*running cell2 #1/.test(stderr)) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      await Promise.race([third, exited.then(() => assert.fail(`the suite ended early: ${stderr}`))]);
      // Into the third run's load, so that there is a cluster to clean up.
      await new Promise((r) => setTimeout(r, 2500));
      const children = await descendants(child.pid as number);
      assert.ok(children.length >= 5, `the third run's harness, nodes and agents: ${children.join(' ')}`);
      child.kill('SIGINT');
      assert.equal(await exited, 3, stderr);
      assert.deepEqual(stillAlive(children), [], 'the interrupted run left no process');
      assert.match(stderr, /run the same command to resume/);
      const first = await suiteJson(out);
      assert.ok(first.interrupted, 'suite.json says it was interrupted');
      assert.deepEqual(
        first.cells.map((c) => c.runs.map((r) => r.status)),
        [
          ['done', 'done'],
          ['not-run', 'not-run'],
        ],
      );

      // Resumed: the first cell's runs are kept, the rest run.
      const resumed = await runCli(args);
      assert.equal(resumed.code, 0, resumed.stderr);
      const second = await suiteJson(out);
      assert.equal(second.interrupted, null);
      assert.deepEqual(
        second.cells.map((c) => c.runs.map((r) => r.status)),
        [
          ['resumed', 'resumed'],
          ['done', 'done'],
        ],
      );
      for (const c of second.cells) {
        const elected = Object.entries(c.leaders.elected);
        assert.equal(
          elected.reduce((n, [, k]) => n + k, 0),
          2,
          `${c.id}: a new leader in both repeats`,
        );
        // history elects the newest log after p5, ties to the highest id: usually p4 (p5's own data
        // center logs its last proposals first), but a busy machine decides which member logged
        // the last one first (CI saw p3, and once p1), so each run is held to its own scores.
        for (const n of [1, 2]) {
          const r = JSON.parse(
            await readFile(join(out, 'cells', c.id, `run-${n}`, 'result.json'), 'utf8'),
          ) as RunResult;
          assert.notEqual(r.leaders.elected, 'p5');
          assert.equal(
            r.leaders.elected,
            topScored(r.leaders.scores).at(-1),
            `${c.id} run ${n}: elected ${r.leaders.elected}, scores ${JSON.stringify(r.leaders.scores)}`,
          );
        }
        assert.equal(c.metrics['writes.lost']?.max, 0);
        assert.equal(c.metrics['latency.east.before.mean']?.n, 2, 'both repeats count');
      }
      // Repeat r runs with seed + r, the same in every cell.
      assert.deepEqual(
        second.cells[1]?.runs.map((r) => r.seed),
        [7, 8],
      );
      const md = await readFile(join(out, 'suite.md'), 'utf8');
      for (const c of ['cell1', 'cell2']) assert.match(md, new RegExp(`## ${c}\\n`));
      assert.match(md, /\| runs \| leaders \| east \| west \|/);

      // A changed topology file: only its cell runs again, a cell that was resumed above.
      await writeFile(
        join(dir, 'cell1.yaml'),
        (await readFile(join(dir, 'cell1.yaml'), 'utf8')).replace('rtt: 10ms', 'rtt: 12ms'),
      );
      const again = await runCli(args);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(
        (await suiteJson(out)).cells.map((c) => c.runs.map((r) => r.status)),
        [
          ['done', 'done'],
          ['resumed', 'resumed'],
        ],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
