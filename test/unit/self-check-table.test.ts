// Every cross-check can fail, and only for its own figure: for each check a row sets up a real
// result (the paper-2dc fixture) so that the check is evaluated and holds, then perturbs the one
// figure the check guards; exactly that check must trip. A check without a row fails the test, so a
// check that cannot fail cannot be added unnoticed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHECKS, selfCheck, type CheckId } from '../../src/report/self-check.js';
import { result2dc, type MutableResult } from './report-fixture.js';

interface Row {
  /** Makes the check evaluable on the fixture (it must then hold). */
  readonly setUp?: (r: MutableResult) => void;
  /** Moves the one figure the check guards. */
  readonly perturb: (r: MutableResult) => void;
}

const estimate = (at: string, monoOffsetMs: number) => ({
  at,
  offsetMs: 0.01,
  monoOffsetMs,
  uncertaintyMs: 0.2,
  rttMs: 0.4,
  probes: 8,
});
const host = (before: ReturnType<typeof estimate>, sharesKernelWith?: string) => ({
  before,
  after: null,
  driftPpm: null,
  driftUncertaintyPpm: null,
  ...(sharesKernelWith ? { sharesKernelWith } : {}),
});

/** No failed writes in tud: the checks that hold a write's wait against a silence apply there. */
const noFailuresInTud = (r: MutableResult): void => {
  r.latency.tud!.failed = 0;
};

const ROWS: Record<CheckId, Row> = {
  outageAfterFirstCommit: {
    // The new leader's own stamp at 731.4 ms; an agent saw it 31 ms earlier.
    perturb: (r) => {
      r.recovery.perDc.cern = { ...r.recovery.perDc.cern!, outageMs: 700 };
    },
  },
  longestDuringOutage: {
    setUp: noFailuresInTud,
    perturb: (r) => {
      r.recovery.perDc.tud = { ...r.recovery.perDc.tud!, outageMs: r.latency.tud!.during!.max! + 50 };
    },
  },
  longestSilence: {
    setUp: noFailuresInTud,
    perturb: (r) => {
      const l = r.latency.tud!;
      const longest = Math.max(...[l.warmup, l.before, l.during, l.after].map((s) => s?.max ?? 0));
      r.recovery.perDc.tud = { ...r.recovery.perDc.tud!, longestAckGapMs: longest + 50 };
    },
  },
  oneLeaderBefore: {
    perturb: (r) => {
      r.elections.unprovoked = [{ atS: 2.3, leader: 'p9' }];
    },
  },
  faultsAsPlanned: {
    // p2 paused at 8 s for 2 s before the kill of p5.
    setUp: (r) => {
      r.scenario = {
        ...r.scenario,
        faults: [
          { atS: 8, action: 'pause', target: 'p2', ref: 1 },
          { atS: 10, action: 'resume', target: 'p2', undoes: 1 },
          { atS: 15, action: 'kill', target: 'leader' },
        ],
      };
      r.timeline.faults = [
        { atS: 8.002, action: 'pause', node: 'p2', ref: 1 },
        { atS: 10.003, action: 'resume', node: 'p2', undoes: 1 },
        ...r.timeline.faults,
      ];
    },
    // The resume on time, the pause 1.5 s late behind something else: held 0.5 s of its 2.
    perturb: (r) => {
      r.timeline.faults[0] = { ...r.timeline.faults[0]!, atS: 9.5, lateMs: 1500 };
    },
  },
  oneKernelOneClock: {
    setUp: (r) => {
      r.clocks = {
        method: 'm',
        hosts: {
          'host-1': host(estimate('2024-11-21T06:20:00.000Z', -1.7e12)),
          'agent tud': host(estimate('2024-11-21T06:20:01.000Z', -1.7e12 + 0.5), 'host-1'),
        },
      };
    },
    perturb: (r) => {
      r.clocks!.hosts['agent tud']!.before = estimate('2024-11-21T06:20:01.000Z', -1.7e12 + 5);
    },
  },
  phasesInOrder: {
    perturb: (r) => {
      r.recovery.detectMs = r.recovery.electedMs! + 10;
    },
  },
  tracedFloor: {
    setUp: (r) => {
      // The members' traced floor where every write's mean less the model puts it, within 0.5 ms.
      r.floor.source = 'traced';
      for (const [dc, floors] of Object.entries(r.floor.perDc))
        for (const w of ['before', 'after'] as const) {
          const mean = r.latency[dc]?.[w]?.sentMean;
          const model = r.model[dc]?.[w];
          if (mean != null && model != null) floors[w] = Math.max(0, mean - model) + 0.5;
        }
    },
    perturb: (r) => {
      r.floor.perDc.tud = { ...r.floor.perDc.tud!, before: r.floor.perDc.tud!.before! + 10 };
    },
  },
  spreadBound: {
    setUp: (r) => {
      r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 2.7 };
    },
    perturb: (r) => {
      r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 30 };
    },
  },
  linksMeasured: {
    perturb: (r) => {
      r.links.tud!.cern = { ...r.links.tud!.cern!, measuredRttMs: 41.81 };
    },
  },
  relayLateness: {
    setUp: (r) => {
      r.linkReadings = {
        readings: [
          {
            rtts: { 'tud>cern': 20.93, 'cern>tud': 20.88 },
            undelayedMs: 0.31,
            latenessMs: { 'tud>cern': 0.3 },
            meanRtts: { 'tud>cern': 21.4 },
            undelayedMeanMs: 0.35,
          },
        ],
        kept: 0,
      };
    },
    perturb: (r) => {
      // The relay says it released the pair 5 ms late; the probe saw 0.3 ms over the RTT. A
      // lateness the link check never needs (its reading is within the allowance without it).
      r.linkReadings!.readings[0] = {
        ...r.linkReadings!.readings[0]!,
        latenessMs: { 'tud>cern': 5 },
      };
    },
  },
  calibratedFloorQuiet: {
    perturb: (r) => {
      r.floor.readings = [
        { leaderMs: 9.8, leaderMedianMs: 4.8, followerMs: 6.4, followerMedianMs: 5.1, writes: 100 },
      ];
      r.floor.kept = 0;
    },
  },
  finalReadCoverage: {
    perturb: (r) => {
      r.writes = { ...r.writes, finalRead: { ...r.writes.finalRead!, writes: 29_000 } };
    },
  },
  historyAgrees: {
    // A history of the fixture's writes, every one completed, no reads.
    setUp: (r) => {
      r.safety = {
        history: 'history.jsonl',
        broken: 0,
        undecided: 0,
        models: [],
        writes: {
          sent: r.writes.attempted - (r.writes.failedCodes?.OVERFLOW ?? 0),
          ok: r.writes.acked,
        },
      };
    },
    // One acknowledged write that the history holds as in doubt.
    perturb: (r) => {
      r.safety = { ...r.safety!, writes: { ...r.safety!.writes!, ok: r.safety!.writes!.ok - 1 } };
    },
  },
  zkBestVote: {
    setUp: (r) => {
      r.leaders.oracle = 'zookeeper-fle';
      r.leaders.elected = 'p4';
      r.leaders.scores = { p3: [1, 1, 15_003, 3], p4: [1, 1, 15_003, 4] };
    },
    perturb: (r) => {
      r.leaders.elected = 'p3';
    },
  },
  zkTookTime: {
    setUp: (r) => {
      r.target = 'zookeeper';
      r.recovery.explain = {
        detection: null,
        election: {
          leader: 'p4',
          atMs: 650,
          reason: null,
          timeoutMs: null,
          rounds: null,
          unheard: null,
          down: null,
          tookMs: 240,
          tookFromMs: 420,
          tookLoggedMs: 655,
          tookLookingMs: 405,
        },
        sync: {
          followers: null,
          fetched: null,
          discoveryMs: null,
          syncMs: null,
          servingAfterElectedMs: null,
        },
      };
    },
    perturb: (r) => {
      r.recovery.explain = {
        ...r.recovery.explain!,
        election: { ...r.recovery.explain!.election, tookMs: 400 },
      };
    },
  },
  nodeTunables: {
    setUp: (r) => {
      r.environment.nodeTunables = 'glibc.malloc.arena_max=1';
      r.environment.nodeTunablesSeen = { p1: 'glibc.malloc.arena_max=1', p2: 'glibc.malloc.arena_max=1' };
    },
    perturb: (r) => {
      r.environment.nodeTunablesSeen = { ...r.environment.nodeTunablesSeen!, p2: null };
    },
  },
  relayCpu: {
    perturb: (r) => {
      r.cpu.shapingPctOfCore = r.cpu.groups.harness!.pctOfCore + 5;
    },
  },
  noNegative: {
    perturb: (r) => {
      r.load.latenessP99Ms = -0.4;
    },
  },
};

