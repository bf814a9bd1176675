// The intended send times of an open-loop load generator (as in wrk2): the schedule is fixed in
// advance and never waits for replies, so a slow server shows up as latency measured from the
// intended time instead of as fewer requests (coordinated omission).
//
// Pure: no clock of its own. Times are in ms on whatever clock `startMs` is on.
// - constant: evenly spaced, the k-th write (k = 0, 1, …) at startMs + k · 1000 / rate. Computed
//   by multiplication, not by adding up gaps, so there is no drift however long the run.
// - poisson: exponentially distributed gaps with mean 1000 / rate from a seeded Random, the first
//   one gap after startMs; the same seed gives the same times.
import { Random } from '../util/random.js';

export type Arrival = 'constant' | 'poisson';

export const ARRIVALS: readonly Arrival[] = ['constant', 'poisson'];

export interface ScheduleOptions {
  /** Writes per second; positive. */
  readonly rate: number;
  readonly arrival: Arrival;
  /** Time of the schedule's origin, ms. */
  readonly startMs: number;
  /** Seed of the Poisson gaps (ignored for constant). Default 1. */
  readonly seed?: number;
}

export class OpenLoopSchedule {
  readonly periodMs: number;
  private readonly random: Random | undefined;
  private k = 0;
  private nextMs: number;

  constructor(readonly o: ScheduleOptions) {
    if (!(o.rate > 0) || !Number.isFinite(o.rate))
      throw new RangeError(`rate must be positive, got ${o.rate}`);
    this.periodMs = 1000 / o.rate;
    this.random = o.arrival === 'poisson' ? new Random(o.seed ?? 1) : undefined;
    this.nextMs = this.random ? o.startMs + this.random.exponential(this.periodMs) : o.startMs;
  }

  /** The intended time of the next write, without consuming it. */
  peek(): number {
    return this.nextMs;
  }

  /** How many times have been taken so far. */
  get taken(): number {
    return this.k;
  }

  /** The intended time of the next write; advances the schedule. */
  take(): number {
    const t = this.nextMs;
    this.k += 1;
    this.nextMs = this.random
      ? t + this.random.exponential(this.periodMs)
      : this.o.startMs + this.k * this.periodMs;
    return t;
  }
}

/** Every intended time in [startMs, untilMs): a convenience for tests and planning. */
export function intendedTimes(o: ScheduleOptions, untilMs: number): number[] {
  const s = new OpenLoopSchedule(o);
  const out: number[] = [];
  while (s.peek() < untilMs) out.push(s.take());
  return out;
}
