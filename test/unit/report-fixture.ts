// A realistic result of a short paper-2dc run (tud = {p1, p2}, cern = {p3, p4, p5}; p5 leads, is
// killed at 15 s, p4 takes over), for the report tests. Every call returns a fresh copy to mutate.
import type { RunResult, TimelinePoint } from '../../src/report/result.js';

type DeepMutable<T> = T extends readonly (infer E)[]
  ? DeepMutable<E>[]
  : T extends object
    ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
    : T;

export type MutableResult = DeepMutable<RunResult>;

/** Per second: ~1000 writes/s, a hole at the kill (second 15-16), a burst of retries after. */
function seconds(): TimelinePoint[] {
  const out: TimelinePoint[] = [];
  for (let t = 0; t < 30; t++) {
    if (t === 15) out.push({ t, writesPerSec: 412, p99Ms: 48.25, errors: 3 });
    else if (t === 16) out.push({ t, writesPerSec: 0, p99Ms: null, errors: 57 });
    else if (t === 17) out.push({ t, writesPerSec: 1588, p99Ms: 912.4, errors: 0 });
    else out.push({ t, writesPerSec: 1000 + (t % 3) - 1, p99Ms: 31.5 + (t % 4) * 0.25, errors: 0 });
  }
  return out;
}

export function result2dc(): MutableResult {
  return {
    schema: 'pole-bench/result@8',
    verdict: 'threshold-failed',
    errors: [],
    target: 'pole',
    runtime: 'process',
    shaping: {
      mode: 'relay',
      reason: 'auto: the kernel has no netem, so the userspace relay shaped the links',
      jitter: '2%',
      distribution: 'pareto',
    },
    topology: {
      name: 'paper-2dc',
      file: 'topologies/paper-2dc.yaml',
      datacenters: [
        { name: 'tud', nodes: ['p1', 'p2'] },
        { name: 'cern', nodes: ['p3', 'p4', 'p5'] },
      ],
    },
    workload: { rate: 1000, size: 1024, arrival: 'constant', share: { tud: 0.5, cern: 0.5 } },
    scenario: { durationMs: 30_000, warmupMs: 5000, settleMs: 5000 },
    seed: 20_111_213,
    startedAt: '2024-11-21T06:20:00.000Z',
    finishedAt: '2024-11-21T06:20:41.250Z',
    leaders: {
      initial: 'p5',
      killed: 'p5',
      cause: { atS: 15.004, action: 'kill', node: 'p5', leader: 'p5' },
      resignations: [],
      elected: 'p4',
      transferredTo: null,
      oracle: 'history',
      electionWaitFor: 'live',
      epoch: 2,
      scores: { p1: [1, 14_998], p2: [1, 14_998], p3: [1, 15_003], p4: [1, 15_003] },
      unheard: {},
    },
    recovery: {
      detectMs: 412.5,
      electedMs: 655.75,
      servingMs: 702.125,
      firstCommitMs: 731.4,
      firstCommitFrom: 'leader',
      transferMs: null,
      paperRecoveryMs: 75.65,
      faultAtS: 15.004,
      scheduledAtS: 15,
      perDc: {
        tud: { outageMs: 760.2, longestAckGapMs: 758.1 },
        cern: { outageMs: 741.9, longestAckGapMs: 739.6 },
      },
    },
    latency: {
      tud: {
        warmup: {
          count: 5001,
          mean: 33.1,
          sentMean: 32.8,
          sentSd: null,
          p50: 32.9,
          p90: 34.1,
          p99: 36.2,
          p999: 44.1,
          max: 46.3,
        },
        during: {
          count: 987,
          mean: 180.4,
          sentMean: 179.9,
          sentSd: null,
          p50: 31.5,
          p90: 700.2,
          p99: 771.4,
          p999: 775.1,
          max: 776.9,
        },
        attempted: 15001,
        failed: 30,
        lost: null,
        before: {
          count: 4987,
          mean: 31.42,
          sentMean: 31.12,
          sentSd: null,
          p50: 31.1,
          p90: 32.6,
          p99: 34.88,
          p999: 41.2,
          max: 43.01,
        },
        after: {
          count: 3996,
          mean: 21.07,
          sentMean: 20.77,
          sentSd: null,
          p50: 20.9,
          p90: 21.8,
          p99: 23.35,
          p999: 28.9,
          max: 30.4,
        },
      },
      cern: {
        warmup: {
          count: 4999,
          mean: 12.1,
          sentMean: 11.8,
          sentSd: null,
          p50: 11.9,
          p90: 12.8,
          p99: 14.2,
          p999: 19.1,
          max: 21.3,
        },
        during: {
          count: 955,
          mean: 170.2,
          sentMean: 169.8,
          sentSd: null,
          p50: 11.5,
          p90: 690.1,
          p99: 750.3,
          p999: 752.8,
          max: 755.6,
        },
        attempted: 14999,
        failed: 30,
        lost: null,
        before: {
          count: 5012,
          mean: 10.66,
          sentMean: 10.36,
          sentSd: null,
          p50: 10.4,
          p90: 11.2,
          p99: 12.75,
          p999: 17.3,
          max: 19.95,
        },
        after: {
          count: 4003,
          mean: 20.98,
          sentMean: 20.68,
          sentSd: null,
          p50: 20.7,
          p90: 21.6,
          p99: 23.1,
          p999: 27.45,
          max: 29.6,
        },
      },
    },
    model: {
      tud: { before: 31.125, after: 20.75 },
      cern: { before: 10.375, after: 20.75 },
    },
    floor: {
      source: 'calibrated',
      method: 'calibrated before the load',
      leaderMs: 0.9,
      followerMs: 1.2,
      writes: 2000,
      perDc: {
        tud: { before: 1.2, after: 1.05 },
        cern: { before: 1.1, after: 1.2 },
      },
      readings: [
        { leaderMs: 0.9, leaderMedianMs: 0.8, followerMs: 1.2, followerMedianMs: 1.1, writes: 2000 },
      ],
      kept: 0,
    },
    selfCheck: {
      checked: ['every window’s count + failed = attempted, per data center and in all'],
      violations: [],
    },
    cpu: {
      sampled: true,
      windowS: 30,
      cores: 2,
      machineBusyPct: 88.4,
      peakBusyPct: 96.1,
      ackedWrites: 29_940,
      groups: {
        harness: { pctOfCore: 41.2, usPerWrite: 412.8, processes: 1 },
        nodes: { pctOfCore: 104.5, usPerWrite: 1047.1, processes: 6 },
        agents: { pctOfCore: 27.3, usPerWrite: 273.5, processes: 2 },
      },
      processes: [
        { group: 'harness', label: 'harness', pctOfCore: 41.2, usPerWrite: 412.8 },
        { group: 'nodes', label: 'p1', pctOfCore: 15.1, usPerWrite: 151.3 },
        { group: 'nodes', label: 'p5', pctOfCore: 34.2, usPerWrite: 342.7 },
        { group: 'agents', label: 'tud', pctOfCore: 13.6, usPerWrite: 136.3 },
      ],
      otherPctOfCore: 3,
      shapingPctOfCore: 30.6,
      shapingUsPerWrite: 306.6,
      warning:
        'the machine was 88 % busy during the load (all 2 cores; busiest second 96 %), above the 50 % under which queueing for CPU stays small: every latency figure includes some of it',
      // user + system + irq + softirq + steal = busy; ours (173 % of one core) + kernel + steal + not ours = busy.
      machine: {
        busyPct: 88.4,
        userPct: 72,
        systemPct: 16,
        irqPct: 0,
        softirqPct: 0.1,
        stealPct: 0.3,
        iowaitPct: 0.4,
      },
      shares: { oursPct: 86.5, kernelPct: 0.1, stealPct: 0.3, notOursPct: 1.5, overlapPct: 0 },
      perSecond: Array.from({ length: 30 }, (_, t) => ({
        t,
        busyPct: t === 15 ? 96.1 : 88 + (t % 2),
        stealPct: t === 20 ? 3.5 : 0.2,
      })),
    },
    elections: {
      deposed: 1,
      completed: 1,
      incomplete: 0,
      electedMs: { median: 212.4, min: 212.4, max: 212.4 },
      servingMs: { median: 287.9, min: 287.9, max: 287.9 },
      unprovoked: [],
      list: [
        {
          atS: 15.004,
          cause: { atS: 15.004, action: 'kill', node: 'p5' },
          leader: 'p5',
          elected: 'p4',
          electedMs: 212.4,
          servingMs: 287.9,
          failedRounds: 0,
        },
      ],
    },
    resources: {
      sampled: true,
      everyS: 5,
      processes: [
        {
          group: 'harness',
          label: 'harness',
          pid: 4100,
          fromS: 0,
          toS: 30,
          first: { rssMiB: 96.2, fds: 41, threads: 13 },
          last: { rssMiB: 101.5, fds: 41, threads: 13 },
          peak: { rssMiB: 103.1, fds: 42, threads: 13 },
          rssGrowthMiB: null,
          fdGrowth: null,
          threadGrowth: null,
          series: [
            { tS: 0, rssMiB: 96.2, fds: 41, threads: 13 },
            { tS: 30, rssMiB: 101.5, fds: 41, threads: 13 },
          ],
        },
      ],
      maxRssGrowthMiB: null,
      maxFdGrowth: null,
      maxThreadGrowth: null,
      judged: 0,
      groups: { harness: { maxRssGrowthMiB: null, maxFdGrowth: null, maxThreadGrowth: null, judged: 0 } },
    },
    anatomy: {
      sampleEvery: 64,
      traced: 468,
      complete: 455,
      perDc: {
        tud: {
          before: {
            writes: 115,
            totalMs: 27.5,
            networkMs: 20.75,
            transportMs: 1.25,
            diskMs: 2.5,
            nodesMs: 2.4,
            clientMs: 0.6,
            parts: { 'forward hop': 11.2, 'COMMIT hop': 10.8, 'leader: log write + fsync': 1.3 },
            maxSumErrorMs: 0,
          },
        },
      },
    },
    preload: null,
    snapshots: [],
    loopStalls: [
      {
        node: 'p1',
        count: 1,
        longestMs: 31,
        longestAtS: 5.5,
        stalls: [{ atS: 5.5, ms: 31 }],
      },
      {
        node: 'p4',
        count: 2,
        longestMs: 45,
        longestAtS: 15.3,
        stalls: [
          { atS: 15.3, ms: 45 },
          { atS: 17.2, ms: 23 },
        ],
      },
    ],
    loopStallMs: 20,
    links: {
      tud: { cern: { configuredRttMs: 20.75, measuredRttMs: 20.93, jitterMs: 0.29 } },
      cern: { tud: { configuredRttMs: 20.75, measuredRttMs: 20.88, jitterMs: 0.29 } },
    },
    linkReadings: {
      readings: [{ rtts: { 'tud>cern': 20.93, 'cern>tud': 20.88 }, undelayedMs: 0.31 }],
      kept: 0,
    },
    writes: {
      attempted: 30_000,
      acked: 29_940,
      failed: 60,
      lost: 0,
      unverified: 0,
      finalRead: { keys: 29_940, writes: 29_940, readOn: ['p1', 'p2', 'p3', 'p4'], notRead: ['p5'] },
    },
    load: { targetRate: 1000, achievedRate: 999.7, latenessP99Ms: 0.42 },
    timeline: {
      startedAt: '2024-11-21T06:20:05.000Z',
      seconds: seconds(),
      faults: [{ atS: 15.004, action: 'kill', node: 'p5' }],
      afterLoad: { acked: 31, errors: 0, lengthS: 0.104 },
    },
    thresholds: [
      { expr: 'recovery.servingMs < 1s', ok: true, actual: 702.125 },
      { expr: 'latency.tud.after.p99 <= 20', ok: false, actual: 23.35 },
      { expr: 'writes.lost == 0', ok: true, actual: 0 },
    ],
    environment: {
      nodeVersion: 'v20.20.0',
      os: 'linux x64',
      kernel: '6.8.0-45-generic',
      cpus: 8,
      cpuModel: 'AMD EPYC 7B13',
      poleBenchVersion: '0.1.0',
      hostname: 'bench-1',
    },
  };
}
