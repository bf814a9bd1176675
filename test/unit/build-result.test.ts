// A run's result built from collected data alone (report/build-result.ts): the members' recovery
// events of a recorded paper-2dc run (test/fixtures/recovery-2dc-run.json, p5 killed at 10 s, p4
// elected) with made-up `done` messages of its two agents, checked figure by figure against what
// the fixture says by hand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DoneMessage, LatencySummary } from '../../src/load/agent-protocol.js';
import { cpuReport } from '../../src/measure/cpu-sampler.js';
import { unmeasuredFloor, type NodeFloor } from '../../src/measure/node-floor.js';
import { emptyResourceReport } from '../../src/measure/resource-sampler.js';
import { buildResult, type CollectedRun, type ResultSetting } from '../../src/report/build-result.js';
import type { AgentRecord } from '../../src/report/client-recovery.js';
import type { FaultMark } from '../../src/vocabulary/names.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';
import { parseTopology } from '../../src/topology/topology.js';
import { ROOT } from '../support/run-cli.js';

interface RecordedRun {
  readonly killAt: number;
  readonly scheduledAt: number;
  readonly loadStart: number;
  readonly agents: Record<string, AgentRecord>;
  readonly events: ReadonlyArray<Record<string, unknown> & { t: number; node: string; ev: string }>;
}

const run = JSON.parse(
  readFileSync(join(ROOT, 'test', 'fixtures', 'recovery-2dc-run.json'), 'utf8'),
) as RecordedRun;
const topology = parseTopology(
  'paper-2dc.yaml',
  readFileSync(join(ROOT, 'topologies', 'paper-2dc.yaml'), 'utf8'),
);

function summary(count: number, mean: number, max: number): LatencySummary {
  return { count, mean, sd: mean / 10, p50: mean, p90: mean + 1, p99: mean + 2, p999: mean + 3, max };
}

/** One window of an agent: corrected latency, and 0.5 ms less from the actual send. */
function phase(count: number, mean: number, max: number): DoneMessage['phases'][string] {
  return {
    corrected: summary(count, mean, max),
    uncorrected: summary(count, mean - 0.5, max),
    lateness: summary(count, 0.1, 1),
    failed: 0,
  };
}

/** 500 writes/s for 20 s: warm-up, before, the fault's window (longest write `duringMax`), after. */
function done(dc: string, beforeMean: number, duringMax: number): DoneMessage {
  const windows = { warmup: 2500, before: 2498, gap: 300, after: 4000 };
  const acked = windows.warmup + windows.before + windows.gap + windows.after;
  const agent = run.agents[dc]!;
  return {
    v: 1,
    type: 'done',
    dc,
    startMs: run.loadStart,
    sendEndMs: run.loadStart + 20_000,
    // None failed: the self-check holds the longest write of the fault's window against the outage.
    totals: { attempted: acked, acked, failed: 0, timedOut: 0, overflow: 0, retries: 1 },
    phases: {
      warmup: phase(windows.warmup, beforeMean + 4, 80),
      before: phase(windows.before, beforeMean, 60),
      // A mean no longer than the window's longest write (the self-check holds the two together).
      gap: phase(windows.gap, Math.min(300, duringMax / 2), duringMax),
      after: phase(windows.after, beforeMean + 1, 70),
    },
    lateness: summary(acked, 0.1, 2),
    targetRate: 500,
    achievedRate: 499.5,
    sentRate: 500,
    firstAckAfter: {},
    firstAckByEpoch: agent.firstAckByEpoch,
    longestAckGap: agent.longestAckGap,
    acked: [],
    clientId: `run1-${dc}`,
    traces: [],
  };
}

/** The kill as the harness booked it: struck at the fixture's `fault` event, p5 gone at killAt. */
const mark: FaultMark = { atS: (1795670894442.6838 - run.loadStart) / 1000, action: 'kill', node: 'p5' };

function collected(over: Partial<CollectedRun> = {}): CollectedRun {
  const c = collectedWithoutRead(over);
  // The final read covered every write the agents acknowledged, unless the test says otherwise.
  const writes = [...c.dones.values()].reduce((n, d) => n + d.totals.acked, 0);
  return 'finalRead' in over
    ? c
    : { ...c, finalRead: { keys: writes, writes, readOn: ['p1', 'p2', 'p3', 'p4'], notRead: ['p5'] } };
}

