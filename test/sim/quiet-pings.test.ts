// What a serving leader sends under a steady load and once it stops:
// - it skips its PING to a synced follower it has both sent to and heard from within the last half
//   tick (a PROPOSAL or COMMIT out, an ACK back), and pings a quiet one as before;
// - it sends a COMMIT at once only to a follower whose client waits on the write (one it
//   forwarded); the others hear of the commit point from the next PROPOSAL or PING, which carry it
//   (node-core.ts, announceCommit).
// The protocol's safety checks run over the same schedules, among them that every follower hears
// of every commit (InvariantChecker.commitHeard).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, runSimulation, type SimResult } from '../../src/node/sim/simulator.js';

const TICK_MS = 100;
const LOAD_END = 3000;
const END = 6000;

/** Five nodes, p5 leading throughout, a write every 10 ms on average until LOAD_END, then quiet. */
function steadyLoad(seed: number): SimResult {
  const r = runSimulation({
    seed,
    nodes: 5,
    initialLeader: 'p5',
    randomFaults: false,
    writeEveryMs: 10,
    chaosMs: LOAD_END,
    calmMs: END - LOAD_END,
    timers: { tickMs: TICK_MS, syncLimit: 3, initLimit: 10, electionTimeoutMs: 150, retryBaseMs: 150 },
    trace: true,
  });
  assert.deepEqual(r.violations, [], describeFailure(r));
  return r;
}

/** Messages of `type` from the leader p5 in [from, to). */
function fromLeader(r: SimResult, type: string, from: number, to: number): number {
  return r.sends.filter((s) => s.type === type && s.from === 'p5' && s.at >= from && s.at < to).length;
}

test('PINGs stop while writes flow both ways and come back when the load stops', (t) => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const r = steadyLoad(seed);
    const leaders = new Set(
      r.events.flatMap((e) => (e.event.ev === 'serving' ? [e.event.leader ?? e.node] : [])),
    );
    assert.deepEqual([...leaders], ['p5'], `seed ${seed}: one leader throughout`);
    const pings = (from: number, to: number): number => fromLeader(r, 'PING', from, to);
    // Four followers, a PING each per half tick when nothing else flows.
    const everyHalfTick = (ms: number): number => (ms / (TICK_MS / 2)) * 4;
    const underLoad = pings(1000, LOAD_END);
    const quiet = pings(LOAD_END + 500, END);
    t.diagnostic(
      `seed ${seed}: ${underLoad} PINGs from the leader under load (${everyHalfTick(LOAD_END - 1000)} at one per follower and half tick), ${quiet} of ${everyHalfTick(END - LOAD_END - 500)} once quiet`,
    );
    assert.ok(
      underLoad <= 0.2 * everyHalfTick(LOAD_END - 1000),
      `seed ${seed}: ${underLoad} PINGs under load (a PING per follower and half tick would be ${everyHalfTick(LOAD_END - 1000)})`,
    );
    assert.ok(
      quiet >= 0.9 * everyHalfTick(END - LOAD_END - 500),
      `seed ${seed}: ${quiet} PINGs once quiet (expected ~${everyHalfTick(END - LOAD_END - 500)})`,
    );
    assert.ok(r.stats.acked > 100, `seed ${seed}: ${r.stats.acked} writes acknowledged`);
  }
});

test('under load a COMMIT goes only to the follower whose client waits; every follower still hears of every commit', (t) => {
  for (const seed of [1, 2, 3, 4]) {
    const r = steadyLoad(seed);
    const commits = fromLeader(r, 'COMMIT', 500, LOAD_END);
    // Each PROPOSAL round went to four followers; before this, so did each COMMIT round.
    const rounds = fromLeader(r, 'PROPOSAL', 500, LOAD_END) / 4;
    t.diagnostic(
      `seed ${seed}: ${commits} COMMITs from the leader under load, ${rounds} PROPOSAL rounds, ${r.stats.acked} writes acknowledged`,
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