describe('every cross-check trips on its own figure, and only its own', () => {
  it('has a row for every check', () => {
    assert.deepEqual(Object.keys(ROWS).sort(), Object.keys(CHECKS).sort());
  });

  for (const id of Object.keys(CHECKS) as CheckId[]) {
    it(id, () => {
      const row = ROWS[id];
      assert.ok(row, `no row for the check ${id}: add one that makes it fail`);
      const what = CHECKS[id];
      const r = result2dc();
      row.setUp?.(r);
      const held = selfCheck(r);
      assert.ok(held.checked.includes(what), `${id} not evaluated: ${JSON.stringify(held.notEvaluated)}`);
      assert.deepEqual(held.violations, [], `${id} set up`);
      row.perturb(r);
      const tripped = selfCheck(r);
      assert.ok(tripped.violations.length > 0, `${id} did not trip`);
      assert.deepEqual(
        tripped.violations.filter((v) => !v.startsWith(`${what}: `)),
        [],
        `${id} tripped others`,
      );
    });
  }

  it('never counts a check it could not evaluate as held', () => {
    const r = result2dc();
    r.recovery.firstCommitFrom = 'clients';
    r.floor.source = 'traced';
    for (const w of Object.values(r.anatomy.perDc)) for (const b of Object.values(w)) b.writes = 6;
    const c = selfCheck(r);
    const skipped = (id: CheckId): string | undefined =>
      c.notEvaluated?.find((n) => n.check === CHECKS[id])?.why;
    assert.match(skipped('outageAfterFirstCommit') ?? '', /no independent source/);
    assert.match(skipped('tracedFloor') ?? '', /too few traced writes: at most 6 in a window/);
    for (const n of c.notEvaluated ?? []) assert.ok(!c.checked.includes(n.check), n.check);
    // Every check is listed once, one way or the other.
    assert.equal(c.checked.length + (c.notEvaluated?.length ?? 0), Object.keys(CHECKS).length);
  });
});
