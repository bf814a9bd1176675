// The timeline's points from made-up interval messages of the load agents: a rate per second of
// what each second really covered, and nothing drawn for the wait after the load.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as hdr from 'hdr-histogram-js';
import { timelineSeconds } from '../../src/report/timeline-points.js';

const LOAD_START = 1_700_000_000_000;

/** One agent's interval, `from` and `to` in ms from the load start, latencies in ms. */
function interval(
  dc: string,
  index: number,
  from: number,
  to: number,
  acked: number,
  latencyMs = 20,
  failed = 0,
) {
  const h = hdr.build();
  for (let i = 0; i < acked; i++) h.recordValue(latencyMs * 1000);
  const histogram = hdr.encodeIntoCompressedBase64(h);
  h.destroy();
  return { dc, index, startMs: LOAD_START + from, endMs: LOAD_START + to, histogram, acked, failed };
}

describe('timeline points', () => {
  it("draws a last second the load's end cut short as a rate over what it covered, not a dip", () => {
    // 2.5 s of load at 300 writes/s from each of two agents; the last interval ends 40 ms after
    // the load, once the writes in flight were in: 150 acknowledged over its 0.5 s of load.
    const { seconds, afterLoad } = timelineSeconds(
      [
        interval('tud', 0, 0, 1000, 300),
        interval('tud', 1, 1000, 2001, 300),
        interval('tud', 2, 2001, 2540, 150),
        interval('cern', 0, 0, 1000, 300, 30),
        interval('cern', 1, 1000, 2000, 300, 30),
        interval('cern', 2, 2000, 2530, 150, 30),
      ],
      LOAD_START,
      2500,
    );
    assert.deepEqual(
      seconds.map((p) => [p.t, p.writesPerSec, p.lengthS]),
      [
        [0, 600, undefined],
        // tud's second ran 1.001 s: its 300 writes are 299.7 a second.
        [1, 599.7, undefined],
        // tud covered 0.499 s of load (150 / 0.499 = 300.6), cern 0.5 s (300).
        [2, 600.6, 0.5],
      ],
    );
    assert.equal(afterLoad, null);
    // Both agents' writes in one histogram: cern's 30 ms are its slowest 1 %.
    assert.equal(Math.round(seconds[2]?.p99Ms ?? 0), 30);
  });

  it('leaves out what was acknowledged after the load, and says how much, from agents started apart', () => {
    // cern started 30 ms after the load's start: its seconds, and its end, are 30 ms later.
    const { seconds, afterLoad } = timelineSeconds(
      [
        interval('tud', 0, 0, 1000, 300),
        interval('tud', 1, 1000, 2000, 300),
        interval('tud', 2, 2000, 2104, 31, 25, 1),
        interval('cern', 0, 30, 1030, 300),
        interval('cern', 1, 1030, 2031, 300),
        interval('cern', 2, 2031, 2090, 29),
      ],
      LOAD_START,
      2000,
    );
    assert.deepEqual(
      seconds.map((p) => [p.t, p.writesPerSec, p.lengthS, p.errors]),
      [
        [0, 600, undefined, 0],
        // cern's second 1 ends at its own load end (2030), 1 s after it began.
        [1, 600, undefined, 0],
      ],
    );
    assert.deepEqual(afterLoad, { acked: 60, errors: 1, lengthS: 0.104 });
  });

  it('keeps every interval of a run with no set end, its last one a rate over its real length', () => {
    const { seconds, afterLoad } = timelineSeconds(
      [interval('tud', 0, 0, 1000, 300), interval('tud', 1, 1000, 1250, 75)],
      LOAD_START,
      0,
    );
    assert.deepEqual(
      seconds.map((p) => [p.t, p.writesPerSec, p.lengthS]),
      [
        [0, 300, undefined],
        [1, 300, 0.25],
      ],
    );
    assert.equal(afterLoad, null);
  });
});