function collectedWithoutRead(over: Partial<CollectedRun>): CollectedRun {
  return {
    startedAt: '2026-11-25T10:00:00.000Z',
    finishedAt: '2026-11-25T10:00:40.000Z',
    errors: [],
    initial: 'p5',
    killed: 'p5',
    killAt: run.killAt,
    causeScheduledAt: run.scheduledAt,
    cause: mark,
    links: new Map([
      [
        'tud',
        new Map([
          ['tud', 0],
          ['cern', 21.1],
        ]),
      ],
      [
        'cern',
        new Map([
          ['tud', Number.NaN],
          ['cern', 0],
        ]),
      ],
    ]),
    dones: new Map([
      ['tud', done('tud', 31.5, 720)],
      ['cern', done('cern', 12.25, 640)],
    ]),
    intervals: [],
    lostList: [],
    lostAgents: new Map(),
    // The members' events only: the harness's own `fault` line is not one of them.
    nodeEvents: run.events.filter((e) => e.node !== 'harness') as unknown as ClusterEvent[],
    loadStart: run.loadStart,
    faults: [mark],
    floor: unmeasuredFloor('the target traces its writes'),
    cpu: cpuReport([], 0),
    resources: emptyResourceReport(5_000),
    depositions: [{ at: run.killAt, mark, leader: 'p5' }],
    preloaded: null,
    ...over,
  };
}

function setting(over: Partial<ResultSetting> = {}): ResultSetting {
  return {
    topology,
    target: { name: 'pole', tracesWrites: true, hasOracles: true, electionRule: 'pole' },
    runtime: 'process',
    shaping: { kind: 'relay', reason: 'test' },
    seed: 1,
    thresholds: [],
    environment: {
      nodeVersion: 'v20.0.0',
      os: 'linux x64',
      kernel: 'test',
      cpus: 2,
      cpuModel: 'test',
      poleBenchVersion: '0.1.0',
      hostname: 'test',
    },
    ...over,
  };
}

const close = (actual: number | null | undefined, expected: number, what: string): void =>
  // Differences of wall-clock ms near 1.8e12: exact to about 0.25 µs.
  assert.ok(actual != null && Math.abs(actual - expected) < 1e-3, `${what}: ${actual}, expected ${expected}`);

