// A link as a run measured it, beside the round trip of the relay's undelayed route read over the
// same span: what the machine itself added to every pair then (relay-shaping.ts). A test holds
// the link less that, so a busy machine is not taken for a slow link; a missing or doubled delay
// still is.
import type { RunResult } from '../../src/report/result.js';

export interface LinkReading {
  /** The pair's median round trip, ms (NaN when not measured). */
  readonly measuredMs: number;
  /** The undelayed route's, in the reading the run kept (NaN when the run has none). */
  readonly undelayedMs: number;
  /** The first less the second. */
  readonly beyondMs: number;
  /** For a test's message. */
  readonly said: string;
}

export function linkReading(result: RunResult, a: string, b: string): LinkReading {
  const measuredMs = result.links[a]?.[b]?.measuredRttMs ?? NaN;
  const readings = result.linkReadings;
  const undelayedMs = readings?.readings[readings.kept]?.undelayedMs ?? NaN;
  return {
    measuredMs,
    undelayedMs,
    beyondMs: measuredMs - undelayedMs,
    said: `${a}→${b} measured ${measuredMs.toFixed(2)} ms, the undelayed route ${undelayedMs.toFixed(2)} (readings ${JSON.stringify(readings?.readings)})`,
  };
}
