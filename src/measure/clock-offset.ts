// Another host's clock against the harness's: the offset (remote − harness) of its wall clock, how
// sure we are of it, and the mapping of its timestamps onto the harness's clock. Pure functions;
// the probes that feed them are clock-probe.ts's.
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
// "Wall clock" here is what the members' events and the agents' messages carry: the process's
// performance.timeOrigin + performance.now(), the host's real-time clock when the process started
// plus monotonic time since. It follows the host's NTP rate corrections but not a step of the
// host's clock after the process started, so an offset belongs to a process, strictly: processes
// on one host share it unless the host's clock was stepped between their starts.

export interface ClockProbe {
  /** Harness wall ms when the question left. */
  readonly sentMs: number;
  /** The remote's wall ms in its answer. */
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

/** One host's (strictly: one process's) clock over a run. */
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

/** A host's offset at harness wall time `atMs`, with its ± (see the file's head for how). */
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

/** A stamp from the host's clock, as harness wall ms, with its ±. */
export function toHarnessMs(remoteMs: number, clock: HostClock): { ms: number; uncertaintyMs: number } {
  // The offset is a function of harness time, which is what we are after: remoteMs − offset(before)
  // is within a few ms of it, and at any drift a clock can have, ms move the offset by ns.
  const near = remoteMs - clock.before.offsetMs;
  const { offsetMs, uncertaintyMs } = offsetAt(clock, near);
  return { ms: remoteMs - offsetMs, uncertaintyMs };
}

/**
 * The ± of a duration between a stamp from clock `from` and a later one from clock `to`, both
 * corrected, around harness time `atMs`: the two offsets' bounds add up, unless both stamps come from
 * the same clock, where the offset cancels (drift over a run's intervals is µs).
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

// --- in result.json (report/result.ts `clocks`) ------------------------------------------------

/** An estimate as result.json keeps it: `at` as ISO 8601, like every wall time there. */
export interface ClockEstimateInfo {
  readonly at: string;
  readonly offsetMs: number;
  readonly uncertaintyMs: number;
  readonly rttMs: number;
  readonly probes: number;
}

export interface HostClockInfo {
  readonly before: ClockEstimateInfo;
  readonly after: ClockEstimateInfo | null;
  readonly driftPpm: number | null;
  readonly driftUncertaintyPpm: number | null;
}

/** Every clock a run's timestamps came from, other than the harness's, by host name. */
export interface ClockReport {
  /** How the offsets were measured and combined, in words (shown in the report). */
  readonly method: string;
  readonly hosts: Readonly<Record<string, HostClockInfo>>;
}

export const CLOCK_METHOD =
  'remote − harness wall clock from round trips, the smallest RTT of each burst, ± RTT/2; ' +
  'interpolated linearly between the estimates before and after the load';

export function clockReport(hosts: Readonly<Record<string, HostClock>>): ClockReport {
  const info = (e: OffsetEstimate): ClockEstimateInfo => ({
    at: new Date(e.atMs).toISOString(),
    offsetMs: e.offsetMs,
    uncertaintyMs: e.uncertaintyMs,
    rttMs: e.rttMs,
    probes: e.probes,
  });
  const out: Record<string, HostClockInfo> = {};
  for (const [host, c] of Object.entries(hosts)) {
    out[host] = {
      before: info(c.before),
      after: c.after === null ? null : info(c.after),
      driftPpm: c.driftPpm,
      driftUncertaintyPpm: c.driftUncertaintyPpm,
    };
  }
  return { method: CLOCK_METHOD, hosts: out };
}

/** A host's clock read back from result.json (`at` to the ms, which moves an offset by ns). */
export function hostClockFromInfo(i: HostClockInfo): HostClock {
  const estimate = (e: ClockEstimateInfo): OffsetEstimate => ({
    offsetMs: e.offsetMs,
    uncertaintyMs: e.uncertaintyMs,
    atMs: Date.parse(e.at),
    rttMs: e.rttMs,
    probes: e.probes,
  });
  return hostClock(estimate(i.before), i.after === null ? null : estimate(i.after));
}
