import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OpenLoopSchedule, intendedTimes } from '../../src/load/open-loop-schedule.js';

describe('open-loop schedule', () => {
  it('constant: exactly rate × duration writes, evenly spaced from the start, without drift', () => {
    const times = intendedTimes({ rate: 5000, arrival: 'constant', startMs: 1000 }, 1000 + 10_000);
    assert.equal(times.length, 50_000);
    assert.equal(times[0], 1000);
    for (let k = 1; k < times.length; k++) {
      assert.ok(Math.abs(times[k]! - times[k - 1]! - 0.2) < 1e-9, `gap ${k}`);
    }
    // The k-th time is computed, not accumulated: no floating-point drift after 50,000 gaps.
    assert.equal(times[49_999], 1000 + 49_999 * 0.2);
  });

  it('constant: a fractional rate keeps its mean', () => {
    const times = intendedTimes({ rate: 3, arrival: 'constant', startMs: 0 }, 60_000);
    assert.equal(times.length, 180);
    assert.ok(Math.abs(times[179]! - 179 * (1000 / 3)) < 1e-9);
  });

  it('poisson: the mean gap is 1000/rate and the gaps vary like an exponential distribution', () => {
    const rate = 2000;
    const times = intendedTimes({ rate, arrival: 'poisson', startMs: 0, seed: 42 }, 100_000);
    const n = times.length;
    // 200,000 expected; a Poisson count has sd √200000 ≈ 447, so 1 % is > 4 sd.
    assert.ok(Math.abs(n - 200_000) < 2_000, `count ${n}`);
    const gaps = times.map((t, i) => t - (i === 0 ? 0 : times[i - 1]!));
    const mean = gaps.reduce((a, b) => a + b, 0) / n;
    assert.ok(Math.abs(mean - 0.5) < 0.005, `mean gap ${mean}`);
    // Exponential: sd equals the mean, and P(gap > mean) = e^-1.
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / n);
    assert.ok(Math.abs(sd / mean - 1) < 0.02, `sd/mean ${sd / mean}`);
    const above = gaps.filter((g) => g > 0.5).length / n;
    assert.ok(Math.abs(above - Math.exp(-1)) < 0.01, `share above the mean ${above}`);
    assert.ok(gaps.every((g) => g >= 0));
  });

  it('poisson: the same seed gives the same times, another seed other times', () => {
    const a = intendedTimes({ rate: 1000, arrival: 'poisson', startMs: 5, seed: 7 }, 1005);
    const b = intendedTimes({ rate: 1000, arrival: 'poisson', startMs: 5, seed: 7 }, 1005);
    const c = intendedTimes({ rate: 1000, arrival: 'poisson', startMs: 5, seed: 8 }, 1005);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(a[0]! > 5, 'the first write comes one gap after the start');
  });

  it('peek does not consume; take advances and counts', () => {
    const s = new OpenLoopSchedule({ rate: 100, arrival: 'constant', startMs: 0 });
    assert.equal(s.peek(), 0);
    assert.equal(s.peek(), 0);
    assert.equal(s.take(), 0);
    assert.equal(s.take(), 10);
    assert.equal(s.peek(), 20);
    assert.equal(s.taken, 2);
  });

  it('rejects a rate that is not positive', () => {
    assert.throws(() => new OpenLoopSchedule({ rate: 0, arrival: 'constant', startMs: 0 }), RangeError);
    assert.throws(() => new OpenLoopSchedule({ rate: -5, arrival: 'poisson', startMs: 0 }), RangeError);
    assert.throws(() => new OpenLoopSchedule({ rate: NaN, arrival: 'poisson', startMs: 0 }), RangeError);
  });
});
