import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InputError } from '../../src/util/input-error.js';
import { evaluateThreshold, evaluateThresholds } from '../../src/report/thresholds.js';
import { parseThreshold, parseThresholds, type Threshold } from '../../src/vocabulary/thresholds.js';
import { verdictFor, exitCodeFor } from '../../src/report/result.js';
import { result2dc } from './report-fixture.js';

/** Assert that parsing fails with an InputError (exit code 2) whose message has every fragment. */
function rejects(expr: string, ...fragments: string[]): void {
  assert.throws(
    () => parseThreshold(expr),
    (err: unknown) => {
      assert.ok(err instanceof InputError, `not an InputError: ${String(err)}`);
      assert.equal(err.exitCode, 2);
      assert.ok(err.message.includes(JSON.stringify(expr.trim())), `expression not named: ${err.message}`);
      for (const f of fragments) assert.ok(err.message.includes(f), `"${f}" not in: ${err.message}`);
      return true;
    },
    expr,
  );
}

describe('parsing thresholds', () => {
  it('reads path, operator and bound', () => {
    assert.deepEqual(parseThreshold('recovery.servingMs < 500'), {
      expr: 'recovery.servingMs < 500',
      path: ['recovery', 'servingMs'],
      op: '<',
      value: 500,
    });
    assert.deepEqual(parseThreshold('  latency.caltech.after.p99<=120 ').path, [
      'latency',
      'caltech',
      'after',
      'p99',
    ]);
    assert.equal(parseThreshold('  latency.caltech.after.p99<=120 ').expr, 'latency.caltech.after.p99<=120');
    assert.equal(parseThreshold('writes.lost == 0').op, '==');
    assert.equal(parseThreshold('load.achievedRate >= 990').value, 990);
    assert.equal(parseThreshold('writes.failed != 3').op, '!=');
    assert.equal(parseThreshold('load.achievedRate > 989.5').value, 989.5);
    assert.equal(parseThreshold('recovery.detectMs > -1').value, -1);
    assert.equal(parseThreshold('recovery.detectMs > .5').value, 0.5);
  });

  it('converts duration units to ms, and a bare number on a duration is ms', () => {
    assert.equal(parseThreshold('recovery.electedMs < 1.5s').value, 1500);
    assert.equal(parseThreshold('recovery.electedMs < 1.1s').value, 1100);
    assert.equal(parseThreshold('recovery.electedMs < 250ms').value, 250);
    assert.equal(parseThreshold('recovery.electedMs < 250 ms').value, 250);
    assert.equal(parseThreshold('latency.tud.after.p99 <= 0.12s').value, 120);
    assert.equal(parseThreshold('recovery.perDc.tud.outageMs < 2s').value, 2000);
    assert.equal(parseThreshold('links.tud.cern.measuredRttMs < 21ms').value, 21);
    assert.equal(parseThreshold('load.latenessP99Ms < 2ms').value, 2);
    assert.equal(parseThreshold('recovery.electedMs < 900').value, 900);
  });

  it('takes bracketed names for data centers with dots in them', () => {
    const t = parseThreshold('latency["us.east"].after.p99 < 40');
    assert.deepEqual(t.path, ['latency', 'us.east', 'after', 'p99']);
  });

  it('rejects unknown top-level keys, listing the known ones', () => {
    rejects(
      'recover.servingMs < 500',
      'unknown key "recover"',
      'known: ',
      'recovery',
      'latency',
      'writes',
      'load',
    );
    // A threshold on the thresholds' own results would be circular.
    rejects('thresholds.0.actual < 5', 'unknown key "thresholds"');
  });

  it('rejects unknown keys inside fixed groups, listing the group keys', () => {
    rejects('recovery.servngMs < 500', 'recovery has no key "servngMs"', 'servingMs', 'detectMs');
    rejects('latency.tud.after.p95 < 5', 'latency.tud.after has no key "p95"', 'p99', 'p999');
    rejects('writes.lostt == 0', 'writes has no key "lostt"', 'lost');
  });

  it('rejects paths that do not end at a number', () => {
    rejects('recovery < 5', 'recovery is a group of values', 'servingMs');
    rejects('latency.tud < 5', 'is a group of values');
    rejects('recovery.perDc < 5', 'recovery.perDc is a group of values');
    rejects('verdict == 1', 'verdict is not a number');
    rejects('leaders.elected == 4', 'leaders.elected is not a number');
    rejects('writes.lost.count == 0', 'writes.lost is a single value');
    rejects('timeline.seconds.first.p99Ms < 5', 'timeline.seconds is a list', 'index');
  });

  it('rejects bad operators, numbers and units, saying what is wrong', () => {
    rejects('', 'empty threshold');
    rejects('   ', 'empty threshold');
    rejects('recovery.servingMs', 'no comparison');
    rejects('recovery.servingMs = 500', 'use ==');
    rejects('recovery.servingMs => 500', 'use ==');
    rejects('recovery.servingMs ~ 500', 'expected one of < <= > >= == !=');
    rejects('recovery.servingMs <', 'expected a number after "<"');
    rejects('recovery.servingMs < fast', 'expected a number', '"fast"');
    rejects('recovery.servingMs < 1e3', 'expected a number', '"1e3"');
    rejects('recovery.servingMs < 5 5', 'expected a number');
    rejects('recovery.servingMs < 5min', 'unknown unit "min"', 'ms or s');
    rejects('writes.lost < 5s', 'writes.lost is not a duration');
    rejects('load.achievedRate >= 990ms', 'not a duration');
    rejects('< 500', 'expected a result path');
    rejects('recovery. < 500', 'expected a key after the "."');
    rejects('latency[us].after.p99 < 5', 'bracketed key');
  });

  it('names the source of the expression in the error', () => {
    assert.throws(
      () => parseThreshold('nope < 1', 'thresholds.txt'),
      (err: unknown) =>
        err instanceof InputError &&
        err.file === 'thresholds.txt' &&
        err.message.startsWith('thresholds.txt: '),
    );
    assert.throws(
      () => parseThresholds(['writes.lost == 0', 'nope < 1']),
      (err: unknown) => err instanceof InputError && err.message.startsWith('--threshold: "nope < 1"'),
    );
  });
});

