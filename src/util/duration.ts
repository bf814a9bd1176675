// Durations and percentages as people write them in topology files: "9.88ms", "120s", "1.5s",
// "500us", "2m", "2%". A unit is always required: a bare "10" could mean ms or s, and guessing
// wrong by a factor of 1000 would make a run silently meaningless.

const UNIT_MS = {
  us: 0.001,
  µs: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
} as const;

type Unit = keyof typeof UNIT_MS;

/** A non-negative decimal number followed by a unit. Exported as a source string for the JSON Schema. */
export const DURATION_PATTERN = '^(\\d+(?:\\.\\d+)?|\\.\\d+)\\s*(us|µs|ms|s|m|h)$';
/** A non-negative decimal number followed by "%". */
export const PERCENT_PATTERN = '^(\\d+(?:\\.\\d+)?|\\.\\d+)\\s*%$';

const DURATION_RE = new RegExp(DURATION_PATTERN);
const PERCENT_RE = new RegExp(PERCENT_PATTERN);

/** What a duration looks like, for error messages. */
export const DURATION_HINT = 'a duration with a unit, like "9.88ms", "1.5s", "500us" or "2m"';

export class DurationError extends Error {
  override readonly name = 'DurationError';
}

export function isDuration(text: string): boolean {
  return DURATION_RE.test(text.trim());
}

export function isPercent(text: string): boolean {
  return PERCENT_RE.test(text.trim());
}

/** "9.88ms" → 9.88, "2m" → 120000. Throws DurationError on anything else (negative, no unit, junk). */
export function parseDuration(text: string): number {
  const m = DURATION_RE.exec(text.trim());
  if (!m) throw new DurationError(`expected ${DURATION_HINT}, got ${JSON.stringify(text)}`);
  const value = Number(m[1]) * UNIT_MS[m[2] as Unit];
  if (!Number.isFinite(value)) throw new DurationError(`duration ${JSON.stringify(text)} is too large`);
  // Round away binary noise from the unit scaling (0.001 * 500 = 0.5000000000000001), keeping ns.
  return Math.round(value * 1e6) / 1e6;
}

/** "2%" → 0.02. Throws DurationError on anything else. */
export function parsePercent(text: string): number {
  const m = PERCENT_RE.exec(text.trim());
  if (!m) throw new DurationError(`expected a percentage like "2%", got ${JSON.stringify(text)}`);
  return Number(m[1]) / 100;
}

/** A duration for people: 9.88 → "9.88ms", 120000 → "120s", 0.5 → "500us". */
export function formatDuration(ms: number): string {
  const trim = (n: number): string => String(Math.round(n * 1000) / 1000);
  if (ms !== 0 && Math.abs(ms) < 1) return `${trim(ms * 1000)}us`;
  if (Math.abs(ms) < 1000) return `${trim(ms)}ms`;
  return `${trim(ms / 1000)}s`;
}
