// A serving leader skips its PING to a synced follower it has both sent to and heard from within
// the last half tick (a PROPOSAL or COMMIT out, an ACK back), and pings a quiet one as before. The
// protocol's safety checks run over the same schedules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, runSimulation } from '../../src/node/sim/simulator.js';

const TICK_MS = 100;
const LOAD_END = 3000;
const END = 6000;

test('PINGs stop while writes flow both ways and come back when the load stops', (t) => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
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
    const leaders = new Set(
      r.events.flatMap((e) => (e.event.ev === 'serving' ? [e.event.leader ?? e.node] : [])),
    );
    assert.deepEqual([...leaders], ['p5'], `seed ${seed}: one leader throughout`);
    const pings = (from: number, to: number): number =>
      r.sends.filter((s) => s.type === 'PING' && s.from === 'p5' && s.at >= from && s.at < to).length;
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
