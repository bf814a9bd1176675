// One-way delay samplers for the userspace relay, with netem's vocabulary: a mean delay, a jitter
// and a distribution. netem adds `jitter × t` to the mean, where t is drawn from a table of a
// standardised distribution; these samplers do the same with t computed directly:
// - normal:       t ~ N(0, 1)
// - uniform:      mean ± jitter, flat (t uniform on [-1, 1), as netem does without a table)
// - pareto:       t = a Pareto(α = 3) variable, capped, shifted and scaled to mean 0 and standard
//                 deviation 1: the tail is long on the late side only, as on a WAN link
// - paretonormal: ¾ normal + ¼ pareto (independent parts), rescaled to standard deviation 1
// The mean of every distribution is the configured delay (before the clamp at 0), so the
// configured RTT is what a run should measure when jitter is small next to the delay.
import type { Random } from '../../util/random.js';

export type DelayDistribution = 'pareto' | 'paretonormal' | 'normal' | 'uniform';

export const DELAY_DISTRIBUTIONS: readonly DelayDistribution[] = [
  'pareto',
  'paretonormal',
  'normal',
  'uniform',
];

export interface LinkDelay {
  /** Mean one-way delay, ms. */
  readonly delayMs: number;
  /** Spread around the mean, ms (standard deviation for the table-like distributions, half-width for uniform). */
  readonly jitterMs: number;
  readonly distribution: DelayDistribution;
}

// Pareto shape 3 (finite variance, heavy tail, like netem's table) capped at 10× its scale: the cap
// is hit by 1 sample in 1000 and keeps a single sample from holding a direction for seconds. The
// moments of the capped variable X = min(U^(-1/α), c) are exact, so the standardised t has mean 0
// and standard deviation 1:  E[X] = 1 + (1 - c^(1-α))/(α-1),  E[X²] = 1 + 2(1 - c^(2-α))/(α-2).
const PARETO_ALPHA = 3;
const PARETO_CAP = 10;
const PARETO_MEAN = 1 + (1 - PARETO_CAP ** (1 - PARETO_ALPHA)) / (PARETO_ALPHA - 1);
const PARETO_SD = Math.sqrt(
  1 + (2 * (1 - PARETO_CAP ** (2 - PARETO_ALPHA))) / (PARETO_ALPHA - 2) - PARETO_MEAN ** 2,
);
const PARETONORMAL_NORMAL_WEIGHT = 0.75;
const PARETONORMAL_SCALE = Math.sqrt(PARETONORMAL_NORMAL_WEIGHT ** 2 + (1 - PARETONORMAL_NORMAL_WEIGHT) ** 2);

/** Throws when a link's numbers cannot describe a delay. */
export function validateLinkDelay(link: LinkDelay): void {
  if (!Number.isFinite(link.delayMs) || link.delayMs < 0) {
    throw new RangeError(`delay must be a finite number of ms >= 0, got ${link.delayMs}`);
  }
  if (!Number.isFinite(link.jitterMs) || link.jitterMs < 0) {
    throw new RangeError(`jitter must be a finite number of ms >= 0, got ${link.jitterMs}`);
  }
  if (!DELAY_DISTRIBUTIONS.includes(link.distribution)) {
    throw new RangeError(
      `unknown delay distribution '${String(link.distribution)}' (one of ${DELAY_DISTRIBUTIONS.join(', ')})`,
    );
  }
}

/** A function that draws one one-way delay in ms (>= 0) per call. */
export function createDelaySampler(link: LinkDelay, rng: Random): () => number {
  validateLinkDelay(link);
  const { delayMs, jitterMs } = link;
  if (jitterMs === 0) return () => delayMs;
  const standard = standardSampler(link.distribution, rng);
  return () => Math.max(0, delayMs + jitterMs * standard());
}

/** Draws t with mean 0 and the distribution's unit spread. */
function standardSampler(distribution: DelayDistribution, rng: Random): () => number {
  switch (distribution) {
    case 'uniform':
      return () => 2 * rng.next() - 1;
    case 'normal':
      return normalSampler(rng);
    case 'pareto':
      return () => pareto(rng);
    case 'paretonormal': {
      const normal = normalSampler(rng);
      return () =>
        (PARETONORMAL_NORMAL_WEIGHT * normal() + (1 - PARETONORMAL_NORMAL_WEIGHT) * pareto(rng)) /
        PARETONORMAL_SCALE;
    }
  }
}

/** Box–Muller: each pair of uniforms gives two independent N(0, 1); the second is kept for the next call. */
function normalSampler(rng: Random): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - rng.next())); // 1 - next() is in (0, 1]: no log(0)
    const angle = 2 * Math.PI * rng.next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}

function pareto(rng: Random): number {
  const x = Math.min(PARETO_CAP, (1 - rng.next()) ** (-1 / PARETO_ALPHA));
  return (x - PARETO_MEAN) / PARETO_SD;
}
