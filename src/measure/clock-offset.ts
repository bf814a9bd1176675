// Another host's clocks against the harness's: the offset (remote − harness) of each, how sure we
// are of it, and the mapping of its timestamps onto the harness's clock. Pure functions; the probes
// that feed them are clock-probe.ts's.
//
// A probe is one round trip: the harness reads its clock (sentMs), asks, the remote reads its own
// (remoteMs), the harness reads its clock again when the answer is in (receivedMs). The remote read
// its clock at some harness instant t in [sentMs, receivedMs], so the true offset remoteMs − t lies
// in [remoteMs − receivedMs, remoteMs − sentMs]: the midpoint remoteMs − (sentMs + receivedMs)/2,
// give or take RTT/2. That bound needs no assumption about the two directions being alike (NTP's
// estimate does assume it; its bound does not). The probe with the smallest RTT gives the tightest
// bound, so of a burst of probes that one is kept (NTP's clock filter does the same).
//
// Clocks drift apart (quartz is off by tens of ppm, and NTP steers each host's rate), so a run
// measures twice: before the load and after it. Between the two, the offset is taken to change at
// a constant rate (linear interpolation in harness time); the bound is then the same interpolation
// of the two bounds, which holds for any error within them. With one estimate only, the bound grows
// by an assumed drift rate (ASSUMED_DRIFT_PPM) with the distance from it.
//
// Two clocks are stamped with, and each is estimated the same way from the same round trips:
// - wall: util/wall-clock.ts wallNowMs (monotonic time + an offset calibrated at the process's
//   start), what the members' events and the agents'
//   instants carry: the host's real-time clock when the process started plus monotonic time since.
//   It follows the host's NTP rate corrections but not a step of the host's clock after the process
//   started, so an offset belongs to a process, strictly: processes on one host share it unless
//   the host's clock was stepped between their starts.
// - mono: CLOCK_MONOTONIC (process.hrtime), what the traced writes' steps carry (node/trace/,
//   the agents' traces): one per kernel, counted from its boot, so between hosts it is off by their
//   boot times, and within a host every process shares it.
// Both are measured against the harness's wall clock (the round trip's ends are read on it), so a
// stamp of either kind, corrected, lands on that one time axis: the harness's wall clock advances
// as its monotonic clock does, so durations between corrected stamps are what they were.

import type { ClockOffsets } from '../vocabulary/clock-offsets.js';

export interface ClockProbe {
  /** Harness wall ms when the question left. */
  readonly sentMs: number;
  /** The remote's clock (wall or monotonic) in its answer, ms. */
  readonly remoteMs: number;
  /** Harness wall ms when the answer was in. */
  readonly receivedMs: number;
}

export interface OffsetEstimate {
  /** Remote clock − harness clock, ms: a remote stamp minus this is harness time. */
  readonly offsetMs: number;
  /** The true offset is within offsetMs ± this (half the chosen probe's RTT). */
  readonly uncertaintyMs: number;
  /** Harness wall ms at which the estimate holds (the chosen probe's midpoint). */
  readonly atMs: number;
  /** The chosen probe's round trip, ms. */
  readonly rttMs: number;
  /** How many probes it was chosen from. */
  readonly probes: number;
}

/**
 * Drift assumed when a host has only one estimate: a quartz oscillator's usual tolerance (±100
 * ppm is a common rating for a PC's), a guess for a clock that NTP does not steer. A host with a
 * "before" and an "after" estimate needs no guess: its drift is measured.
 */
export const ASSUMED_DRIFT_PPM = 100;

/** The estimate from a burst of probes: the one with the smallest round trip. */
export function estimateOffset(probes: readonly ClockProbe[]): OffsetEstimate {
  if (probes.length === 0) throw new RangeError('no clock probes to estimate an offset from');
  let best: ClockProbe | undefined;
  for (const p of probes) {
    if (![p.sentMs, p.remoteMs, p.receivedMs].every(Number.isFinite)) {
      throw new RangeError(`clock probe with a time that is not a number: ${JSON.stringify(p)}`);
    }
    if (p.receivedMs < p.sentMs) {
      throw new RangeError(`clock probe answered before it was sent: ${JSON.stringify(p)}`);
    }
    if (best === undefined || p.receivedMs - p.sentMs < best.receivedMs - best.sentMs) best = p;
  }
  const b = best!;
  const rttMs = b.receivedMs - b.sentMs;
  const atMs = (b.sentMs + b.receivedMs) / 2;
  return { offsetMs: b.remoteMs - atMs, uncertaintyMs: rttMs / 2, atMs, rttMs, probes: probes.length };
}

