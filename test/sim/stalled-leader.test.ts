// Issue 9's failure as a fixed schedule. The leader of epoch 1 (p5) freezes for 800 ms; the
// other four time out and p4 serves epoch 2 without it. p5 wakes: its overdue timer fires first
// (it has lost its quorum, so it starts an election for epoch 2), then it reads the epoch-2
// proposals that queued up while it was frozen, finds its own history best, and takes epoch 2
// as a leader candidate that nobody will join. Before the fix it could never follow p4 in an
// epoch it had accepted for itself: ~600 elections in 5 s and no rejoin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFailure, runSimulation } from '../../src/node/sim/simulator.js';
import { scheduleCount } from './run-schedules.js';

/** Seeds per scenario: 20, or SIM_SCHEDULES / 2 (a sweep: SIM_SCHEDULES=400 runs 200 of each). */
const SEEDS = scheduleCount(20);

const RESUME_AT = 1800;
// The answers to its proposals tell the stranded candidate that a quorum, p4 among it, settles on
// p4 in epoch 2: it steps down, adopts p4 from the votes, joins (FOLLOWERINFO, LEADERINFO,
// ACKEPOCH), syncs and serves. Five round trips; allow six on the slowest links the simulator
// draws (up to 40 ms each way). Before stepping down on those votes it waited out initLimit (1 s).
const REJOIN_BOUND_MS = 6 * 2 * 40;

test('a frozen leader that wakes as a candidate of the epoch its successor serves rejoins it', () => {
  const seeds = Array.from({ length: SEEDS }, (_, i) => i + 1);
  for (const seed of seeds) {
    const r = runSimulation({
      seed,
      nodes: 5,
      initialLeader: 'p5',
      randomFaults: false,
      // The bound counts message round trips: an instant disk here, slow ones below.
      fsyncMs: 0,
      script: [
        { at: 1000, pause: 'p5' },
        { at: RESUME_AT, resume: 'p5' },
      ],
      trace: true,
    });
    assert.deepEqual(r.violations, [], describeFailure(r));
    const after = r.events.filter((e) => e.node === 'p5' && e.at >= RESUME_AT);
    const successor = r.events.find(
      (e) => e.event.ev === 'serving' && e.event.epoch === 2 && e.node !== 'p5',
    );
    assert.ok(
      successor && successor.at < RESUME_AT,
      `seed ${seed}: no other leader served epoch 2 while p5 was frozen`,
    );
    // The scenario really happened: p5 took epoch 2 as a candidate of its own.
    assert.ok(
      after.some((e) => e.event.ev === 'leading' && e.event.epoch === 2),
      `seed ${seed}: p5 did not wake as a candidate of epoch 2`,
    );
    const rejoined = after.find((e) => e.event.ev === 'serving' && e.event.leader === successor.node);
    assert.ok(rejoined, `seed ${seed}: p5 never served under ${successor.node}`);
    assert.equal(rejoined.event.ev === 'serving' && rejoined.event.epoch, 2);
    assert.ok(
      rejoined.at - RESUME_AT <= REJOIN_BOUND_MS,
      `seed ${seed}: p5 rejoined ${Math.round(rejoined.at - RESUME_AT)} ms after waking (bound ${REJOIN_BOUND_MS})`,
    );
    assert.ok(
      after.some(
        (e) => e.event.ev === 'stepped-down' && e.event.reason === `rival-leader:${successor.node}@2`,
      ),
      `seed ${seed}: p5 should give up its candidacy on hearing a quorum settle on ${successor.node}`,
    );
    assert.ok(
      after.some((e) => e.event.ev === 'joined-established' && e.event.voted === 'p5'),
      `seed ${seed}: p5 should join p4's epoch 2 although it voted for itself in it`,
    );
    const elections = after.filter((e) => e.event.ev === 'election-started').length;
    assert.ok(elections <= 3, `seed ${seed}: p5 started ${elections} elections after waking`);
  }
});

test('with a slow disk the stranded candidate rejoins within the same bound', () => {
  // With a 2 ms disk, seed 4 once rejoined only after initLimit (1,021 ms): p5 answered p4's stale
  // P with V(p5) before its own P reached p4, and a settled p4 ignored that V, so p5 never heard
  // p4's own vote, which the rival-vote step-down needs. A settled node now answers a rival V once
  // with its own (election.ts).
  for (const fsyncMs of [0.5, 2, 5])
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runSimulation({
        seed,
        nodes: 5,
        initialLeader: 'p5',
        randomFaults: false,
        fsyncMs,
        script: [
          { at: 1000, pause: 'p5' },
          { at: RESUME_AT, resume: 'p5' },
        ],
        trace: true,
      });
      assert.deepEqual(r.violations, [], describeFailure(r));
      const rejoined = r.events.find((e) => e.node === 'p5' && e.at >= RESUME_AT && e.event.ev === 'serving');
      assert.ok(rejoined, `fsync ${fsyncMs} seed ${seed}: p5 never served again`);
      assert.ok(
        rejoined.at - RESUME_AT <= REJOIN_BOUND_MS,
        `fsync ${fsyncMs} seed ${seed}: p5 rejoined ${Math.round(rejoined.at - RESUME_AT)} ms after waking (bound ${REJOIN_BOUND_MS})`,
      );
    }
});

test('the rejoin and election-rate checks are live: bounds nobody can meet trip them', () => {
  // A limit of zero elections a second must trip on any schedule: the check is live.
  const r = runSimulation({ seed: 7, maxElectionsPerSecond: 0 });
  assert.match(r.violations.join('\n'), /election rate: p\d started 1 elections within one second/);
  // And a bound of zero for rejoining cannot be met: nodes are still electing when faults stop.
  const s = runSimulation({ seed: 7, rejoinWithinMs: 0 });
  assert.match(s.violations.join('\n'), /rejoin: /);
});
