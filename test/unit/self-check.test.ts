// The run's own cross-checks (report/self-check.ts): a consistent result passes every one, and each
// kind of doctoring a reader could not see in the report is caught and named with its figures; the
// same checks run on a stored run with `pole-bench report --check`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { selfCheck } from '../../src/report/self-check.js';
import { RUN_JS } from '../support/run-cli.js';
import { result2dc, type MutableResult } from './report-fixture.js';

const run = promisify(execFile);

function violationsOf(r: MutableResult): readonly string[] {
  return selfCheck(r).violations;
}

describe('selfCheck', () => {
  it('finds nothing wrong with a consistent result, and says what it checked', () => {
    const c = selfCheck(result2dc());
    assert.deepEqual(c.violations, []);
    assert.ok(c.checked.length >= 6, c.checked.join('; '));
  });

  it('flags a negative outage (the old "client gap" of a write the dead leader had committed)', () => {
    const r = result2dc();
    r.recovery.perDc.tud = { outageMs: -3.53, longestAckGapMs: 362 };
    const v = violationsOf(r);
    assert.ok(
      v.some((x) => /^outage ≥ 0.*tud -3\.53 ms/.test(x)),
      v.join('\n'),
    );
    assert.ok(
      v.some((x) => /^no negative duration: recovery\.perDc\.tud\.outageMs = -3\.53/.test(x)),
      v.join('\n'),
    );
  });

  it('flags an outage before the new leader first committed anything', () => {
    const r = result2dc();
    r.recovery.perDc.cern = { outageMs: 700, longestAckGapMs: 690 };
    assert.ok(violationsOf(r).some((x) => /cern 700\.00 ms, before the first commit at 731\.40 ms/.test(x)));
  });

  it('flags an outage the window’s longest write cannot have waited through', () => {
    const r = result2dc();
    r.latency.tud!.during!.max = 500;
    // Where writes failed, one may have given up instead of waiting: not held against the outage.
    assert.ok(!violationsOf(r).some((x) => /longest 500/.test(x)));
    r.latency.tud!.failed = 0;
    r.latency.tud!.during!.count += 30;
    assert.ok(violationsOf(r).some((x) => /longest 500\.00 ms, outage 760\.20 ms/.test(x)));
    // A link change leaves the old leader serving until it resigns: nothing to hold it against.
    r.leaders.cause = { ...r.leaders.cause!, action: 'link' };
    assert.ok(!violationsOf(r).some((x) => /longest 500/.test(x)));
  });

  it('flags a leader change before the fault: the "before" window is then not the initial leader’s', () => {
    const r = result2dc();
    const initial = r.leaders.initial;
    // After the fault (15.004 s) a leader with no fault of its own is not the "before" window's.
    r.elections.unprovoked = [{ atS: 20.5, leader: 'p9' }];
    assert.ok(!violationsOf(r).some((x) => /took over/.test(x)));
    r.elections.unprovoked = [{ atS: 2.3, leader: 'p9' }];
    assert.ok(
      violationsOf(r).some((x) =>
        new RegExp(
          `^one leader through “before”.*p9 took over from ${initial} at 2\\.30 s with no fault`,
        ).test(x),
      ),
      violationsOf(r).join('\n'),
    );
  });

  it('holds a clock offset signed (another host may be behind), its ± and round trip not', () => {
    const r = result2dc();
    const e = {
      at: '2024-11-21T06:20:01.000Z',
      offsetMs: -40,
      monoOffsetMs: -1.7e12,
      uncertaintyMs: 0.2,
      rttMs: 0.4,
      probes: 8,
    };
    r.clocks = {
      method: 'm',
      hosts: { h: { before: e, after: null, driftPpm: null, driftUncertaintyPpm: null } },
    };
    assert.deepEqual(violationsOf(r), []);
    r.clocks.hosts.h!.before = { ...e, uncertaintyMs: -0.2 };
    assert.ok(violationsOf(r).some((x) => /clocks\.hosts\.h\.before\.uncertaintyMs = -0\.20/.test(x)));
  });

  it('flags an agent whose monotonic offset disagrees with its node’s helper’s beyond their ± and drift', () => {
    const r = result2dc();
    const e = (at: string, monoOffsetMs: number, uncertaintyMs: number) => ({
      at,
      offsetMs: 0.01,
      monoOffsetMs,
      uncertaintyMs,
      rttMs: 2 * uncertaintyMs,
      probes: 8,
    });
    const host = (before: ReturnType<typeof e>, sharesKernelWith?: string) => ({
      before,
      after: null,
      driftPpm: null,
      driftUncertaintyPpm: null,
      ...(sharesKernelWith ? { sharesKernelWith } : {}),
    });
    // 10 s apart: ± 0.2 + 0.3, 100 ppm × 10 s = 1 ms of drift, 1 ms of slack: 2.5 ms allowed.
    r.clocks = {
      method: 'm',
      hosts: {
        'host-1': host(e('2024-11-21T06:20:00.000Z', -1.7e12, 0.2)),
        'agent tud': host(e('2024-11-21T06:20:10.000Z', -1.7e12 + 2.4, 0.3), 'host-1'),
      },
    };
    assert.ok(!violationsOf(r).some((x) => /one kernel/.test(x)), violationsOf(r).join('\n'));
    r.clocks.hosts['agent tud']!.before = e('2024-11-21T06:20:10.000Z', -1.7e12 + 2.6, 0.3);
    assert.ok(
      violationsOf(r).some((x) =>
        /^one kernel, one clock.*agent tud and host-1 before: 2\.6\d ms apart, allowed 2\.50 \(± 0\.30 and 0\.20, 10\.0 s between the probes\)/.test(
          x,
        ),
      ),
      violationsOf(r).join('\n'),
    );
  });

  it('flags a silence longer than any write of the data center could have waited through', () => {
    const r = result2dc();
    r.recovery.perDc.cern = { outageMs: 741.9, longestAckGapMs: 900 };
    // Where writes failed, one may have given up instead of waiting: not held against the silence.
    assert.ok(!violationsOf(r).some((x) => /silence 900/.test(x)));
    r.latency.cern!.failed = 0;
    r.latency.cern!.during!.count += 30;
    // cern had no failed write and sends one every 2 ms: its longest write was 755.6 ms.
    const v = violationsOf(r);
    assert.ok(
      v.some((x) =>
        /^the longest write ≥ the longest silence.*cern: longest write 755\.60 ms, silence 900\.00 ms, a write every 2\.00 ms/.test(
          x,
        ),
      ),
      v.join('\n'),
    );
    // With Poisson arrivals the gap between two sends has no bound: nothing to hold it against.
    r.workload.arrival = 'poisson';
    assert.ok(!violationsOf(r).some((x) => /silence 900/.test(x)));
  });

  it('holds the writes the final read covered against the writes the agents’ histograms counted', () => {
    const r = result2dc();
    const flagged = (): string[] => violationsOf(r).filter((x) => x.startsWith('the final read covered'));
    assert.deepEqual(flagged(), []);
    // 940 writes never looked for: an agent's list cut short, say.
    r.writes = { ...r.writes, finalRead: { ...r.writes.finalRead!, writes: 29_000 } };
    assert.deepEqual(flagged(), [
      "the final read covered every acknowledged write: the writes whose keys it read = the writes the agents’ histograms counted acknowledged: the final read covered 29000 writes (29940 keys), the agents' histograms counted 29940 acknowledged",
    ]);
    // Slots shared by many writes (ZooKeeper, etcd, workload.keys): keys are fewer, writes are not.
    r.writes = { ...r.writes, finalRead: { ...r.writes.finalRead!, keys: 3_930, writes: 29_940 } };
    assert.deepEqual(flagged(), []);
    // A histogram that counted writes nobody listed is as wrong as a list cut short.
    r.latency.cern!.during!.count += 7;
    assert.equal(flagged().length, 1, violationsOf(r).join('\n'));
    // A data center's figures lost with its agent: neither count has its writes; not evaluated.
    r.latency.tud!.lost = 'the agent exited';
    const c = selfCheck(r);
    assert.deepEqual(
      c.violations.filter((x) => x.startsWith('the final read covered')),
      [],
    );
    assert.ok(
      c.notEvaluated?.some(
        (n) => n.check.startsWith('the final read covered') && /agent was lost/.test(n.why),
      ),
    );
  });

  it('holds a traced floor against every write’s mean less the model', () => {
    const r = result2dc();
    r.floor.source = 'traced';
    // tud before: sentMean 31.12 − model 31.125 ≈ 0: a floor of 1.2 ms is within 1 ms of it ...
    r.floor.perDc.tud = { before: 0.9, after: 0.1 };
    r.floor.perDc.cern = { before: 0.1, after: 0.1 };
    assert.deepEqual(violationsOf(r), []);
    // ... one of 6 ms is not.
    r.floor.perDc.tud.before = 6;
    assert.ok(
      violationsOf(r).some((x) =>
        /tud before: mean 31\.12 − model 31\.13 = -0\.00 ms, floor 6\.00 ms/.test(x),
      ),
    );
    // ... unless so few traced writes spread so widely that 6 ms is within 3 standard errors of
    // their mean: 115 writes with a standard deviation of 25 ms give 3 × 2.33 = 7.0 ms.
    r.anatomy.perDc.tud!.before!.sdMs = 25;
    assert.ok(!violationsOf(r).some((x) => /tud before/.test(x)), violationsOf(r).join('\n'));
    r.anatomy.perDc.tud!.before!.sdMs = 15; // 3 × 1.40 = 4.2 ms: 6 ms is not
    assert.ok(
      violationsOf(r).some((x) => /tud before: .*\(allowed ±4\.20 ms\)/.test(x)),
      violationsOf(r).join('\n'),
    );
    // Every write's spread, where the run has it, sets the standard error instead: a stall that
    // delayed a second of writes but no traced one widens it (30 ms: 3 × 2.80 = 8.4 ms) ...
    // (its longest write 400 ms: with 43 ms, no spread of 30 ms fits a mean of 31, below)
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 30, max: 400 };
    assert.ok(!violationsOf(r).some((x) => /tud before/.test(x)), violationsOf(r).join('\n'));
    // ... and writes that all kept close (4 ms: 3 × 0.37 = 1.1 ms, below 20 % of the floor) leave
    // the traced sample's wide spread no room.
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 4 };
    r.anatomy.perDc.tud!.before!.sdMs = 25;
    assert.ok(
      violationsOf(r).some((x) => /tud before: .*\(allowed ±1\.20 ms\)/.test(x)),
      violationsOf(r).join('\n'),
    );
  });

  it('excuses a traced floor held off by one traced write alone, never by the rest', () => {
    const r = result2dc();
    r.floor.source = 'traced';
    r.floor.perDc.tud = { before: 3, after: 0.1 };
    r.floor.perDc.cern = { before: 0.1, after: 0.1 };
    // tud before: every write's mean − the model ≈ 0, so a floor of 3 ms is 3 over; 115 writes
    // with a spread of 4 ms allow 3 × 0.37 = 1.12 ms.
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 4, max: 400 };
    const tud = r.anatomy.perDc.tud!.before!;
    const tudBefore = (): string[] => violationsOf(r).filter((x) => /tud before/.test(x));
    assert.equal(tudBefore().length, 1);
    // One traced write 230 ms beyond the network (a stall) made it: without it the floor is
    // (115 × 3 − 230) / 114 = 1.01 ms, within the 1.12 allowed.
    r.anatomy.perDc.tud!.before = { ...tud, beyondNetworkRangeMs: { least: 0.5, most: 230 } };
    assert.deepEqual(tudBefore(), []);
    // A floor of 6 ms is still 4.04 over without that write: the rest of the sample shows it too.
    r.floor.perDc.tud.before = 6;
    assert.equal(tudBefore().length, 1);
    assert.match(
      tudBefore()[0]!,
      /: tud before: mean 31\.12 − model 31\.13 = -0\.00 ms, floor 6\.00 ms, 4\.04 without its farthest traced write \(allowed ±1\.20 ms\)$/,
    );
    // A floor too low is not excused by the slowest write: only the fastest could have pulled it
    // down, and without that one (0.5 ms) it is lower still.
    r.floor.perDc.tud.before = 0.1;
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentMean: 35.12 };
    assert.match(tudBefore()[0] ?? '', /floor 0\.10 ms, 0\.10 without its farthest traced write/);
  });

  it('holds the glibc tunables the report names against what each node read itself', () => {
    const what = 'every POLE node started with the glibc tunables the report names';
    const r = result2dc();
    // No node said (a stored run, another target): nothing to hold the line against.
    r.environment.nodeTunables = 'glibc.malloc.hugetlb=1';
    assert.ok(!selfCheck(r).checked.includes(what));
    const all = 'glibc.malloc.hugetlb=1';
    r.environment.nodeTunablesSeen = { p1: all, p2: all, p3: all, p4: all, p5: all };
    assert.ok(selfCheck(r).checked.includes(what));
    assert.deepEqual(violationsOf(r), []);
    // A container that lost its Env, and one whose start script mangled the value.
    r.environment.nodeTunablesSeen.p2 = null;
    r.environment.nodeTunablesSeen.p4 = "'glibc.malloc.hugetlb=1'";
    assert.deepEqual(
      violationsOf(r).filter((v) => v.startsWith(what)),
      [
        `${what}: p2 read none, not "glibc.malloc.hugetlb=1"`,
        `${what}: p4 read "'glibc.malloc.hugetlb=1'", not "glibc.malloc.hugetlb=1"`,
      ],
    );
  });
});