/** One clock of a host (for the wall clock strictly: of a process) over a run. */
export interface HostClock {
  readonly before: OffsetEstimate;
  /** Measured after the load; null when it could not be (the drift is then assumed). */
  readonly after: OffsetEstimate | null;
  /** Measured drift, (after − before) / elapsed, in µs per s (ppm); null without `after`. */
  readonly driftPpm: number | null;
  /** ± on driftPpm: the two bounds over the time between them. */
  readonly driftUncertaintyPpm: number | null;
}

/** A host's clock from its "before" estimate and, if there is one, its "after" estimate. */
export function hostClock(before: OffsetEstimate, after: OffsetEstimate | null = null): HostClock {
  if (after === null || after.atMs === before.atMs) {
    return { before, after: null, driftPpm: null, driftUncertaintyPpm: null };
  }
  // Kept in time order, whichever was passed as which.
  const [a, b] = after.atMs > before.atMs ? [before, after] : [after, before];
  const span = b.atMs - a.atMs;
  return {
    before: a,
    after: b,
    driftPpm: ((b.offsetMs - a.offsetMs) / span) * 1e6,
    driftUncertaintyPpm: ((a.uncertaintyMs + b.uncertaintyMs) / span) * 1e6,
  };
}

/**
 * The harness's own clock as a HostClock: offset 0, exactly. Stamps the harness made need no
 * correction, and an interval between one of them and a remote stamp is as uncertain as the
 * remote's offset alone.
 */
export const HARNESS_CLOCK: HostClock = hostClock({
  offsetMs: 0,
  uncertaintyMs: 0,
  atMs: 0,
  rttMs: 0,
  probes: 0,
});

/** A clock's offset at harness wall time `atMs`, with its ± (see the file's head for how). */
export function offsetAt(clock: HostClock, atMs: number): { offsetMs: number; uncertaintyMs: number } {
  if (clock === HARNESS_CLOCK) return { offsetMs: 0, uncertaintyMs: 0 };
  const a = clock.before;
  const b = clock.after;
  if (b === null) {
    const driftMs = (Math.abs(atMs - a.atMs) * ASSUMED_DRIFT_PPM) / 1e6;
    return { offsetMs: a.offsetMs, uncertaintyMs: a.uncertaintyMs + driftMs };
  }
  // offset = (1 − f)·a + f·b; an error within ±ua and ±ub moves it by at most |1 − f|·ua + |f|·ub,
  // which also holds outside [a, b] (f < 0 or > 1), where the bound grows as the line is extended.
  const f = (atMs - a.atMs) / (b.atMs - a.atMs);
  return {
    offsetMs: (1 - f) * a.offsetMs + f * b.offsetMs,
    uncertaintyMs: Math.abs(1 - f) * a.uncertaintyMs + Math.abs(f) * b.uncertaintyMs,
  };
}

/** A stamp from the host's clock (the kind `clock` is of), as harness wall ms, with its ±. */
export function toHarnessMs(remoteMs: number, clock: HostClock): { ms: number; uncertaintyMs: number } {
  // The offset is a function of harness time, which is what we are after: remoteMs − offset(before)
  // is within a few ms of it, and at any drift a clock can have, ms move the offset by ns.
  const near = remoteMs - clock.before.offsetMs;
  const { offsetMs, uncertaintyMs } = offsetAt(clock, near);
  return { ms: remoteMs - offsetMs, uncertaintyMs };
}

/**
 * The ± of a duration between a stamp from clock `from` and a later one from clock `to`, both
 * corrected, around harness time `atMs`: the two offsets' bounds add up, unless both stamps come
 * from the same clock (pass the same object), where the offset cancels and only drift is left (at
 * 100 ppm, 0.1 ms over a second: not counted).
 */
export function intervalUncertaintyMs(from: HostClock, to: HostClock, atMs: number): number {
  if (from === to) return 0;
  return offsetAt(from, atMs).uncertaintyMs + offsetAt(to, atMs).uncertaintyMs;
}

/** The report's rule: a figure whose uncertainty is larger than a tenth of its value says so. */
export const UNCERTAINTY_RULE_FRACTION = 0.1;

/**
 * What a figure must say about its clock uncertainty: null when the ± is within a tenth of the
 * value, else a few words to print beside it, e.g. "± 2.4 ms (clocks), more than a tenth of 12.0 ms".
 */
export function uncertaintyNote(valueMs: number, uncertaintyMs: number): string | null {
  if (!(uncertaintyMs > UNCERTAINTY_RULE_FRACTION * Math.abs(valueMs))) return null;
  return `± ${fmt(uncertaintyMs)} ms (clocks), more than a tenth of ${fmt(valueMs)} ms`;
}

function fmt(ms: number): string {
  return Math.abs(ms) >= 100 ? ms.toFixed(0) : Math.abs(ms) >= 1 ? ms.toFixed(1) : ms.toFixed(3);
}

/** A burst's estimates of a host's two clocks (clock-probe.ts probeClock). */
export interface ClockEstimates {
  readonly wall: OffsetEstimate;
  readonly mono: OffsetEstimate;
}