describe('evaluating thresholds', () => {
  const result = result2dc();
  const check = (expr: string) => evaluateThreshold(parseThreshold(expr), result);

  it('compares the value at the path with every operator', () => {
    assert.deepEqual(check('recovery.servingMs < 1s'), {
      expr: 'recovery.servingMs < 1s',
      ok: true,
      actual: 702.125,
    });
    assert.equal(check('recovery.servingMs < 702.125').ok, false);
    assert.equal(check('recovery.servingMs <= 702.125').ok, true);
    assert.equal(check('recovery.servingMs > 702.125').ok, false);
    assert.equal(check('recovery.servingMs >= 702.125').ok, true);
    assert.equal(check('recovery.servingMs > 0.7s').ok, true);
    assert.equal(check('recovery.servingMs < 0.7s').ok, false);
    assert.equal(check('writes.lost == 0').ok, true);
    assert.equal(check('writes.lost != 0').ok, false);
    assert.equal(check('writes.failed == 60').ok, true);
    assert.deepEqual(check('latency.tud.after.p99 <= 20'), {
      expr: 'latency.tud.after.p99 <= 20',
      ok: false,
      actual: 23.35,
    });
    assert.equal(check('load.achievedRate >= 990').ok, true);
    assert.equal(check('links.tud.cern.measuredRttMs < 21ms').ok, true);
    assert.equal(check('leaders.scores.p4.1 == 15003').ok, true);
    assert.equal(check('timeline.seconds.16.errors == 57').ok, true);
  });

  it('fails a missing data center with actual null and a message naming what there is', () => {
    const r = check('latency.caltech.after.p99 < 120');
    assert.equal(r.ok, false);
    assert.equal(r.actual, null);
    assert.match(r.message ?? '', /latency has no "caltech"/);
    assert.match(r.message ?? '', /tud, cern/);
  });

  it('fails a value that was not observed (null) instead of passing it', () => {
    const broken = result2dc();
    broken.recovery.servingMs = null;
    broken.latency.tud!.after = null;
    const serving = evaluateThreshold(parseThreshold('recovery.servingMs < 500'), broken);
    assert.deepEqual(serving, {
      expr: 'recovery.servingMs < 500',
      ok: false,
      actual: null,
      message: 'recovery.servingMs was not observed (null)',
    });
    // `!=` must not pass on a missing value either.
    const gap = evaluateThreshold(parseThreshold('recovery.servingMs != 5'), broken);
    assert.equal(gap.ok, false);
    const after = evaluateThreshold(parseThreshold('latency.tud.after.p99 < 500'), broken);
    assert.equal(after.ok, false);
    assert.equal(after.actual, null);
    assert.match(after.message ?? '', /latency\.tud\.after has no "p99"/);
  });

  it('fails on a result that is not a result', () => {
    const t = parseThreshold('writes.lost == 0');
    assert.equal(evaluateThreshold(t, {}).ok, false);
    assert.match(evaluateThreshold(t, {}).message ?? '', /the result has no "writes"/);
    assert.equal(evaluateThreshold(t, { writes: { lost: '0' } }).message, 'writes.lost is not a number');
  });

  it('evaluates a list in order, and the verdict and exit code follow', () => {
    const ts: Threshold[] = parseThresholds(['writes.lost == 0', 'latency.tud.after.p99 <= 20']);
    const results = evaluateThresholds(ts, result);
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, false],
    );
    assert.equal(verdictFor(false, results), 'threshold-failed');
    assert.equal(verdictFor(false, results.slice(0, 1)), 'passed');
    assert.equal(verdictFor(false, []), 'passed');
    assert.equal(verdictFor(true, results.slice(0, 1)), 'run-failed');
    assert.deepEqual((['passed', 'threshold-failed', 'run-failed'] as const).map(exitCodeFor), [0, 1, 3]);
  });
});
