// Leadership intervals from participants' events, overlaps between them, and failover times.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { failoverMs, leadIntervals, leaderOverlaps } from '../../src/election/leader-overlaps.js';
import type { ElectionEvent } from '../../src/election/participant.js';

const lead = (participant: string, t: number, until: number | null): ElectionEvent => ({
  t,
  participant,
  ev: 'lead',
  until,
});
const lost = (participant: string, t: number): ElectionEvent => ({
  t,
  participant,
  ev: 'lead-lost',
  why: 'x',
});
const crashed = (participant: string, t: number): ElectionEvent => ({ t, participant, ev: 'crashed' });

describe('leader intervals and overlaps', () => {
  it('renewals extend one interval; a crash or a loss ends it early; a lapsed lease ends it', () => {
    const iv = leadIntervals(
      [
        lead('a', 0, 3_900),
        lead('a', 2_000, 5_900),
        lead('a', 4_000, 7_900),
        crashed('a', 5_000),
        lead('b', 9_000, 12_900),
      ],
      20_000,
    );
    assert.deepEqual(iv, [
      { participant: 'a', from: 0, to: 5_000 },
      { participant: 'b', from: 9_000, to: 12_900 },
    ]);
    // A lease that ran out before the next renewal: two intervals.
    assert.deepEqual(
      leadIntervals([lead('a', 0, 1_000), lead('a', 2_000, 3_000)], 10_000).map((i) => [i.from, i.to]),
      [
        [0, 1_000],
        [2_000, 3_000],
      ],
    );
    // No lease (the recipe): until the loss, or the run's end.
    assert.deepEqual(
      leadIntervals([lead('z', 5, null), lost('z', 50), lead('y', 60, null)], 100).map((i) => [
        i.participant,
        i.from,
        i.to,
      ]),
      [
        ['z', 5, 50],
        ['y', 60, 100],
      ],
    );
  });

  it('reports two participants leading at once, and nothing when they take turns', () => {
    const turns = leadIntervals([lead('a', 0, 4_000), crashed('a', 1_000), lead('b', 4_100, 8_000)], 9_000);
    assert.deepEqual(leaderOverlaps(turns), []);
    const both = leadIntervals([lead('a', 0, 4_000), lead('b', 3_000, 8_000)], 9_000);
    assert.deepEqual(leaderOverlaps(both), [{ a: 'a', b: 'b', from: 3_000, to: 4_000 }]);
    // Touching ends are not an overlap: a lease ends exclusive.
    assert.deepEqual(leaderOverlaps(leadIntervals([lead('a', 0, 100), lead('b', 100, 200)], 300)), []);
  });

  it('failover: from the kill to the first other participant that leads', () => {
    const iv = leadIntervals([lead('a', 0, 4_000), crashed('a', 1_000), lead('b', 5_200, 9_000)], 10_000);
    assert.equal(failoverMs(iv, 'a', 1_000), 4_200);
    assert.equal(failoverMs(iv, 'b', 6_000), null);
  });
});
