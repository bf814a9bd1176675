import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Random } from '../../src/util/random.js';
import {
  DELAY_DISTRIBUTIONS,
  createDelaySampler,
  type DelayDistribution,
  type LinkDelay,
} from '../../src/shaping/relay/delay-distribution.js';

const N = 200_000;

function draw(link: LinkDelay, seed = 7, n = N): number[] {
  const sample = createDelaySampler(link, new Random(seed));
  return Array.from({ length: n }, () => sample());
}

function moments(xs: readonly number[]): { mean: number; sd: number; min: number; max: number } {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length);
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { mean, sd, min, max };
}

describe('delay samplers', () => {
  it('jitter 0 gives the constant delay for every distribution', () => {
    for (const distribution of DELAY_DISTRIBUTIONS) {
      const xs = draw({ delayMs: 12.5, jitterMs: 0, distribution }, 1, 100);
      assert.ok(
        xs.every((x) => x === 12.5),
        distribution,
      );
    }
  });

  it('every distribution has the configured mean, and jitter as its spread', () => {
    for (const distribution of DELAY_DISTRIBUTIONS) {
      const { mean, sd } = moments(draw({ delayMs: 20, jitterMs: 2, distribution }));
      assert.ok(Math.abs(mean - 20) < 0.03, `${distribution}: mean ${mean}`);
      // uniform ±j has sd j/√3; the others have sd j.
      const want = distribution === 'uniform' ? 2 / Math.sqrt(3) : 2;
      assert.ok(Math.abs(sd - want) / want < 0.03, `${distribution}: sd ${sd}, want ${want}`);
    }
  });

  it('uniform stays within mean ± jitter and fills it evenly', () => {
    const xs = draw({ delayMs: 10, jitterMs: 3, distribution: 'uniform' });
    const { min, max } = moments(xs);
    assert.ok(min >= 7 && max < 13, `${min}..${max}`);
    const lowThird = xs.filter((x) => x < 9).length / xs.length;
    assert.ok(Math.abs(lowThird - 1 / 3) < 0.01, `share below 9: ${lowThird}`);
  });

  it('normal is symmetric with the normal tail (2.3 % beyond 2 sd)', () => {
    const xs = draw({ delayMs: 50, jitterMs: 5, distribution: 'normal' });
    const right = xs.filter((x) => x > 60).length / xs.length;
    const left = xs.filter((x) => x < 40).length / xs.length;
    assert.ok(Math.abs(right - 0.0228) < 0.003, `right ${right}`);
    assert.ok(Math.abs(left - 0.0228) < 0.003, `left ${left}`);
  });

  it('pareto and paretonormal are heavy on the late side only', () => {
    const beyond4sd = (xs: readonly number[]) => ({
      late: xs.filter((x) => x > 50 + 4 * 5).length / xs.length,
      early: xs.filter((x) => x < 50 - 4 * 5).length / xs.length,
    });
    const normal = beyond4sd(draw({ delayMs: 50, jitterMs: 5, distribution: 'normal' }));
    for (const distribution of ['pareto', 'paretonormal'] as DelayDistribution[]) {
      const t = beyond4sd(draw({ delayMs: 50, jitterMs: 5, distribution }));
      const floor = 10 * Math.max(normal.late, t.early, 1 / N);
      assert.ok(
        t.late > floor,
        `${distribution}: ${t.late} beyond +4 sd, early ${t.early}, normal ${normal.late}`,
      );
    }
    // Pareto has a floor: nothing earlier than mean - 0.66 sd (the scale of the shape-3 variable).
    const { min } = moments(draw({ delayMs: 50, jitterMs: 5, distribution: 'pareto' }));
    assert.ok(min > 50 - 0.67 * 5 && min < 50 - 0.6 * 5, `pareto min ${min}`);
  });

  it('repeats exactly from a seed and differs across seeds', () => {
    for (const distribution of DELAY_DISTRIBUTIONS) {
      const link: LinkDelay = { delayMs: 5, jitterMs: 1, distribution };
      assert.deepEqual(draw(link, 42, 1000), draw(link, 42, 1000), distribution);
      assert.notDeepEqual(draw(link, 42, 1000), draw(link, 43, 1000), distribution);
    }
  });

  it('clamps negative delays to 0', () => {
    for (const distribution of DELAY_DISTRIBUTIONS) {
      const xs = draw({ delayMs: 1, jitterMs: 5, distribution }, 3, 50_000);
      const { min } = moments(xs);
      assert.equal(min, 0, `${distribution}: min ${min}`);
      assert.ok(
        xs.some((x) => x > 1),
        distribution,
      );
    }
  });

  it('rejects a negative or non-finite delay or jitter, and unknown distributions', () => {
    const rng = new Random(1);
    assert.throws(
      () => createDelaySampler({ delayMs: -1, jitterMs: 0, distribution: 'normal' }, rng),
      RangeError,
    );
    assert.throws(
      () => createDelaySampler({ delayMs: 1, jitterMs: -1, distribution: 'normal' }, rng),
      RangeError,
    );
    assert.throws(
      () => createDelaySampler({ delayMs: NaN, jitterMs: 0, distribution: 'normal' }, rng),
      RangeError,
    );
    assert.throws(
      () => createDelaySampler({ delayMs: 1, jitterMs: 1, distribution: 'gamma' as DelayDistribution }, rng),
      /unknown delay distribution 'gamma'/,
    );
  });
});