/** The offsets a burst's estimates give. */
export function offsetsOf(e: ClockEstimates): ClockOffsets {
  return { wallMs: e.wall.offsetMs, monoMs: e.mono.offsetMs };
}

/** A host's two clocks over a run. */
export interface HostClocks {
  readonly wall: HostClock;
  readonly mono: HostClock;
}

export function hostClocks(before: ClockEstimates, after: ClockEstimates | null = null): HostClocks {
  return {
    wall: hostClock(before.wall, after?.wall ?? null),
    mono: hostClock(before.mono, after?.mono ?? null),
  };
}

// --- in result.json (report/result.ts `clocks`) ------------------------------------------------

/** An estimate of the wall clock as result.json keeps it: `at` as ISO 8601, like every wall time there. */
export interface ClockEstimateInfo {
  readonly at: string;
  readonly offsetMs: number;
  /** The monotonic clock's offset from the harness's wall clock, from the same round trip (same ±). */
  readonly monoOffsetMs: number;
  readonly uncertaintyMs: number;
  readonly rttMs: number;
  readonly probes: number;
}

export interface HostClockInfo {
  readonly before: ClockEstimateInfo;
  readonly after: ClockEstimateInfo | null;
  /** The wall clock's drift against the harness's, and its ±. */
  readonly driftPpm: number | null;
  readonly driftUncertaintyPpm: number | null;
  /**
   * Another host of the report that runs on the same kernel (a load agent and its node's fault
   * helper): both read one monotonic clock, so their monotonic offsets must agree within their ±
   * (the self-check holds them to it).
   */
  readonly sharesKernelWith?: string;
}

/** Every clock a run's timestamps came from, other than the harness's, by host name. */
export interface ClockReport {
  /** How the offsets were measured and combined, in words (shown in the report). */
  readonly method: string;
  readonly hosts: Readonly<Record<string, HostClockInfo>>;
}

export const CLOCK_METHOD =
  'remote − harness clocks (wall and monotonic) from round trips, the smallest RTT of each burst, ' +
  '± RTT/2; interpolated linearly between the estimates before and after the load';

/** `sameKernel`: host → another host of `hosts` on the same kernel (HostClockInfo.sharesKernelWith). */
export function clockReport(
  hosts: Readonly<Record<string, HostClocks>>,
  sameKernel: Readonly<Record<string, string>> = {},
): ClockReport {
  const info = (wall: OffsetEstimate, mono: OffsetEstimate): ClockEstimateInfo => ({
    at: new Date(wall.atMs).toISOString(),
    offsetMs: wall.offsetMs,
    monoOffsetMs: mono.offsetMs,
    // Both are from the same round trip, read on the same harness clock: one ±, one RTT.
    uncertaintyMs: wall.uncertaintyMs,
    rttMs: wall.rttMs,
    probes: wall.probes,
  });
  const out: Record<string, HostClockInfo> = {};
  for (const [host, c] of Object.entries(hosts)) {
    out[host] = {
      before: info(c.wall.before, c.mono.before),
      after: c.wall.after === null || c.mono.after === null ? null : info(c.wall.after, c.mono.after),
      driftPpm: c.wall.driftPpm,
      driftUncertaintyPpm: c.wall.driftUncertaintyPpm,
      ...(sameKernel[host] !== undefined && hosts[sameKernel[host]] !== undefined
        ? { sharesKernelWith: sameKernel[host] }
        : {}),
    };
  }
  return { method: CLOCK_METHOD, hosts: out };
}

/** A host's clocks read back from result.json (`at` to the ms, which moves an offset by ns). */
export function hostClocksFromInfo(i: HostClockInfo): HostClocks {
  const estimate = (e: ClockEstimateInfo, offsetMs: number): OffsetEstimate => ({
    offsetMs,
    uncertaintyMs: e.uncertaintyMs,
    atMs: Date.parse(e.at),
    rttMs: e.rttMs,
    probes: e.probes,
  });
  const clock = (which: 'offsetMs' | 'monoOffsetMs'): HostClock =>
    hostClock(
      estimate(i.before, i.before[which]),
      i.after === null ? null : estimate(i.after, i.after[which]),
    );
  return { wall: clock('offsetMs'), mono: clock('monoOffsetMs') };
}

/**
 * The ± of a stamp moved by a clock's "before" estimate alone (the swarm runtime moves stamps as
 * they come in, before the "after" estimate exists), at harness time `atMs`: how far the clock's
 * best estimate then (interpolated with the "after" one) is from the one used, plus its own ±.
 */
export function movedByBeforeUncertaintyMs(clock: HostClock, atMs: number): number {
  const best = offsetAt(clock, atMs);
  return Math.abs(best.offsetMs - clock.before.offsetMs) + best.uncertaintyMs;
}
