// What every check of a run's own figures (checks/*.ts) is made of: the result it reads, how it says
// a violation or that it had nothing to hold, and the allowances several checks share. Each check
// is a file of its own; self-check.ts runs them all and lists each as held, violated or not
// evaluated.
import type { RunResult } from '../result.js';

export type CheckedResult = Omit<RunResult, 'selfCheck' | 'thresholds' | 'verdict'>;

/**
 * One check: `what` it holds (as result.json and the report list it) and `run`, which reads the
 * result and calls `fail` with the figures of each disagreement, or `skip` with why the run gave it
 * nothing to hold (a check that failed anything was evaluated whatever else it skipped).
 */
export interface Check {
  readonly id: string;
  readonly what: string;
  readonly run: (r: CheckedResult, fail: (why: string) => void, skip: (why: string) => void) => void;
}

/** Whether a load agent was lost: its writes are in none of the agents' counts. */
export const agentLost = (r: CheckedResult): boolean => Object.values(r.latency).some((l) => l.lost !== null);

/**
 * The outage is measured by the agents, the first commit by the new leader: different processes,
 * whose wall clocks (each the kernel's monotonic clock + an offset calibrated at its start,
 * util/wall-clock.ts) differ by well under this.
 */
export const CLOCK_SLACK_MS = 1;
/**
 * The floor against the window's mean less the model: max(this, FLOOR_SHARE of the floor, or
 * FLOOR_STANDARD_ERRORS standard errors of the traced writes' mean, from every write's spread: one
 * write in 64 of a short window is a small sample, and its mean strays from every write's by chance).
 */
export const FLOOR_SLACK_MS = 1;
export const FLOOR_SHARE = 0.2;
export const FLOOR_STANDARD_ERRORS = 3;
/** Fewer traced writes than this in a window are too few to hold every write's mean against. */
export const FLOOR_MIN_TRACED = 20;
/**
 * A measured link against its configured RTT, beyond what the machine's own round trip added then
 * (the undelayed route read beside it): max(this, LINK_SHARE of the RTT) + LINK_JITTERS times the
 * round trip's jitter (a median of a few dozen round trips strays with it, and a skewed
 * distribution's median sits below its mean). A doubled delay or a missing one is far outside.
 */
export const LINK_SLACK_MS = 2;
export const LINK_SHARE = 0.1;
export const LINK_JITTERS = 2;
/**
 * ZooKeeper's own election time against its log's: the lines are stamped to the ms, and a line is
 * logged a little after the time it brackets (seen within 1 ms in the fixtures' runs).
 */
export const TOOK_SLACK_MS = 5;
/**
 * ZooKeeper stops its election clock, records the figure in its metrics and only then logs "TOOK":
 * a thread preempted or a JVM paused between the two stamps that line late, which shortens its
 * figure against the lines' span and never lengthens it. Five JVMs electing at once on two cores
 * can log it several ms late; lines timed when read instead of when logged are late by tens of ms.
 */
export const TOOK_LOG_STALL_MS = 15;

/** The windows of a run's latency histograms. */
export const WINDOWS = ['warmup', 'before', 'degraded', 'during', 'after'] as const;
/** The latency histograms keep 3 significant digits: a figure read from one is within 1 %. */
export const HISTOGRAM_SLACK = 1.01;

/** A figure in a violation's words: ms to two decimals. */
export const f = (v: number): string => v.toFixed(2);

/** How far a link's reading may be from its configured RTT: max(2 ms, 10 %) + 2 jitters. */
export function linkAllowance(link: {
  readonly configuredRttMs: number;
  readonly jitterMs?: number;
}): number {
  return Math.max(LINK_SLACK_MS, LINK_SHARE * link.configuredRttMs) + LINK_JITTERS * (link.jitterMs ?? 0);
}
