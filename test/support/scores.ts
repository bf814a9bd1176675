// What history-like oracles elect, read from a run's own scores: the candidates with the greatest
// score vector (lexicographically), ties to the highest id, as POLE's history rule breaks them.
/** The candidates whose score vector is the greatest (lexicographically), in id order. */
export function topScored(scores: Readonly<Record<string, readonly number[]>>): string[] {
  const cmp = (a: readonly number[], b: readonly number[]): number => {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = (a[i] ?? -Infinity) - (b[i] ?? -Infinity);
      if (d !== 0) return d;
    }
    return 0;
  };
  const entries = Object.entries(scores);
  const best = entries.reduce<readonly number[] | undefined>(
    (m, [, s]) => (m === undefined || cmp(s, m) > 0 ? s : m),
    undefined,
  );
  return entries
    .filter(([, s]) => best !== undefined && cmp(s, best) === 0)
    .map(([id]) => id)
    .sort();
}