describe("selfCheck: the relay's CPU against the harness process's", () => {
  const what = "the relay's threads' CPU within the harness process's, + a tick either way";

  it('passes the relay inside the harness, fails one that used more than the process holding it', () => {
    const r = result2dc();
    // 30.6 % of a core in a harness at 41.2 %.
    assert.ok(selfCheck(r).checked.includes(what));
    assert.deepEqual(
      violationsOf(r).filter((v) => v.startsWith(what)),
      [],
    );
    // Over 30 s a tick either way is 0.07 % of a core: 41.25 passes, 41.3 does not.
    r.cpu.shapingPctOfCore = 41.25;
    assert.deepEqual(
      violationsOf(r).filter((v) => v.startsWith(what)),
      [],
    );
    r.cpu.shapingPctOfCore = 41.3;
    assert.deepEqual(
      violationsOf(r).filter((v) => v.startsWith(what)),
      [
        `${what}: the relay's threads 41.30 % of a core, the harness process that holds them 41.20 (at most 0.07 more allowed)`,
      ],
    );
    // No relay in the harness (netem, the swarm's relay service): nothing to hold.
    r.cpu.shapingPctOfCore = null;
    assert.ok(!selfCheck(r).checked.includes(what));
  });
});

describe('selfCheck: every write’s spread against its own window', () => {
  const sdCheck = /^every window’s spread of every write/;

  it('passes a spread the window allows, names one it cannot have (an sd in µs, a stall that never was)', () => {
    const r = result2dc();
    // tud before: mean 31.12, longest 43.01: at most √((43.01 × 1.01 − 31.12) × 31.12 × 1.01) = 19.6 ms.
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 2.7 };
    assert.deepEqual(
      violationsOf(r).filter((v) => sdCheck.test(v)),
      [],
    );
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: 30 };
    assert.ok(
      violationsOf(r).some((v) =>
        /^every window’s spread.*tud before: sd 30\.00 ms, mean 31\.12, longest 43\.01: at most 19\.6\d/.test(
          v,
        ),
      ),
      violationsOf(r).join('\n'),
    );
    // Files from before the sd was recorded: nothing to hold.
    r.latency.tud!.before = { ...r.latency.tud!.before!, sentSd: null };
    assert.deepEqual(
      violationsOf(r).filter((v) => sdCheck.test(v)),
      [],
    );
  });
});

