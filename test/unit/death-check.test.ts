import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkDetectAgainstDeath, describeDeathCheck } from '../../src/bench/death-check.js';

describe("a failover's detection against the harness's sighting of the death", () => {
  it('holds for detections before the reaping or just after it', () => {
    const c = checkDetectAgainstDeath([
      { detectMs: 44.5, goneMs: 47.0 },
      { detectMs: 43.8, goneMs: 86.3 }, // the harness saw the reaping late: fine
      { detectMs: 52.1, goneMs: 49.0 },
    ]);
    assert.deepEqual(c, {
      toleranceMs: 10,
      held: 3,
      of: 3,
      range: { min: -42.5, max: 3.1 },
      failedKills: [],
    });
    assert.match(
      describeDeathCheck(c),
      /^cross-check held: .* 3 of 3 kills \(detect − reaped -42\.5 to \+3\.1 ms\)$/,
    );
  });

  it('fails a detection long after the reaping, or one before the kill, naming the kill', () => {
    const c = checkDetectAgainstDeath([
      { detectMs: 44.5, goneMs: 47.0 },
      { detectMs: 240.0, goneMs: 45.0 }, // a timeout, not the close
      { detectMs: 55.0, goneMs: 45.0 }, // exactly the tolerance: holds
      { detectMs: -1.0, goneMs: 40.0 }, // before the kill: a wrong clock
    ]);
    assert.equal(c.held, 2);
    assert.deepEqual(c.failedKills, [2, 4]);
    assert.match(describeDeathCheck(c), /cross-check FAILED: .*held in 2 of 4 kills, not in kill 2, 4/);
  });

  it('says nothing held of no kills, without a range', () => {
    assert.deepEqual(checkDetectAgainstDeath([]), {
      toleranceMs: 10,
      held: 0,
      of: 0,
      range: null,
      failedKills: [],
    });
  });
});
