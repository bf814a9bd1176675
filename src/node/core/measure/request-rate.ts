// θr: the rate of client requests a node receives, as an exponentially decaying average with a
// configurable time constant. Cheap (O(1) per request, no buckets), and it forgets a data center
// that stopped sending within a few windows, which is what a score for the next election wants.

export class RequestRate {
  private value = 0;
  private at: number | undefined;

  /** `windowMs`: the time constant τ; a constant rate λ reads ≈ λ after a few τ. */
  constructor(private readonly windowMs: number) {
    if (!(windowMs > 0)) throw new Error(`request-rate window must be positive, got ${windowMs}`);
  }

  /** `count` requests arrived at `now` (ms). */
  record(now: number, count = 1): void {
    this.value = this.rate(now) + (count * 1000) / this.windowMs;
    this.at = now;
  }

  /** Requests per second at `now`. */
  rate(now: number): number {
    if (this.at === undefined) return 0;
    const dt = Math.max(0, now - this.at);
    return this.value * Math.exp(-dt / this.windowMs);
  }
}
