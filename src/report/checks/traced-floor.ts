// The agents' histograms of every write against the members' stamps of a sample of them: the
// window's mean less the model is what the nodes and pole-bench add, which the traced writes
// measure directly (their time less their network part).
import {
  type Check,
  FLOOR_SLACK_MS,
  FLOOR_SHARE,
  FLOOR_STANDARD_ERRORS,
  FLOOR_MIN_TRACED,
  f,
} from './check-kit.js';

export const tracedFloor = {
  id: 'tracedFloor',
  what: `every write's mean − the paper model within max(${FLOOR_SLACK_MS} ms, ${FLOOR_SHARE * 100} %, ${FLOOR_STANDARD_ERRORS} standard errors) of the traced floor, with or without its one farthest traced write (windows of ${FLOOR_MIN_TRACED} traced writes or more)`,
  run: (r, fail, skip) => {
    if (r.floor.source !== 'traced') return skip(`the floor is ${r.floor.source}, not traced by the members`);
    let n = 0;
    let most = 0;
    for (const [dc, floors] of Object.entries(r.floor.perDc))
      for (const w of ['before', 'after'] as const) {
        const floor = floors[w];
        const model = r.model[dc]?.[w] ?? null;
        const every = r.latency[dc]?.[w];
        const mean = every?.sentMean ?? null;
        if (floor === null || model === null || mean === null) continue;
        const off = mean - model - floor;
        const traced = r.anatomy.perDc[dc]?.[w];
        most = Math.max(most, traced?.writes ?? 0);
        if (traced === undefined || traced.writes < FLOOR_MIN_TRACED) continue;
        n++;
        // The traced writes are a sample of the window's, so their mean strays from every
        // write's by sd/√n, with sd every write's spread. A stall that delays a second of writes
        // widens that spread but may hit no traced write, leaving the sample's own sd small: the
        // sample's sd stands in only for stored runs that lack every write's.
        const se = (every?.sentSd ?? traced.sdMs ?? 0) / Math.sqrt(traced.writes);
        const allowed = Math.max(FLOOR_SLACK_MS, FLOOR_SHARE * floor, FLOOR_STANDARD_ERRORS * se);
        if (Math.abs(off) <= allowed) continue;
        // A mean of 25 is not normal when the writes' latencies have a long tail: one traced
        // write caught in a stall moves it by stall/25, beyond 3 standard errors far more often
        // than 3 in 1,000. So the floor is held
        // again without the one traced write that pulled it the way it is off: what one write
        // alone did is excused, what the rest of the sample still shows is not (a wrong
        // network part, a doubled delay, a floor taken from other writes move them all).
        const range = traced.beyondNetworkRangeMs;
        let without = '';
        if (range) {
          const farthest = off < 0 ? range.most : range.least;
          const floorWithout = (traced.writes * floor - farthest) / (traced.writes - 1);
          if (Math.abs(mean - model - floorWithout) <= allowed) continue;
          without = `, ${f(floorWithout)} without its farthest traced write`;
        }
        fail(
          `${dc} ${w}: mean ${f(mean)} − model ${f(model)} = ${f(mean - model)} ms, floor ${f(floor)} ms${without} (allowed ±${f(allowed)} ms)`,
        );
      }
    if (n === 0)
      skip(
        `too few traced writes: at most ${most} in a window with a model and a floor, ${FLOOR_MIN_TRACED} needed`,
      );
  },
} as const satisfies Check;
