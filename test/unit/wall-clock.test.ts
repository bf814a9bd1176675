// The wall clock every process stamps with (util/wall-clock.ts): monotonic time plus an offset to
// the real-time clock, calibrated from Date.now()'s millisecond steps. It must read what Date.now()
// reads, to within Date.now()'s own millisecond, and two calibrations must agree to microseconds,
// however the process was scheduled when it started (performance.timeOrigin did not: two processes
// on one kernel were seen 2.5 ms apart).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calibrateWallOffset, wallNowMs } from '../../src/util/wall-clock.js';

test('the calibrated wall clock reads Date.now() to within its millisecond, and calibrates the same twice', () => {
  for (let i = 0; i < 200; i++) {
    const before = Date.now();
    const w = wallNowMs();
    const after = Date.now();
    // Date.now() is the real-time clock rounded down to the ms.
    assert.ok(w >= before - 0.05 && w < after + 1.05, `${w} against Date.now() ${before}..${after}`);
  }
  const offsets = Array.from({ length: 5 }, () => calibrateWallOffset());
  const spread = Math.max(...offsets) - Math.min(...offsets);
  assert.ok(spread < 0.05, `five calibrations spread over ${spread} ms: ${offsets.join(', ')}`);
});
