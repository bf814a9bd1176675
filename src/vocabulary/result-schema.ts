// Owns result.json's schema (and the ids of the documents runs and suites write): the report reads
// results back with it, thresholds point into it, compare loads them. Imports only shared names.
//
// The interfaces a run builds are in report/result.ts, which checks at compile time that they and
// this schema describe the same documents, both ways.
import { z } from 'zod';
import { FAULT_ACTIONS, TARGET_NAMES } from './names.js';
import { ELECTION_END_REASONS } from './node-events.js';
import { RUNTIME_NAMES } from './runtimes.js';

export const RESULT_SCHEMA_ID = 'pole-bench/result@8';
/** A suite's summary (experiment/suite-summary.ts writes it, report/compare reads it). */
export const SUITE_SCHEMA_ID = 'pole-bench/suite@1';

export const VERDICTS = ['passed', 'threshold-failed', 'suspect', 'run-failed'] as const;
export const SHAPING_MODES = ['relay', 'netem', 'none'] as const;

/**
 * connection-closed: the link to the leader broke (the killed process's sockets closed);
 * timeout: nothing heard from the leader within the member's limit (a pause, a cut link);
 * other: the member left its leader for another reason (a rejection, a newer election);
 * unreported: the target does not say why (ZooKeeper logs an exception, not its cause).
 */
export const DETECTION_KINDS = ['connection-closed', 'timeout', 'other', 'unreported'] as const;

// Leaves in milliseconds, so that thresholds know where "1.5s" makes sense (thresholds.ts).
const msLeaves = new WeakSet<z.ZodType>();
function ms(): z.ZodNumber {
  const s = z.number();
  msLeaves.add(s);
  return s;
}

/** Whether a (unwrapped) leaf of runResultSchema holds milliseconds. */
export function isMsSchema(schema: z.ZodType): boolean {
  return msLeaves.has(schema);
}

const count = z.number().int().min(0);
const isoTime = z.iso.datetime({ offset: true });

const latencyStats = z.object({
  count,
  mean: ms().nullable(),
  sentMean: ms().nullable(),
  sentSd: ms().nullable().default(null),
  p50: ms().nullable(),
  p90: ms().nullable(),
  p99: ms().nullable(),
  p999: ms().nullable(),
  max: ms().nullable(),
});

const faultMark = z.object({
  atS: z.number(),
  action: z.enum(FAULT_ACTIONS),
  node: z.string(),
  // Added within result@8 (the faults leader election fears): absent from older files.
  ref: count.optional(),
  undoes: count.optional(),
  lateMs: ms().optional(),
});
const minMedianMaxMs = z.object({ median: ms(), min: ms(), max: ms() });
const resourceUse = z.object({ rssMiB: z.number().min(0), fds: count, threads: count });
/** One host's clock offsets (wall, monotonic) from the harness's wall clock (measure/clock-offset.ts). */
const clockEstimate = z.object({
  at: isoTime,
  offsetMs: ms(),
  monoOffsetMs: ms(),
  uncertaintyMs: ms().min(0),
  rttMs: ms().min(0),
  probes: count,
});

/** A prediction per window: before and after, and degraded where a run had that window. */
const modelWindows = z.object({
  before: ms().nullable(),
  degraded: ms().nullable().optional(),
  after: ms().nullable(),
});

