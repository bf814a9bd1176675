// The node floor from the run's own traced writes: per data center and window, the mean of what
// the latency anatomy found beside the network (transport, disk, nodes, client), i.e. what those
// writes cost over the delays the shaping added. It is measured under the load it describes (the
// same clients, the same queueing for CPU), which a calibration after the load with the delays
// taken out is not: measured that way (by the harness's own client) it came out 2-5× the
// anatomy's figure. The independent check of it is the self-check's: the mean of every write of
// the window, less the paper's model, must land on it (report/self-check.ts).
import type { LatencyAnatomy } from './latency-anatomy.js';
import type { FloorInfo, ModelWindows } from './result.js';

/** Fewer traced writes than this in a window give no floor for it: a mean of a handful is noise. */
export const MIN_TRACED_WRITES = 5;

export function tracedFloor(anatomy: LatencyAnatomy, dcs: readonly string[]): FloorInfo {
  const perDc: Record<string, ModelWindows> = {};
  let writes = 0;
  for (const dc of dcs) {
    const of = (w: 'before' | 'after'): number | null => {
      const b = anatomy.perDc[dc]?.[w];
      if (!b || b.writes < MIN_TRACED_WRITES) return null;
      writes += b.writes;
      return b.totalMs - b.networkMs;
    };
    perDc[dc] = { before: of('before'), after: of('after') };
  }
  return {
    source: writes > 0 ? 'traced' : 'none',
    method:
      writes > 0
        ? `each window's own traced writes (one in ${anatomy.sampleEvery}), all but the network part the shaping added (the latency anatomy's "all but network")`
        : `not measured: fewer than ${MIN_TRACED_WRITES} traced writes in every window`,
    leaderMs: null,
    followerMs: null,
    writes,
    perDc,
  };
}
