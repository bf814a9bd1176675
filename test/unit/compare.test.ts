import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareScopes, noiseAllowance } from '../../src/report/compare/compare.js';
import { DEFAULT_RULES, parseRule } from '../../src/report/compare/compare-rules.js';
import { spreadOf } from '../../src/report/run-metrics.js';
import { SUITE_SCHEMA_ID } from '../../src/vocabulary/result-schema.js';
import { runCli } from '../support/run-cli.js';
import { result2dc, type MutableResult } from './report-fixture.js';

const ms = (...v: number[]) => spreadOf(v, 'ms', 'lower');
const scoped = (metrics: Record<string, ReturnType<typeof ms>>) =>
  new Map([['run', new Map(Object.entries(metrics))]]);

describe('compare rules', () => {
  it('reads relative, absolute and limit rules with * for one segment', () => {
    const r = parseRule('latency.*.after.mean +10%');
    assert.equal(r.kind, 'relative');
    assert.ok(r.pattern.test('latency.tud.after.mean'));
    assert.ok(!r.pattern.test('latency.tud.before.mean'));
    assert.ok(!r.pattern.test('latency.tud.x.after.mean'), '* is one segment');
    assert.deepEqual(
      { ...parseRule('recovery.servingMs +50ms'), pattern: null },
      { text: 'recovery.servingMs +50ms', pattern: null, kind: 'absolute', amount: 50 },
    );
    const limit = parseRule('writes.lost > 0');
    assert.equal(limit.kind, 'limit');
    assert.throws(() => parseRule('latency.tud.after.mean 10%'), /--fail-on: expected "METRIC \+N%"/);
  });
});

describe('compareScopes', () => {
  const rules = DEFAULT_RULES.map((r) => parseRule(r));

  it('flags a change beyond the rule plus the allowance, and passes noise within it', () => {
    // Variances 4 and 0 pooled: sd √2; twice the standard error of the difference of two means of 3.
    assert.ok(
      Math.abs(noiseAllowance(ms(18, 20, 22), ms(23, 23, 23)) - 2 * Math.SQRT2 * Math.sqrt(2 / 3)) < 1e-9,
    );
    // Baseline 20 ± 2, current 23 ± 1: margin 10 % of 20 plus an allowance of 2.58 ms is 4.58 ms.
    const within = compareScopes(
      scoped({ 'latency.tud.after.mean': ms(18, 20, 22) }),
      scoped({ 'latency.tud.after.mean': ms(22, 23, 24) }),
      rules,
    );
    assert.equal(within.regressions, 0, JSON.stringify(within.rows));
    const beyond = compareScopes(
      scoped({ 'latency.tud.after.mean': ms(18, 20, 22) }),
      scoped({ 'latency.tud.after.mean': ms(27, 28, 29) }),
      rules,
    );
    assert.equal(beyond.regressions, 1);
    assert.deepEqual(beyond.rows[0]?.failed, ['latency.*.*.mean +10%']);
  });

  it('without repeats only the rule decides; an improvement is not a regression', () => {
    const c = compareScopes(
      scoped({ 'latency.tud.after.p99': ms(40) }),
      scoped({ 'latency.tud.after.p99': ms(44.5) }),
      rules,
    );
    assert.equal(c.noRepeats, true);
    assert.equal(c.rows[0]?.allowance, 0);
    assert.equal(c.regressions, 1);
    const better = compareScopes(
      scoped({ 'latency.tud.after.p99': ms(40) }),
      scoped({ 'latency.tud.after.p99': ms(30) }),
      rules,
    );
    assert.equal(better.regressions, 0);
    assert.equal(better.improvements, 1);
  });

  it('any lost write fails whatever the baseline; cells only one side has are listed apart', () => {
    const lost = spreadOf([0, 1], 'writes', 'lower');
    const base = new Map([
      ['a', new Map([['writes.lost', spreadOf([0, 0], 'writes', 'lower')]])],
      ['gone', new Map()],
    ]);
    const cur = new Map([
      ['a', new Map([['writes.lost', lost]])],
      ['new', new Map()],
    ]);
    const c = compareScopes(base, cur, rules);
    assert.equal(c.regressions, 1);
    assert.deepEqual([c.onlyBaseline, c.onlyCurrent], [['gone'], ['new']]);
  });
});

/** A suite output directory whose one cell's repeats have tud's "after" mean at `means`. */
async function suiteDir(root: string, name: string, means: readonly number[]): Promise<string> {
  const dir = join(root, name);
  const runs = [];
  for (const [i, m] of means.entries()) {
    const r: MutableResult = result2dc();
    r.verdict = 'passed';
    r.thresholds = [];
    r.latency['tud']!.after!.mean = m;
    const rel = join('cells', 'paper-2dc', `run-${i + 1}`);
    await mkdir(join(dir, rel), { recursive: true });
    await writeFile(join(dir, rel, 'result.json'), JSON.stringify(r));
    runs.push({ dir: rel, status: 'done' });
  }
  await writeFile(
    join(dir, 'suite.json'),
    JSON.stringify({ schema: SUITE_SCHEMA_ID, cells: [{ id: 'paper-2dc', runs }] }),
  );
  return dir;
}

describe('pole-bench compare', () => {
  it('exits 1 on a regression beyond the allowance and 0 on noise within it, with markdown and benchmark JSON', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pole-bench-compare-'));
    try {
      const base = await suiteDir(root, 'base', [42, 44, 46]);
      const noisy = await suiteDir(root, 'noisy', [44, 47, 50]);
      const worse = await suiteDir(root, 'worse', [55, 56, 57]);
      const summary = join(root, 'summary.md');
      const env = { ...process.env, GITHUB_STEP_SUMMARY: summary };
      const ok = await runCli(['compare', base, noisy, '--benchmark-json', join(root, 'bench.json')], env);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /\*\*No regression\*\*/);
      const bench = JSON.parse(await readFile(join(root, 'bench.json'), 'utf8')) as {
        name: string;
        value: number;
        unit: string;
      }[];
      assert.deepEqual(
        bench.find((b) => b.name === 'paper-2dc latency.tud.after.mean'),
        {
          name: 'paper-2dc latency.tud.after.mean',
          unit: 'ms',
          value: 47,
          range: '± 3',
          extra: 'mean of 3 runs; median 47, min 44, max 50',
        },
      );
      const bad = await runCli(['compare', base, worse], env);
      assert.equal(bad.code, 1, bad.stdout + bad.stderr);
      assert.match(bad.stdout, /\*\*1 regression\*\*/);
      assert.match(bad.stdout, /❌ regression \| paper-2dc \| latency\.tud\.after\.mean/);
      // Both tables went to the job summary too.
      const written = await readFile(summary, 'utf8');
      assert.equal(written.split('# pole-bench compare').length - 1, 2);
      // A single run against a suite, or nothing at all, is bad input.
      const single = join(root, 'single');
      await mkdir(single);
      await writeFile(join(single, 'result.json'), JSON.stringify(result2dc()));
      assert.equal((await runCli(['compare', base, single])).code, 2);
      const missing = await runCli(['compare', base, join(root, 'nothing')]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /nothing: no such file or directory/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