describe('buildResult on a recorded paper-2dc run', () => {
  it('times the recovery from the kill: detection, election, serving, first commit, per data center', () => {
    const r = buildResult(setting(), collected());
    assert.equal(r.leaders.elected, 'p4');
    assert.equal(r.leaders.epoch, 2);
    assert.equal(r.leaders.killed, 'p5');
    assert.deepEqual(r.leaders.cause, { ...mark, leader: 'p5' });
    assert.deepEqual(Object.keys(r.leaders.scores), ['p1', 'p2', 'p3', 'p4']);
    // By hand from the fixture, each event's t − killAt 1795670894443.685.
    close(r.recovery.detectMs, 53.43, 'detect (p4 leader-lost)');
    close(r.recovery.electedMs, 288.281, 'elected (p4)');
    close(r.recovery.servingMs, 564.185, 'serving (p4)');
    close(r.recovery.firstCommitMs, 612.537, 'first commit (p4)');
    close(r.recovery.paperRecoveryMs, 612.537 - 288.281, 'first commit − elected');
    close(r.recovery.faultAtS, 10.0016352, 'fault at');
    close(r.recovery.scheduledAtS, 10, 'scheduled at');
    assert.deepEqual(r.recovery.perDc, {
      tud: { outageMs: 712.373, longestAckGapMs: 585.514 },
      cern: { outageMs: 626.289, longestAckGapMs: 569.8 },
    });
    assert.ok(r.recovery.explain, 'the recovery is explained');
    assert.deepEqual([r.elections.deposed, r.elections.completed], [1, 1]);
    assert.equal(r.elections.list[0]?.elected, 'p4');
  });

  it("gives each data center its agent's windows, and says why one without an agent has none", () => {
    const r = buildResult(setting(), collected());
    const tud = r.latency.tud!;
    assert.equal(tud.before?.mean, 31.5);
    assert.equal(tud.before?.sentMean, 31);
    assert.equal(tud.before?.sentSd, 3.1, 'every write’s spread, from the actual send');
    assert.equal(tud.warmup?.count, 2500);
    assert.equal(tud.during?.max, 720);
    assert.equal(tud.after?.mean, 32.5);
    assert.equal('degraded' in tud, false, 'no fault left the leader serving');
    assert.deepEqual([tud.attempted, tud.failed, tud.lost], [9298, 0, null]);
    assert.equal(r.latency.cern?.before?.p99, 14.25);
    assert.deepEqual(r.writes, {
      attempted: 18_596,
      acked: 18_596,
      failed: 0,
      lost: 0,
      unverified: 0,
      finalRead: { keys: 18_596, writes: 18_596, readOn: ['p1', 'p2', 'p3', 'p4'], notRead: ['p5'] },
    });
    // paper-2dc's jitter: 2 % of each direction's 10.375 ms, the round trip's the two as variances.
    const { jitterMs, ...tudCern } = r.links.tud!.cern!;
    assert.deepEqual(tudCern, { configuredRttMs: 20.75, measuredRttMs: 21.1 });
    assert.ok(Math.abs(jitterMs! - Math.hypot(0.2075, 0.2075)) < 1e-9, `jitter ${jitterMs}`);
    assert.deepEqual(r.links.cern?.tud, { configuredRttMs: 20.75, measuredRttMs: null, jitterMs });
    assert.deepEqual(r.timeline.faults, [mark]);
    assert.equal(r.timeline.startedAt, new Date(run.loadStart).toISOString());

    const lost = buildResult(
      setting(),
      collected({
        errors: ['data center cern: the load agent did not finish within 30000 ms'],
        dones: new Map([['tud', done('tud', 31.5, 720)]]),
        lostAgents: new Map([['cern', 'the load agent did not finish within 30000 ms']]),
      }),
    );
    assert.equal(lost.latency.cern?.lost, 'the load agent did not finish within 30000 ms');
    assert.deepEqual([lost.latency.cern?.before, lost.latency.cern?.attempted], [null, 0]);
    assert.equal(lost.verdict, 'run-failed');
    const silent = buildResult(setting(), collected({ dones: new Map([['tud', done('tud', 31.5, 720)]]) }));
    assert.equal(silent.latency.cern?.lost, 'the load agent reported nothing');
    const missing = buildResult(setting(), collected({ lostList: ['/pb/tud/7@p3'] }));
    assert.deepEqual([missing.writes.lost, missing.writes.lostList], [1, ['/pb/tud/7@p3']]);
    // A key short on two members is one key lost, not two.
    const twice = ['/pb/tud/7@p3', '/pb/tud/7@p4 (missing)', '/pb/cern/2@p3 (version 0 < 2 acked writes)'];
    const acked = shortOnTwoAcked();
    const finalRead = { keys: 1200, writes: acked, readOn: ['p3', 'p4'], notRead: ['p5'] };
    const shortOnTwo = buildResult(setting(), collected({ lostList: twice, finalRead }));
    assert.deepEqual([shortOnTwo.writes.lost, shortOnTwo.writes.finalRead], [2, finalRead]);
    assert.equal(shortOnTwo.writes.unverified, 0);
    // A final read that covered fewer writes than the agents acknowledged leaves the rest
    // unverified, and the run cannot pass; with no final read at all, every write is unverified.
    const short = buildResult(setting(), collected({ finalRead: { ...finalRead, writes: acked - 7 } }));
    assert.deepEqual([short.writes.unverified, short.verdict], [7, 'suspect']);
    const none = buildResult(setting(), collected({ finalRead: null }));
    assert.deepEqual([none.writes.unverified, none.verdict], [acked, 'suspect']);
  });

  /** What the default agents acknowledged, all together. */
  function shortOnTwoAcked(): number {
    return [...collected().dones.values()].reduce((n, d) => n + d.totals.acked, 0);
  }

  it('takes the floor from the traced writes where the target traces them, else from the calibration', () => {
    // No traced writes in this data: the traced floor says it measured none.
    const traced = buildResult(setting(), collected());
    assert.equal(traced.floor.source, 'none');
    assert.equal(traced.floor.writes, 0);
    assert.equal(traced.model.tud?.before !== null, true);

    const calibrated: NodeFloor = { method: 'test', leaderMs: 0.8, followerMs: 1.4, writes: 3000 };
    const zk = buildResult(
      setting({
        target: { name: 'zookeeper', tracesWrites: false, hasOracles: false, electionRule: 'zookeeper-fle' },
      }),
      collected({ floor: calibrated }),
    );
    assert.equal(zk.floor.source, 'calibrated');
    assert.equal(zk.floor.leaderMs, 0.8);
    assert.equal(zk.leaders.oracle, 'zookeeper-fle');
    assert.equal('loopStalls' in zk, false, 'only the POLE node watches its event loop');
    for (const dc of ['tud', 'cern']) {
      assert.equal(typeof zk.floor.perDc[dc]?.before, 'number', dc);
      assert.equal(typeof zk.floor.perDc[dc]?.after, 'number', dc);
    }
  });

  it('checks its own figures: a self-check over the built result, and a verdict', () => {
    const r = buildResult(setting(), collected());
    assert.ok(r.selfCheck.checked.length >= 5, r.selfCheck.checked.join('; '));
    assert.deepEqual(r.selfCheck.violations, []);
    assert.equal(r.verdict, 'passed');
    // What every target here promises, held without a threshold of the user's.
    assert.deepEqual(r.thresholds, [{ expr: 'writes.lost == 0', ok: true, actual: 0 }]);
    // An acknowledged write the final read did not find fails the run.
    const lost = buildResult(setting(), collected({ lostList: ['/pb/cern/741@p4'] }));
    assert.deepEqual(lost.thresholds, [{ expr: 'writes.lost == 0', ok: false, actual: 1 }]);
    assert.equal(lost.verdict, 'threshold-failed');

    // cern's longest write of the fault's window shorter than its outage: no write can have been.
    const off = buildResult(
      setting(),
      collected({
        dones: new Map([
          ['tud', done('tud', 31.5, 720)],
          ['cern', done('cern', 12.25, 100)],
        ]),
      }),
    );
    // Both of cern's figures that a write must have waited through are held against it.
    assert.equal(off.selfCheck.violations.length, 2, off.selfCheck.violations.join('; '));
    assert.match(
      off.selfCheck.violations[0]!,
      /^the longest write .*cern: longest 100\.00 ms, outage 626\.29 ms/,
    );
    assert.match(
      off.selfCheck.violations[1]!,
      /^the longest write ≥ the longest silence.*cern: longest write 100\.00 ms, silence 569\.80 ms/,
    );
  });

  it('follows the leaders that served after the deciding one through the after window, and not a member that only thought it won', () => {
    const base = buildResult(setting(), collected());
    const w = base.modelBasis!.after!;
    const mid = (w.fromS + w.toS) / 2;
    const at = (s: number): number => run.loadStart + s * 1000;
    const own = <T extends { node: string; ev: string }>(ev: string, node: string): T =>
      run.events.find(
        (e) => e.ev === ev && e.node === node && e.leader === (ev === 'serving' ? undefined : node),
      ) as unknown as T;
    const won = own<{ node: string; ev: string }>('elected', 'p4');
    const served = own<{ node: string; ev: string }>('serving', 'p4');
    const events = [
      ...(collected().nodeEvents as readonly ClusterEvent[]),
      // p3 thinks it won (cut off, say) but never serves: no take-over.
      { ...won, t: at(mid - 1), node: 'p3', leader: 'p3' },
      // p1 wins and serves: the window's second part is p1's.
      { ...won, t: at(mid - 0.1), node: 'p1', leader: 'p1' },
      { ...served, t: at(mid), node: 'p1' },
    ] as unknown as ClusterEvent[];
    const r = buildResult(setting(), collected({ nodeEvents: events }));
    const parts = r.modelBasis!.after!.segments.map((g) => [g.leader, g.fromS, g.toS]);
    assert.deepEqual(parts, [
      ['p4', w.fromS, Math.round(mid * 1000) / 1000],
      ['p1', Math.round(mid * 1000) / 1000, w.toS],
    ]);
    // The model moved with the leader: tud's after is no longer p4's alone.
    assert.notEqual(r.model.tud!.after, base.model.tud!.after);
  });
});
