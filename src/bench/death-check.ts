// The cross-check of a failover's detection against a second clock: the harness's own sighting of
// the killed process reaped. Linux closes a dying process's sockets before it reaps it, and a
// member detects the death by the close, so a detection belongs no later than the reaping plus
// the member's own reaction (its event loop's turn); the harness, busy driving the load, often
// sees the reaping later still. A detection long after the reaping was not the close: a timeout,
// a wrong event or a wrong clock, and the detect figure would be wrong.

/** How much later than the reaping a detection may come (120 kills here: −42.5 to +3.1 ms). */
export const DETECT_AFTER_REAPED_MS = 10;

export interface DeathSighting {
  readonly detectMs: number;
  readonly goneMs: number;
}

export interface DeathCheck {
  readonly toleranceMs: number;
  readonly held: number;
  readonly of: number;
  /** detect − reaped over the kills, ms (null without kills). */
  readonly range: { readonly min: number; readonly max: number } | null;
  /** The kills (1-based) where it did not hold. */
  readonly failedKills: readonly number[];
}

/** Held where the detection is after the kill and at most `toleranceMs` after the reaping. */
export function checkDetectAgainstDeath(
  kills: readonly DeathSighting[],
  toleranceMs = DETECT_AFTER_REAPED_MS,
): DeathCheck {
  const failedKills: number[] = [];
  let min = Infinity;
  let max = -Infinity;
  kills.forEach((k, i) => {
    const d = k.detectMs - k.goneMs;
    min = Math.min(min, d);
    max = Math.max(max, d);
    if (!(k.detectMs > 0 && d <= toleranceMs)) failedKills.push(i + 1);
  });
  return {
    toleranceMs,
    held: kills.length - failedKills.length,
    of: kills.length,
    range: kills.length === 0 ? null : { min: round2(min), max: round2(max) },
    failedKills,
  };
}

/** One line for the bench's summary. */
export function describeDeathCheck(c: DeathCheck): string {
  const span =
    c.range === null ? '' : ` (detect − reaped ${signed(c.range.min)} to ${signed(c.range.max)} ms)`;
  const what = `every detection after the kill and within ${c.toleranceMs} ms after the harness saw the killed process reaped`;
  if (c.failedKills.length === 0) return `cross-check held: ${what}, ${c.held} of ${c.of} kills${span}`;
  return `cross-check FAILED: ${what}: held in ${c.held} of ${c.of} kills, not in kill ${c.failedKills.join(', ')}${span}; those detect figures are not the death's`;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function signed(x: number): string {
  return x > 0 ? `+${x}` : String(x);
}