describe('selfCheck: the links and the calibrated floor, each against a second reading', () => {
  const linkCheck = /^every link measured within/;
  const floorCheck = /^the calibrated floor taken on a quiet machine/;

  it('holds a measured link less the undelayed route read beside it to the configured RTT', () => {
    const r = result2dc();
    assert.ok(selfCheck(r).checked.some((c) => linkCheck.test(c)));
    // A doubled delay: 41.5 ms less 0.31 is 20.44 past the configured 20.75, allowed max(2, 2.075) + 2 × 0.29.
    r.links.tud!.cern = { configuredRttMs: 20.75, measuredRttMs: 41.81, jitterMs: 0.29 };
    assert.ok(
      violationsOf(r).some((v) =>
        /^every link measured.*tud→cern: measured 41\.81 ms − the undelayed 0\.31 = 41\.50, configured 20\.75 \(allowed ±2\.66\)/.test(
          v,
        ),
      ),
      violationsOf(r).join('\n'),
    );
    // A missing delay fails as well.
    r.links.tud!.cern = { configuredRttMs: 20.75, measuredRttMs: 0.6, jitterMs: 0.29 };
    assert.ok(violationsOf(r).some((v) => /tud→cern: measured 0\.60 ms/.test(v)));
  });

  it('takes a held-up machine out: 32.62 ms read while the undelayed route took 11.9', () => {
    const r = result2dc();
    r.links.tud!.cern = { configuredRttMs: 20.75, measuredRttMs: 32.62, jitterMs: 0.29 };
    assert.ok(
      violationsOf(r).some((v) => linkCheck.test(v)),
      'the undelayed route read 0.31 ms',
    );
    r.linkReadings = {
      readings: [{ rtts: { 'tud>cern': 32.62, 'cern>tud': 32.5 }, undelayedMs: 11.9 }],
      kept: 0,
    };
    r.links.cern!.tud = { configuredRttMs: 20.75, measuredRttMs: 32.5, jitterMs: 0.29 };
    assert.deepEqual(
      violationsOf(r).filter((v) => linkCheck.test(v)),
      [],
    );
  });

  it('lets a link run over by what the relay says it released the pair late, never under', () => {
    const r = result2dc();
    // e2e-2dc's 10 ms link read 14.33 ms with the undelayed route at 1.69: 2.64 over, 2.28 allowed.
    r.links.tud!.cern = { configuredRttMs: 10, measuredRttMs: 14.33, jitterMs: 0.14 };
    r.links.cern!.tud = { configuredRttMs: 10, measuredRttMs: 11.69, jitterMs: 0.14 };
    r.linkReadings = { readings: [{ rtts: { 'tud>cern': 14.33 }, undelayedMs: 1.69 }], kept: 0 };
    const links = (): string[] => violationsOf(r).filter((v) => linkCheck.test(v));
    assert.equal(links().length, 1);
    assert.match(
      links()[0]!,
      /tud→cern: measured 14\.33 ms − the undelayed 1\.69 = 12\.64, configured 10\.00 \(allowed ±2\.28\)$/,
    );
    // The relay released that pair's chunks 0.4 ms late on the round trip: the 0.36 over is its.
    r.linkReadings = {
      readings: [{ rtts: { 'tud>cern': 14.33 }, undelayedMs: 1.69, latenessMs: { 'tud>cern': 0.4 } }],
      kept: 0,
    };
    assert.deepEqual(links(), []);
    // 0.3 ms late leaves 0.06 unexplained, and the message says what was allowed for.
    r.linkReadings = {
      readings: [{ rtts: { 'tud>cern': 14.33 }, undelayedMs: 1.69, latenessMs: { 'tud>cern': 0.3 } }],
      kept: 0,
    };
    assert.match(links()[0] ?? '', /\(allowed ±2\.28, and 0\.30 of the relay's late releases over\)$/);
    // Lateness never excuses a link read short: a missing delay is as wrong as before.
    r.links.tud!.cern = { configuredRttMs: 10, measuredRttMs: 2.2, jitterMs: 0.14 };
    r.linkReadings = {
      readings: [{ rtts: { 'tud>cern': 2.2 }, undelayedMs: 1.69, latenessMs: { 'tud>cern': 20 } }],
      kept: 0,
    };
    assert.match(links()[0] ?? '', /tud→cern: measured 2\.20 ms/);
  });

  it("holds the relay's lateness against the probe's mean round trips: an overstated lateness fails", () => {
    const r = result2dc();
    const latenessCheck = /relay's own account of each pair's late releases/;
    r.links.tud!.cern = { configuredRttMs: 10, measuredRttMs: 11.3, jitterMs: 0.14 };
    const reading = (late: number, mean: number) => ({
      readings: [
        {
          rtts: { 'tud>cern': 11.3 },
          undelayedMs: 0.84,
          latenessMs: { 'tud>cern': late },
          meanRtts: { 'tud>cern': mean },
          undelayedMeanMs: 0.9,
        },
      ],
      kept: 0,
    });
    // A quiet reading of 2026-11-29 (e2e-2dc, seed 7): the relay 0.55 ms late, the probe's means
    // 0.5 over the configured RTT and the undelayed route.
    r.linkReadings = reading(0.55, 11.4);
    assert.ok(selfCheck(r).checked.some((c) => latenessCheck.test(c)));
    assert.deepEqual(
      violationsOf(r).filter((v) => latenessCheck.test(v)),
      [],
    );
    // A probe that saw far more than the relay counted is no contradiction: a stall before the
    // relay stamps an arrival lengthens the round trip without a late release.
    r.linkReadings = reading(0.55, 16);
    assert.deepEqual(
      violationsOf(r).filter((v) => latenessCheck.test(v)),
      [],
    );
    // A relay that says 3 ms late where the probe saw 0.5 is not believed beyond 2.28 ms.
    r.linkReadings = reading(3, 11.4);
    const failed = violationsOf(r).filter((v) => latenessCheck.test(v));
    assert.equal(failed.length, 1, failed.join('\n'));
    assert.match(
      failed[0]!,
      /: tud→cern: the relay counted 3\.00 ms of late releases; the probe's mean 11\.40 ms − the undelayed 0\.90 − configured 10\.00 = 0\.50 \(allowed \+2\.28\)$/,
    );
    // A stored run without the means is not held to it.
    r.linkReadings = { readings: [{ rtts: { 'tud>cern': 11.3 }, undelayedMs: 0.84 }], kept: 0 };
    assert.ok(!selfCheck(r).checked.some((c) => latenessCheck.test(c)));
  });

  it('checks no link where the shaping read none (netem, a stored run from before)', () => {
    const r = result2dc();
    delete r.linkReadings;
    r.links.tud!.cern = { configuredRttMs: 20.75, measuredRttMs: 41.81 };
    const c = selfCheck(r);
    assert.ok(!c.checked.some((x) => linkCheck.test(x)));
    assert.deepEqual(c.violations, []);
  });

  it('names a calibrated floor whose kept reading ran far past its median (a stall)', () => {
    const r = result2dc();
    assert.ok(selfCheck(r).checked.some((c) => floorCheck.test(c)));
    r.floor.readings = [
      { leaderMs: 15.2, leaderMedianMs: 4.9, followerMs: 16.1, followerMedianMs: 5.2, writes: 100 },
      { leaderMs: 9.8, leaderMedianMs: 4.8, followerMs: 6.4, followerMedianMs: 5.1, writes: 100 },
    ];
    r.floor.kept = 1;
    assert.ok(
      violationsOf(r).some((v) =>
        /^the calibrated floor taken.*leader mean 9\.80 ms over its median 4\.80 \(the least stalled of 2 calibrations\)/.test(
          v,
        ),
      ),
      violationsOf(r).join('\n'),
    );
    // Skewed but not stalled: ZooKeeper's own writes ran 0.6-2.1 ms past their medians of 3.8-4.6.
    r.floor.readings[1] = {
      leaderMs: 5.8,
      leaderMedianMs: 4.4,
      followerMs: 6.6,
      followerMedianMs: 4.6,
      writes: 100,
    };
    assert.deepEqual(
      violationsOf(r).filter((v) => floorCheck.test(v)),
      [],
    );
    // A build beside it moves the medians with the means: the other work it read names it.
    r.floor.readings[1] = {
      ...r.floor.readings[1]!,
      leaderMs: 11.45,
      leaderMedianMs: 7.98,
      otherPctOfCore: 131,
    };
    assert.ok(
      violationsOf(r).some((v) =>
        /^the calibrated floor taken.*131 % of a core of other work beside it/.test(v),
      ),
      violationsOf(r).join('\n'),
    );
    // A traced floor has no calibrations to check.
    r.floor.source = 'traced';
    assert.ok(!selfCheck(r).checked.some((c) => floorCheck.test(c)));
  });
});

describe('pole-bench report --check', () => {
  it('passes a consistent stored run and fails a doctored one, naming what is wrong', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-check-'));
    try {
      const file = join(dir, 'result.json');
      await writeFile(file, JSON.stringify(result2dc()));
      const ok = await run(process.execPath, [RUN_JS, 'report', '--check', dir]);
      const held = /^(\d+) of (\d+) checks held, 0 violated, (\d+) not evaluated$/m.exec(ok.stdout);
      assert.ok(held, ok.stdout);
      assert.equal(Number(held[1]) + Number(held[3]), Number(held[2]), ok.stdout);
      // What was not evaluated says why, and is not counted as held.
      assert.match(
        ok.stdout,
        /^not evaluated: ZooKeeper’s own election time .*\(pole does not time its own election\)$/m,
      );

      const doctored = result2dc();
      doctored.recovery.perDc.tud = { outageMs: -1.48, longestAckGapMs: 352 };
      doctored.latency.tud!.after!.count += 100;
      await writeFile(file, JSON.stringify(doctored));
      const bad = await run(process.execPath, [RUN_JS, 'report', '--check', dir]).then(
        () => assert.fail('report --check passed a doctored result'),
        (err: { code: number; stdout: string }) => err,
      );
      assert.equal(bad.code, 4, 'suspect');
      assert.match(bad.stdout, /violated: outage ≥ 0 .*tud -1\.48 ms/);
      assert.match(
        bad.stdout,
        /violated: the final read covered .*the agents' histograms counted 30040 acknowledged/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