export const runResultSchema = z
  .object({
    schema: z.literal(RESULT_SCHEMA_ID),
    verdict: z.enum(VERDICTS),
    errors: z.array(z.string()),
    target: z.enum(TARGET_NAMES),
    runtime: z.enum(RUNTIME_NAMES),
    shaping: z.object({
      mode: z.enum(SHAPING_MODES),
      reason: z.string(),
      jitter: z.string(),
      distribution: z.string(),
    }),
    topology: z.object({
      name: z.string(),
      file: z.string(),
      datacenters: z.array(z.object({ name: z.string(), nodes: z.array(z.string()) })),
    }),
    workload: z.object({
      rate: z.number().min(0),
      size: count,
      arrival: z.enum(['constant', 'poisson']),
      share: z.record(z.string(), z.number().min(0)),
      // Added within result@8 (2026-11-28): absent where every write is a new key.
      keys: count.optional(),
    }),
    scenario: z.object({
      durationMs: ms().min(0),
      warmupMs: ms().min(0),
      settleMs: ms().min(0),
      // Added within result@8 (the faults leader election fears): absent from older files.
      faults: z
        .array(
          z.object({
            atS: z.number(),
            action: z.string(),
            target: z.string(),
            ref: count.optional(),
            undoes: count.optional(),
            rttMs: z.number().optional(),
            drawn: z.boolean().optional(),
          }),
        )
        .optional(),
      nemesis: z
        .object({ mix: z.array(z.string()), everyS: z.number(), forS: z.number(), seed: count })
        .optional(),
    }),
    seed: z.number().int(),
    startedAt: isoTime,
    finishedAt: isoTime,
    leaders: z.object({
      initial: z.string().nullable(),
      killed: z.string().nullable(),
      /**
       * The fault the recovery is measured from: the first that took the serving leader out
       * (killed, paused, or cut off by a partition or isolation); null when none did.
       */
      cause: z
        .object({ atS: z.number(), action: z.enum(FAULT_ACTIONS), node: z.string(), leader: z.string() })
        .nullable(),
      elected: z.string().nullable(),
      // Added within result@8 (issue 27, --etcd-prefer): absent from older files.
      transferredTo: z.string().nullable().default(null),
      oracle: z.string(),
      // Added within result@8 (issue 26): absent from older files.
      electionWaitFor: z.enum(['all', 'live']).nullable().default(null),
      epoch: z.number().int().nullable(),
      scores: z.record(z.string(), z.array(z.number())),
      // Added within result@8: absent from older files.
      unheard: z.record(z.string(), z.array(z.number())).default({}),
      resignations: z.array(
        z.object({
          atS: z.number(),
          leader: z.string(),
          successor: z.string(),
          own: z.array(z.number()),
          successorScore: z.array(z.number()),
        }),
      ),
    }),
    recovery: z.object({
      explain: z
        .object({
          detection: z
            .object({
              node: z.string(),
              leader: z.string().nullable(),
              kind: z.enum(DETECTION_KINDS),
              reason: z.string(),
              atMs: ms(),
            })
            .nullable(),
          election: z.object({
            leader: z.string(),
            atMs: ms(),
            reason: z.enum(ELECTION_END_REASONS).nullable(),
            timeoutMs: ms().min(0).nullable(),
            rounds: z.number().int().min(1).nullable(),
            unheard: z.array(z.string()).nullable(),
            // Added within result@8 (the election's waitFor): absent from older files.
            down: z.array(z.string()).nullable().default(null),
            tookMs: ms().nullable(),
            // Added within result@8 (ZooKeeper's figure checked against its log): absent from older files.
            tookFromMs: ms().nullable().default(null),
            tookLoggedMs: ms().nullable().default(null),
            // Added within result@8 (where ZooKeeper's start can be at the earliest): absent from older files.
            tookLookingMs: ms().nullable().default(null),
          }),
          sync: z.object({
            followers: z
              .array(z.object({ node: z.string(), kind: z.string(), txns: count, atMs: ms() }))
              .nullable(),
            fetched: z.object({ from: z.string(), kind: z.string(), txns: count }).nullable(),
            discoveryMs: ms().nullable(),
            syncMs: ms().nullable(),
            servingAfterElectedMs: ms().nullable(),
          }),
        })
        .nullable()
        .optional(),
      detectMs: ms().nullable(),
      electedMs: ms().nullable(),
      servingMs: ms().nullable(),
      firstCommitMs: ms().nullable(),
      firstCommitFrom: z.enum(['leader', 'clients']).optional(),
      paperRecoveryMs: ms().nullable(),
      // Added within result@8 (issue 27, --etcd-prefer): absent from older files.
      transferMs: ms().nullable().default(null),
      faultAtS: z.number().nullable(),
      scheduledAtS: z.number().nullable(),
      perDc: z.record(z.string(), z.object({ outageMs: ms().nullable(), longestAckGapMs: ms().nullable() })),
    }),
    latency: z.record(
      z.string(),
      z.object({
        before: latencyStats.nullable(),
        after: latencyStats.nullable(),
        degraded: latencyStats.optional(),
        during: latencyStats.nullable(),
        warmup: latencyStats.nullable(),
        attempted: count,
        failed: count,
        lost: z.string().nullable(),
      }),
    ),
    model: z.record(z.string(), modelWindows),
    modelBasis: z
      .record(
        z.string(),
        z.object({
          leader: z.string().nullable(),
          fromS: z.number(),
          toS: z.number(),
          segments: z.array(
            z.object({
              fromS: z.number(),
              toS: z.number(),
              members: z.array(z.string()),
              state: z.string(),
              noModel: z.string().nullable(),
              leader: z.string().nullable().optional(),
            }),
          ),
        }),
      )
      .optional(),
    floor: z.object({
      source: z.enum(['traced', 'calibrated', 'none']),
      method: z.string(),
      leaderMs: ms().nullable(),
      followerMs: ms().nullable(),
      writes: count,
      perDc: z.record(z.string(), modelWindows),
      perDcMedian: z.record(z.string(), modelWindows).optional(),
      readings: z
        .array(
          z.object({
            leaderMs: ms().nullable(),
            leaderMedianMs: ms().nullable(),
            followerMs: ms().nullable(),
            followerMedianMs: ms().nullable(),
            writes: count,
            otherPctOfCore: z.number().min(0).nullable().optional(),
          }),
        )
        .optional(),
      kept: z.number().int().min(0).optional(),
    }),
    selfCheck: z.object({
      checked: z.array(z.string()),
      violations: z.array(z.string()),
      notEvaluated: z.array(z.object({ check: z.string(), why: z.string() })).optional(),
    }),
    cpu: z.object({
      sampled: z.boolean(),
      windowS: z.number().min(0),
      cores: count,
      machineBusyPct: z.number().min(0).nullable(),
      peakBusyPct: z.number().min(0).nullable(),
      ackedWrites: count,
      groups: z.record(
        z.string(),
        z.object({
          pctOfCore: z.number().min(0),
          usPerWrite: z.number().min(0).nullable(),
          processes: count,
        }),
      ),
      processes: z.array(
        z.object({
          group: z.string(),
          label: z.string(),
          pctOfCore: z.number().min(0),
          usPerWrite: z.number().min(0).nullable(),
          elsewhere: z.boolean().optional(),
        }),
      ),
      remote: z.string().nullable().optional(),
      unread: z.array(z.string()).optional(),
      otherPctOfCore: z.number().min(0).nullable(),
      shapingPctOfCore: z.number().min(0).nullable(),
      shapingUsPerWrite: z.number().min(0).nullable(),
      shapingChunksPerWrite: z.number().min(0).nullable().optional(),
      shapingWakesPerWrite: z.number().min(0).nullable().optional(),
      warning: z.string().nullable(),
      machine: z
        .object({
          busyPct: z.number().min(0),
          userPct: z.number().min(0),
          systemPct: z.number().min(0),
          irqPct: z.number().min(0),
          softirqPct: z.number().min(0),
          stealPct: z.number().min(0),
          iowaitPct: z.number().min(0),
        })
        .nullable()
        .optional(),
      shares: z
        .object({
          oursPct: z.number().min(0),
          kernelPct: z.number().min(0),
          stealPct: z.number().min(0),
          notOursPct: z.number().min(0),
          overlapPct: z.number().min(0),
        })
        .nullable()
        .optional(),
      perSecond: z
        .array(z.object({ t: z.number(), busyPct: z.number().min(0), stealPct: z.number().min(0) }))
        .optional(),
    }),
    anatomy: z.object({
      sampleEvery: count,
      traced: count,
      complete: count,
      perDc: z.record(
        z.string(),
        z.record(
          z.string(),
          z.object({
            writes: count,
            totalMs: z.number(),
            sdMs: z.number().optional(),
            beyondNetworkRangeMs: z.object({ least: z.number(), most: z.number() }).optional(),
            networkMs: z.number(),
            transportMs: z.number(),
            diskMs: z.number(),
            nodesMs: z.number(),
            clientMs: z.number(),
            parts: z.record(z.string(), z.number()),
            maxSumErrorMs: z.number().min(0),
          }),
        ),
      ),
    }),
    elections: z.object({
      deposed: count,
      completed: count,
      incomplete: count,
      electedMs: minMedianMaxMs.nullable(),
      servingMs: minMedianMaxMs.nullable(),
      unprovoked: z.array(z.object({ atS: z.number(), leader: z.string() })),
      list: z.array(
        z.object({
          atS: z.number(),
          cause: faultMark,
          leader: z.string(),
          elected: z.string().nullable(),
          electedMs: ms().nullable(),
          servingMs: ms().nullable(),
          failedRounds: count,
        }),
      ),
    }),
    resources: z.object({
      sampled: z.boolean(),
      everyS: z.number().min(0),
      processes: z.array(
        z.object({
          group: z.string(),
          label: z.string(),
          pid: count,
          fromS: z.number(),
          toS: z.number(),
          first: resourceUse,
          last: resourceUse,
          peak: resourceUse,
          rssGrowthMiB: z.number().nullable(),
          fdGrowth: z.number().nullable(),
          threadGrowth: z.number().nullable(),
          series: z.array(resourceUse.extend({ tS: z.number() })),
        }),
      ),
      maxRssGrowthMiB: z.number().nullable(),
      maxFdGrowth: z.number().nullable(),
      maxThreadGrowth: z.number().nullable(),
      judged: count,
      groups: z.record(
        z.string(),
        z.object({
          maxRssGrowthMiB: z.number().nullable(),
          maxFdGrowth: z.number().nullable(),
          maxThreadGrowth: z.number().nullable(),
          judged: count,
        }),
      ),
    }),
    preload: z.object({ bytes: count, writes: count, ms: ms().min(0) }).nullable(),
    snapshots: z.array(
      z.object({
        atS: z.number(),
        from: z.string(),
        to: z.string(),
        bytes: count,
        zxid: z.string(),
        transferMs: ms().nullable(),
        why: z.string().nullable(),
      }),
    ),
    loopStalls: z
      .array(
        z.object({
          node: z.string(),
          count,
          longestMs: ms().min(0),
          longestAtS: z.number(),
          stalls: z.array(z.object({ atS: z.number(), ms: ms().min(0) })).optional(),
        }),
      )
      .optional(),
    loopStallMs: ms().min(0).optional(),
    links: z.record(
      z.string(),
      z.record(
        z.string(),
        z.object({
          configuredRttMs: ms().min(0),
          measuredRttMs: ms().nullable(),
          jitterMs: ms().min(0).optional(),
        }),
      ),
    ),
    linkReadings: z
      .object({
        readings: z.array(
          z.object({
            rtts: z.record(z.string(), ms().min(0)),
            undelayedMs: ms().min(0),
            latenessMs: z.record(z.string(), ms().min(0)).optional(),
            meanRtts: z.record(z.string(), ms().min(0)).optional(),
            undelayedMeanMs: ms().min(0).optional(),
          }),
        ),
        kept: z.number().int(),
      })
      .nullable()
      .optional(),
    clocks: z
      .object({
        method: z.string(),
        hosts: z.record(
          z.string(),
          z.object({
            before: clockEstimate,
            after: clockEstimate.nullable(),
            driftPpm: z.number().nullable(),
            driftUncertaintyPpm: z.number().min(0).nullable(),
          }),
        ),
      })
      .optional(),
    writes: z.object({
      attempted: count,
      acked: count,
      failed: count,
      // Added within result@8 (issue 27): absent from older files.
      failedCodes: z.record(z.string(), count).optional(),
      lost: count,
      unverified: count.optional(),
      lostList: z.array(z.string()).optional(),
      // Added within result@8 (2026-11-28): absent from older files.
      finalRead: z
        .object({
          keys: count,
          writes: count.optional(),
          readOn: z.array(z.string()),
          notRead: z.array(z.string()),
        })
        .optional(),
    }),
    load: z.object({
      targetRate: z.number().min(0),
      achievedRate: z.number().min(0).nullable(),
      latenessP99Ms: ms().nullable(),
    }),
    timeline: z.object({
      startedAt: isoTime.nullable(),
      seconds: z.array(
        z.object({
          t: z.number(),
          writesPerSec: z.number().min(0),
          p99Ms: ms().nullable(),
          errors: count,
          lengthS: z.number().min(0).optional(),
        }),
      ),
      faults: z.array(faultMark),
      afterLoad: z.object({ acked: count, errors: count, lengthS: z.number().min(0) }).optional(),
    }),
    thresholds: z.array(
      z.object({
        expr: z.string(),
        ok: z.boolean(),
        actual: z.number().nullable(),
        message: z.string().optional(),
      }),
    ),
    // Added within result@8 (issue 46, runs with reads): absent from runs without reads.
    safety: z
      .object({
        history: z.string(),
        broken: count,
        undecided: count,
        writes: z.object({ sent: count, ok: count }).optional(),
        models: z.array(
          z.object({
            model: z.enum(['linearizable', 'session']),
            readMode: z.string(),
            promised: z.boolean(),
            ops: count,
            keys: count,
            ok: count,
            violated: count,
            unknown: count,
            seconds: z.number().min(0),
            counterexample: z
              .object({
                key: z.string(),
                ops: z.array(
                  z.object({
                    process: z.string(),
                    f: z.enum(['read', 'write', 'cas']),
                    value: z.string().nullable(),
                    invokedMs: z.number(),
                    completedMs: z.number().nullable(),
                  }),
                ),
              })
              .nullable(),
          }),
        ),
      })
      .optional(),
    environment: z.object({
      nodeVersion: z.string(),
      os: z.string(),
      kernel: z.string(),
      cpus: count,
      cpuModel: z.string(),
      poleBenchVersion: z.string(),
      hostname: z.string(),
      nodeTunables: z.string().optional(),
      nodeTunablesSeen: z.record(z.string(), z.string().nullable()).optional(),
      transparentHugePages: z.string().optional(),
    }),
  })
  .superRefine((r, ctx) => {
    // A "passed" verdict with a failed threshold would make exit code and report disagree.
    if (r.verdict === 'passed' && r.thresholds.some((t) => !t.ok)) {
      ctx.addIssue({ code: 'custom', path: ['verdict'], message: '"passed" but a threshold failed' });
    }
    // Nor may a run pass whose own figures disagree, or whose acknowledged writes went unchecked.
    if (r.verdict === 'passed' && r.selfCheck.violations.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['verdict'], message: '"passed" but a cross-check was violated' });
    }
    if (r.verdict === 'passed' && (r.writes.unverified ?? 0) > 0) {
      ctx.addIssue({ code: 'custom', path: ['verdict'], message: '"passed" with unverified writes' });
    }
  });
