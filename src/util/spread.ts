// The summary of a few repeated measurements the benches report: median, least and most.

/** The median of `xs` (the mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface MinMedianMax {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Median, min and max of `xs`; all NaN for none. */
export function spread(xs: readonly number[]): MinMedianMax {
  return {
    median: median(xs),
    min: xs.length ? Math.min(...xs) : NaN,
    max: xs.length ? Math.max(...xs) : NaN,
  };
}
