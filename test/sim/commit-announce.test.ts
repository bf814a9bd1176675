// A leader sends a COMMIT at once only to a follower with a client waiting on the write (one it
// forwarded); the others hear of the commit point from the next PROPOSAL or PING, which carry it
// (node-core.ts, announceCommit). The simulator's checks run over the same schedules, among them
// that every follower hears of every commit (InvariantChecker.commitHeard).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, runSimulation } from '../../src/node/sim/simulator.js';

const LOAD_END = 3000;

test('under load a COMMIT goes only to the follower whose client waits; every follower still hears of every commit', (t) => {
  for (const seed of [1, 2, 3, 4]) {
    const r = runSimulation({
      seed,
      nodes: 5,
      initialLeader: 'p5',
      randomFaults: false,
      writeEveryMs: 10,
      chaosMs: LOAD_END,
      calmMs: 2000,
      trace: true,
    });
    assert.deepEqual(r.violations, [], describeFailure(r));
    const fromLeader = (type: string): number =>
      r.sends.filter((s) => s.type === type && s.from === 'p5' && s.at >= 500 && s.at < LOAD_END).length;
    const commits = fromLeader('COMMIT');
    // Each PROPOSAL round went to four followers; before this, so did each COMMIT round.
    const rounds = fromLeader('PROPOSAL') / 4;
    const writes = r.stats.acked;
    t.diagnostic(
      `seed ${seed}: ${commits} COMMITs from the leader under load, ${rounds} PROPOSAL rounds, ${writes} writes acknowledged`,
    );
    assert.ok(rounds > 100, `seed ${seed}: only ${rounds} PROPOSAL rounds`);
    // Four followers of five members: a write forwarded by one of them (4 in 5 of the clients'
    // picks) needs one COMMIT, a write at the leader none; a COMMIT covering several writes
    // forwarded by one follower is one. So at most about one per round, never four.
    assert.ok(commits <= 1.2 * rounds, `seed ${seed}: ${commits} COMMITs for ${rounds} rounds`);
    assert.ok(
      commits >= 0.3 * rounds,
      `seed ${seed}: ${commits} COMMITs: the forwarding followers got theirs?`,
    );
  }
});
