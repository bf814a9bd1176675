// The measured oracles: consensus (θc), latency (θl), worst-case (θw), lower is better, and request
// (θr), higher is better. The formulas live in score-formulas.ts; this file turns them into score
// vectors the election can compare and carry in proposals.
//
// A score vector is [class, key, value]:
// - class 2, measured: key orders the candidates (higher key = better; lower-is-better scores are
//   negated), value is the score itself in ms (or requests/s), kept for reports only. With a band
//   ("latency:10ms") the key is the band index, so every score within one band is equivalent and the
//   next part of a combined oracle (or the sid) decides: the paper's equivalence classes (section 5).
// - class 1, not measured yet: the node has no RTT to a quorum (just started, heartbeats not
//   answered yet). It scores itself like the history oracle: [1, zxid epoch, zxid counter]. Any
//   measured score beats it, so a node that cannot judge itself never wins over one that can.
// - class 0, cannot lead: measured, but fewer than a quorum of servers answer it.
// Values are rounded to the microsecond (the clock's resolution), so servers whose links are equal
// score equal instead of differing in the last bits of a float sum, and the sid breaks the tie as it
// does for history.
import type { Score } from '../types.js';
import type { Oracle, ScoreContext } from './oracle.js';
import { measuredScores, without, type MeasuredScores } from './score-formulas.js';

export const MEASURED = 2;
export const NOT_MEASURED = 1;
export const CANNOT_LEAD = 0;

export type MeasuredOracleName = 'consensus' | 'latency' | 'worst-case' | 'request';

interface Definition {
  readonly pick: (s: MeasuredScores) => number | undefined;
  readonly lowerIsBetter: boolean;
  /** What the band argument is measured in. */
  readonly unit: 'ms' | 'rate';
  /** Whether the score needs RTTs (request needs only the node's own request counter). */
  readonly needsRtt: boolean;
}

const DEFINITIONS: Record<MeasuredOracleName, Definition> = {
  consensus: { pick: (s) => s.consensus, lowerIsBetter: true, unit: 'ms', needsRtt: true },
  latency: { pick: (s) => s.latency, lowerIsBetter: true, unit: 'ms', needsRtt: true },
  'worst-case': { pick: (s) => s.worstCase, lowerIsBetter: true, unit: 'ms', needsRtt: true },
  request: { pick: (s) => s.request, lowerIsBetter: false, unit: 'rate', needsRtt: false },
};

export const MEASURED_ORACLE_NAMES = Object.keys(DEFINITIONS) as MeasuredOracleName[];

export function roundMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The scores of `ctx.self` over N' (RTT_i and F_i without the excluded servers). */
export function scoresInContext(ctx: ScoreContext): MeasuredScores | undefined {
  if (ctx.rttMs === undefined) return undefined;
  const rttMs = without(ctx.rttMs, ctx.excluded);
  rttMs.set(ctx.self, 0);
  const requestRates = ctx.requestRates ? without(ctx.requestRates, ctx.excluded) : undefined;
  return measuredScores(ctx.self, requestRates ? { rttMs, requestRates } : { rttMs }, ctx.members.length);
}

/**
 * `band`: width of an equivalence class in the score's unit (ms, or requests/s for request);
 * undefined for none.
 */
export function createMeasuredOracle(name: MeasuredOracleName, band?: number, spec: string = name): Oracle {
  const def = DEFINITIONS[name];
  if (band !== undefined && !(band > 0 && Number.isFinite(band)))
    throw new Error(`${name}: a band must be a positive number, got ${band}`);
  return {
    name: spec,
    measured: def.needsRtt,
    score: (ctx: ScoreContext): Score => {
      let value: number | undefined;
      if (def.needsRtt) {
        const scores = ctx.measurementsReady === false ? undefined : scoresInContext(ctx);
        if (scores === undefined) return [NOT_MEASURED, ctx.lastZxid.epoch, ctx.lastZxid.counter];
        value = def.pick(scores);
        if (value === undefined) return [CANNOT_LEAD];
      } else {
        // θr is the node's own counter: known from the start (0 before any client writes).
        value = ctx.requestRates?.get(ctx.self) ?? 0;
      }
      const v = roundMicros(value);
      const banded = band === undefined ? v : Math.floor(v / band);
      return [MEASURED, def.lowerIsBetter ? -banded : banded, v];
    },
    compare: compareMeasured,
    gain: (a: Score, b: Score): number => {
      // Relative improvement of a over b, for resignation's margin; 0 unless both are measured.
      if (compareMeasured(a, b) <= 0) return 0;
      if (a[0] !== MEASURED || b[0] !== MEASURED) return Infinity;
      const va = a[2] as number;
      const vb = b[2] as number;
      if (def.lowerIsBetter) return vb > 0 ? (vb - va) / vb : 0;
      return vb > 0 ? (va - vb) / vb : va > 0 ? Infinity : 0;
    },
  };
}

/** Class first; within "measured" only the key counts (the value is for reports); else lexicographic. */
export function compareMeasured(a: Score, b: Score): number {
  const ca = a[0] ?? CANNOT_LEAD;
  const cb = b[0] ?? CANNOT_LEAD;
  if (ca !== cb) return ca > cb ? 1 : -1;
  if (ca === MEASURED) return Math.sign((a[1] ?? 0) - (b[1] ?? 0));
  const len = Math.max(a.length, b.length);
  for (let i = 1; i < len; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y ? 1 : -1;
  }
  return 0;
}

/**
 * Parses a band argument: "10ms", "1.5ms", "0.5s" for ms-valued scores; a plain number ("100") for
 * request rates. Returns the band in ms (or requests/s).
 */
export function parseBand(name: MeasuredOracleName, arg: string): number {
  const def = DEFINITIONS[name];
  if (def.unit === 'rate') {
    const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(arg);
    if (!m) throw new Error(`band for ${name} must be a rate like "100" or "100/s", got "${arg}"`);
    return Number(m[1]);
  }
  const m = /^(\d+(?:\.\d+)?)(ms|s|us)$/.exec(arg);
  if (!m) throw new Error(`band for ${name} must be a duration like "10ms", got "${arg}"`);
  const scale = m[2] === 's' ? 1000 : m[2] === 'us' ? 0.001 : 1;
  return Number(m[1]) * scale;
}

/** The score vector's value for display: ms or rate for measured, undefined otherwise. */
export function measuredValue(score: Score): number | undefined {
  return score[0] === MEASURED ? score[2] : undefined;
}

export function isMeasuredOracleName(name: string): name is MeasuredOracleName {
  return Object.hasOwn(DEFINITIONS, name);
}
