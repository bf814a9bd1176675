// scripts/nightly.sh, the steps of .github/workflows/nightly.yml, run here as the workflow runs
// them: a first night with no baseline, then a second compared with the first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/run-cli.js';

/** What made each run of a night's suite not pass: its verdict and its violated checks. */
async function whyNot(suiteDir: string): Promise<string> {
  try {
    const suite = JSON.parse(await readFile(join(suiteDir, 'suite.json'), 'utf8')) as {
      cells: { runs: { verdict: string; dir: string }[] }[];
    };
    const lines: string[] = [];
    for (const run of suite.cells.flatMap((c) => c.runs).filter((r) => r.verdict !== 'passed')) {
      const res = JSON.parse(await readFile(join(suiteDir, run.dir, 'result.json'), 'utf8')) as {
        errors?: string[];
        selfCheck?: { violations?: string[] };
      };
      lines.push(
        `${run.dir}: ${run.verdict}; violations: ${(res.selfCheck?.violations ?? []).join('; ') || 'none'}; errors: ${(res.errors ?? []).join('; ') || 'none'}`,
      );
    }
    return lines.join('\n');
  } catch (err) {
    return `(no suite outputs to say why: ${String(err)})`;
  }
}

function nightly(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) =>
    execFile(join(ROOT, 'scripts', 'nightly.sh'), { env: { ...process.env, ...env } }, (err, _out, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    ),
  );
}

test(
  'scripts/nightly.sh: a first night without a baseline, a second compared with it',
  { timeout: 300_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-nightly-'));
    try {
      const suite = join(dir, 'tiny.yaml');
      await writeFile(
        suite,
        [
          'name: tiny',
          'repeats: 1',
          'runs: { duration: 6s, killAt: 3s, rate: 150 }',
          'matrix:',
          `  topology: [${join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml')}]`,
          'thresholds: [writes.lost == 0]',
          '',
        ].join('\n'),
      );
      const stepSummary = join(dir, 'step-summary.md');
      const first = await nightly({
        SUITE: suite,
        RUNTIME: 'process',
        OUT: join(dir, 'night1'),
        GITHUB_STEP_SUMMARY: stepSummary,
      });
      assert.equal(first.code, 0, `${first.stderr}\n${await whyNot(join(dir, 'night1', 'suite'))}`);
      const summary1 = await readFile(join(dir, 'night1', 'summary.md'), 'utf8');
      assert.match(summary1, /every run passed/);
      assert.match(summary1, /No baseline/);
      assert.match(summary1, /# pole-bench suite: tiny/);
      assert.ok(!existsSync(join(dir, 'night1', 'benchmark.json')));

      const second = await nightly({
        SUITE: suite,
        RUNTIME: 'process',
        OUT: join(dir, 'night2'),
        BASELINE: join(dir, 'night1', 'suite'),
        GITHUB_STEP_SUMMARY: stepSummary,
      });
      const compared = await readFile(join(dir, 'night2', 'compare.md'), 'utf8');
      // Two single runs: whether noise crossed a 10 % rule is the comparison's to say; the script's
      // exit code must agree with it.
      const regressed = !compared.includes('**No regression**');
      assert.equal(
        second.code,
        regressed ? 1 : 0,
        `${second.stderr}\n${compared}\n${await whyNot(join(dir, 'night2', 'suite'))}`,
      );
      assert.match(compared, /\| e2e-2dc \| latency\.east\.before\.mean \|/);
      const bench = JSON.parse(await readFile(join(dir, 'night2', 'benchmark.json'), 'utf8')) as {
        name: string;
      }[];
      assert.ok(
        bench.some((b) => b.name === 'e2e-2dc recovery.servingMs'),
        JSON.stringify(bench),
      );
      assert.match(await readFile(join(dir, 'night2', 'summary.md'), 'utf8'), /# pole-bench compare/);
      // Both nights wrote to the job summary, as in GitHub Actions.
      assert.equal((await readFile(stepSummary, 'utf8')).split('# pole-bench suite: tiny').length - 1, 2);

      // A night whose run is suspect (a violation injected into its self-check) fails with exit 4,
      // its suite marks the cell, and compare refuses to hold it against the baseline.
      const third = await nightly({
        SUITE: suite,
        RUNTIME: 'process',
        OUT: join(dir, 'night3'),
        BASELINE: join(dir, 'night1', 'suite'),
        POLE_BENCH_INJECT_VIOLATION: 'a test forced this run suspect',
      });
      assert.equal(third.code, 4, third.stderr);
      const summary3 = await readFile(join(dir, 'night3', 'summary.md'), 'utf8');
      assert.match(summary3, /\*\*a run is suspect\*\*/);
      assert.match(summary3, /1 \(1 suspect\)/);
      assert.match(summary3, /Not compared: a side holds a suspect run/);
      const suite3 = JSON.parse(await readFile(join(dir, 'night3', 'suite', 'suite.json'), 'utf8')) as {
        cells: { runs: { verdict: string; dir: string }[] }[];
      };
      const run3 = suite3.cells[0]!.runs[0]!;
      assert.equal(run3.verdict, 'suspect');
      const report3 = await readFile(join(dir, 'night3', 'suite', run3.dir, 'report.md'), 'utf8');
      assert.match(report3, /\*\*Verdict: suspect\*\*.*injected: a test forced this run suspect/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
