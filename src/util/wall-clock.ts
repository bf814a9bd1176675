// The wall clock every process of a run stamps with: CLOCK_MONOTONIC (process.hrtime) plus one
// offset to the real-time clock, calibrated when the process first asks.
//
// Not performance.timeOrigin + performance.now(): Node reads its time origin's wall time and its
// monotonic time at two moments of its start, and a process descheduled between them (a busy
// machine starting a dozen containers) carries the gap as a constant error for its whole life.
// Two fault helpers on one kernel were seen 2.5 ms apart that way, so a host's offset measured
// through one process was wrong by milliseconds for the stamps of another.
//
// The calibration: Date.now() is whole milliseconds of the real-time clock (rounded down), so
// each sample Date.now() − hrtime read right after is at most the true offset and less than a
// millisecond under it; the largest sample taken just after a millisecond boundary is within the
// loop's microsecond of it. Samples go on until three boundaries have passed with the loop on the
// CPU (about 3 ms, once per process): a boundary the process slept through does not decide it.

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;

let offsetMs: number | undefined;

/**
 * real-time − monotonic, in ms: the largest sample, once `boundaries` millisecond steps were seen
 * with the loop on the CPU (the sample before the step less than 10 µs earlier: a step seen after
 * the process was descheduled says only that the offset is at least that much). Bounded: after
 * 50 ms the best so far is kept.
 */
export function calibrateWallOffset(boundaries = 3): number {
  let best = -Infinity;
  let last = Date.now();
  let prev = hrMs();
  const give = prev + 50;
  let seen = 0;
  while (seen < boundaries) {
    const d = Date.now();
    const h = hrMs();
    if (d - h > best) best = d - h;
    if (d !== last) {
      if (h - prev < 0.01) seen++;
      last = d;
    }
    prev = h;
    if (h > give) break;
  }
  return best;
}

/**
 * The offset a parent on this kernel hands its children, so that their stamps and its own are on
 * one axis to the microsecond. Calibrated apart, two processes' offsets differ by their
 * calibrations' errors and by what the real-time clock was slewed between their starts (NTP may
 * slew it by 0.5 ms a second): enough to put a data center's first acknowledgement, stamped by
 * its agent, a few ms before the new leader's own stamp of the commit it acknowledges.
 */
export const WALL_OFFSET_ENV = 'POLE_BENCH_WALL_OFFSET_MS';

/** Wall-clock ms with microsecond resolution, on one time axis for every process of the kernel. */
export function wallNowMs(): number {
  offsetMs ??= inheritedOffset() ?? calibrateWallOffset();
  return hrMs() + offsetMs;
}

/**
 * Puts this process's offset in `env` (its own by default) for the processes it starts on this
 * kernel: they then stamp on its axis instead of calibrating their own. Only for children on the
 * same kernel: CLOCK_MONOTONIC means nothing on another machine.
 */
export function shareWallOffset(env: NodeJS.ProcessEnv = process.env): void {
  wallNowMs();
  env[WALL_OFFSET_ENV] = String(offsetMs);
}

function inheritedOffset(): number | undefined {
  const v = Number(process.env[WALL_OFFSET_ENV] ?? NaN);
  return Number.isFinite(v) ? v : undefined;
}

/** A wall-clock instant as a performance.now() value of this process (for timers counted from it). */
export function wallToPerfNow(wallMs: number): number {
  return wallMs - (wallNowMs() - performance.now());
}
