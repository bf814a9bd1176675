// src/report/: a run's outputs: result.json's shape (this file), report.md, charts/, the cross-checks,
// thresholds, latency.hlog, and compare/ (a run or suite against a baseline).
//
// result.json: everything a run found, as one versioned document ("pole-bench/result@3"). The
// report, the thresholds and `--json` all read this one shape. The interfaces are the contract; the
// zod schema below reads a file back (e.g. to re-render a report) and must agree with them, which
// the compile-time check at the end enforces.
//
// Conventions: durations and latencies are milliseconds; wall-clock times are ISO 8601 strings;
// anything a run may fail to observe (no fault, no new leader, no writes in a window) is null,
// never 0, so that a threshold on it fails instead of passing by accident.
import { TARGET_NAMES, type TargetName } from '../targets/target.js';
import { z } from 'zod';
import type { CpuReport } from '../measure/cpu-sampler.js';
import type { LatencyAnatomy } from './latency-anatomy.js';
import type { ElectionsInfo } from './elections.js';
import type { ResourceReport } from '../measure/resource-sampler.js';
import { FAULT_ACTIONS, type FaultAction } from '../topology/topology-schema.js';
import { loadValidatedFile } from '../util/load-validated.js';
import type { LoopStalls, SnapshotTransfer } from './snapshots.js';
import { DETECTION_KINDS, ELECTION_END_REASONS, type RecoveryExplain } from './recovery-explain.js';

export const RESULT_SCHEMA_ID = 'pole-bench/result@8';

/** passed: every threshold held; threshold-failed: the run worked but a threshold did not hold; run-failed: the run itself broke. */
export type Verdict = 'passed' | 'threshold-failed' | 'run-failed';
export const VERDICTS = ['passed', 'threshold-failed', 'run-failed'] as const;

export const RUNTIMES = ['process', 'docker'] as const;
export { TARGET_NAMES, type TargetName };
export type RuntimeName = (typeof RUNTIMES)[number];

export const SHAPING_MODES = ['relay', 'netem', 'none'] as const;
export type ShapingMode = (typeof SHAPING_MODES)[number];

export interface ShapingInfo {
  /** What actually ran. */
  readonly mode: ShapingMode;
  /** Why this mode, e.g. "auto: the kernel has no netem, fell back to the relay". */
  readonly reason: string;
  /** As configured: "2%" or a duration like "0.5ms". */
  readonly jitter: string;
  readonly distribution: string;
}

export interface TopologyInfo {
  readonly name: string;
  /** The topology file as given. */
  readonly file: string;
  /** In the file's order, with their nodes. */
  readonly datacenters: readonly { readonly name: string; readonly nodes: readonly string[] }[];
}

export interface WorkloadInfo {
  /** Writes per second, all data centers together. */
  readonly rate: number;
  /** Bytes per write. */
  readonly size: number;
  readonly arrival: 'constant' | 'poisson';
  /** Fraction of the writes each data center sends (sums to 1). */
  readonly share: Readonly<Record<string, number>>;
}

export interface ScenarioInfo {
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly settleMs: number;
}

export interface LeadersInfo {
  /** Leading when the load started. */
  readonly initial: string | null;
  /** The serving leader a kill took down (null when no leader was killed). */
  readonly killed: string | null;
  /** The fault the recovery is measured from, and the leader it took out (null: none did). */
  readonly cause: (FaultMark & { readonly leader: string }) | null;
  /** The leader of the deciding election after the fault. */
  readonly elected: string | null;
  /** The oracle spec, e.g. "worst-case" or "latency:10ms,history". */
  readonly oracle: string;
  /** Epoch of the deciding election. */
  readonly epoch: number | null;
  /** The score of every proposal seen in the deciding election, by proposing node. */
  readonly scores: Readonly<Record<string, readonly number[]>>;
  /** Every resignation in the run: the leader, the follower it resigned for, and both scores. */
  readonly resignations: readonly Resignation[];
}

export interface Resignation {
  /** Seconds from the load start. */
  readonly atS: number;
  readonly leader: string;
  readonly successor: string;
  readonly own: readonly number[];
  readonly successorScore: readonly number[];
}

/**
 * All relative to one time zero, the instant the fault that took the leader out was carried out
 * (`faultAtS`), in ms; null when not observed.
 */
export interface RecoveryInfo {
  /** The fault's time zero: when it was carried out, and when it was scheduled (s from the load start). */
  readonly faultAtS: number | null;
  readonly scheduledAtS: number | null;
  /**
   * What bounded each phase, from the members' events (report/recovery-explain.ts); null when
   * there was no recovery to explain (added within result@7: absent from files written before).
   */
  readonly explain?: RecoveryExplain | null;
  /** First follower notices the leader is gone. */
  readonly detectMs: number | null;
  /** The new leader knows it leads. */
  readonly electedMs: number | null;
  /** A quorum acked NEWLEADER: the new leader serves. */
  readonly servingMs: number | null;
  /** First write committed in the new epoch. */
  readonly firstCommitMs: number | null;
  /** firstCommit − elected, the paper's definition of recovery time. */
  readonly paperRecoveryMs: number | null;
  /** Per data center, what its clients saw (report/client-recovery.ts). */
  readonly perDc: Readonly<Record<string, ClientRecovery>>;
}

export interface ClientRecovery {
  /** The fault to this data center's first acknowledgement of a write committed in the new epoch. */
  readonly outageMs: number | null;
  /** The longest its clients went without any acknowledgement, the silence that ended in the fault's window. */
  readonly longestAckGapMs: number | null;
}

/** One window's write latency, ms (corrected for coordinated omission). Stats are null when count is 0. */
export interface LatencyStats {
  readonly count: number;
  readonly mean: number | null;
  /** The mean from the actual send time (not corrected): what the traced writes' anatomy measures. */
  readonly sentMean: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly p999: number | null;
  readonly max: number | null;
}

/**
 * before: warmup to the first fault; after: elected + settle to the end. Null when the window did
 * not exist. A write in flight when a fault struck counts in that fault's window, not in "before".
 */
export interface LatencyWindows {
  readonly before: LatencyStats | null;
  readonly after: LatencyStats | null;
  /**
   * From the first fault that left the leader serving (a follower killed, a link cut or changed)
   * to the one that took it out, or the end (added within result@7: absent from older files, and
   * from runs with no such fault).
   */
  readonly degraded?: LatencyStats;
  /** From the fault that took the leader out to the start of "after": the outage and the settle time. */
  readonly during: LatencyStats | null;
  /** Writes intended during the warm-up, before the first window (measured, not modelled). */
  readonly warmup: LatencyStats | null;
  /** Every write this data center's agent sent, and those that failed (in no window's count). */
  readonly attempted: number;
  readonly failed: number;
  /**
   * Why this data center has no data: its load agent's was lost (it exited without `done`, or did
   * not finish in time), so its latencies, acknowledged writes and traces are missing from the
   * result while the other data centers' are kept; the run failed. Null when the agent reported.
   */
  readonly lost: string | null;
}

/**
 * The paper's model, ms (forwarding RTT to the leader + the leader's θc, from the topology, nothing
 * else): under the initial leader (before) and the elected one (after).
 */
export interface ModelWindows {
  readonly before: number | null;
  readonly after: number | null;
}

export interface FloorInfo {
  /**
   * traced: each window's own traced writes, all but their network part (the latency anatomy);
   * calibrated: writes after the load with the delays taken out (targets that trace no writes).
   */
  readonly source: 'traced' | 'calibrated' | 'none';
  readonly method: string;
  readonly leaderMs: number | null;
  readonly followerMs: number | null;
  readonly writes: number;
  /** perDc[dc]: the floor under the leader of each window. */
  readonly perDc: Readonly<Record<string, ModelWindows>>;
}

export interface SelfCheck {
  /** The invariants that were checked, each in a few words. */
  readonly checked: readonly string[];
  /** Those that did not hold, with the figures. */
  readonly violations: readonly string[];
}

export interface LinkRtt {
  readonly configuredRttMs: number;
  /** Measured through the shaping before the load started; null when not measured. */
  readonly measuredRttMs: number | null;
}

export interface WritesInfo {
  readonly attempted: number;
  readonly acked: number;
  /** Errors and timeouts, each write counted once however often it was retried. */
  readonly failed: number;
  /** Acknowledged but missing from the final state. */
  readonly lost: number;
  /** The first (up to 100) lost writes, e.g. their paths. */
  readonly lostList?: readonly string[];
}

export interface LoadInfo {
  /** Writes per second asked for, all data centers together. */
  readonly targetRate: number;
  /** Writes per second actually sent; null when the load never ran. */
  readonly achievedRate: number | null;
  /** p99 of how late sends left against their schedule, ms. */
  readonly latenessP99Ms: number | null;
}

/** One second of the load. */
export interface TimelinePoint {
  /** Seconds from the load start (the second [t, t+1)). */
  readonly t: number;
  /**
   * Writes acknowledged in this second, all data centers together, per second of the time it
   * really covered (within result@7 before lengthS: the count, a short last second a dip).
   */
  readonly writesPerSec: number;
  /** Null when nothing was acknowledged in this second. */
  readonly p99Ms: number | null;
  /** Failed or timed-out writes in this second. */
  readonly errors: number;
  /** Set when the second was cut short (under 0.9 s, the load's end): the seconds it covered. */
  readonly lengthS?: number;
}

/** What the agents acknowledged after the load, waiting for the writes in flight at its end. */
export interface AfterLoad {
  readonly acked: number;
  readonly errors: number;
  /** How long they waited, s. */
  readonly lengthS: number;
}

export interface FaultMark {
  /** Seconds from the load start. */
  readonly atS: number;
  readonly action: FaultAction;
  /** The node it hit ("leader" resolved to its name). */
  readonly node: string;
}

export interface Timeline {
  /** Wall time of the load start (t = 0); null when the load never started. */
  readonly startedAt: string | null;
  readonly seconds: readonly TimelinePoint[];
  readonly faults: readonly FaultMark[];
  /** Left out of `seconds` (added within result@7: absent from older files and when nothing was). */
  readonly afterLoad?: AfterLoad;
}

export interface ThresholdResult {
  /** As the user wrote it. */
  readonly expr: string;
  readonly ok: boolean;
  /** The value found in the result; null when it was missing or not a number. */
  readonly actual: number | null;
  /** Why it failed without a value (missing, not observed, not a number). */
  readonly message?: string;
}

export interface PreloadInfo {
  /** Payload bytes written. */
  readonly bytes: number;
  readonly writes: number;
  readonly ms: number;
}

export interface Environment {
  readonly nodeVersion: string;
  /** Platform and architecture, e.g. "linux x64". */
  readonly os: string;
  readonly kernel: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly poleBenchVersion: string;
  readonly hostname: string;
}

export interface RunResult {
  readonly schema: typeof RESULT_SCHEMA_ID;
  readonly verdict: Verdict;
  /** What went wrong in the run (empty for a run that worked, whatever the thresholds say). */
  readonly errors: readonly string[];
  /** The system under test: the POLE node, or stock ZooKeeper (result@4). */
  readonly target: TargetName;
  readonly runtime: RuntimeName;
  readonly shaping: ShapingInfo;
  readonly topology: TopologyInfo;
  readonly workload: WorkloadInfo;
  readonly scenario: ScenarioInfo;
  readonly seed: number;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly leaders: LeadersInfo;
  readonly recovery: RecoveryInfo;
  /** latency[dc]. */
  readonly latency: Readonly<Record<string, LatencyWindows>>;
  /** model[dc]: the paper's model alone. */
  readonly model: Readonly<Record<string, ModelWindows>>;
  /**
   * The node floor: what a write costs with no delay between data centers (measure/node-floor.ts),
   * how it was measured, and per data center and window the mix its clients see. The prediction a
   * measurement is held against is model + floor; the two are kept apart.
   */
  readonly floor: FloorInfo;
  /**
   * The self-check: how busy the machine was during the load and who made it so (measure/
   * cpu-sampler.ts); `warning` is set when the latency figures include queueing for CPU.
   */
  readonly cpu: CpuReport;
  /**
   * The run's figures checked against each other (report/self-check.ts): what was checked, and
   * every violation; a result with violations is written whole and its figures are suspect.
   */
  readonly selfCheck: SelfCheck;
  /** Where the milliseconds of a sample of writes went (report/latency-anatomy.ts). */
  readonly anatomy: LatencyAnatomy;
  /**
   * Every election of the run (result@6): per fault that took the serving leader out, who served
   * next and how fast, and the elections no fault explains (report/elections.ts).
   */
  readonly elections: ElectionsInfo;
  /** Memory, open files and threads of every process over the load, and their growth (result@6). */
  readonly resources: ResourceReport;
  /** The state written before the load (`scenario.preload`); null when none was (result@7). */
  readonly preload: PreloadInfo | null;
  /** Every snapshot a member sent another, with its transfer time (result@7). */
  readonly snapshots: readonly SnapshotTransfer[];
  /**
   * Members whose event loop stalled for loopStallMs or more (added within result@7: absent from
   * files written before, which is read as "not recorded", not as "none").
   */
  readonly loopStalls?: readonly LoopStalls[];
  /** The shortest stall the members reported (added within result@7: absent means 100 ms). */
  readonly loopStallMs?: number;
  /** links[a][b]: the round trip between data centers a and b. */
  readonly links: Readonly<Record<string, Readonly<Record<string, LinkRtt>>>>;
  readonly writes: WritesInfo;
  readonly load: LoadInfo;
  readonly timeline: Timeline;
  readonly thresholds: readonly ThresholdResult[];
  readonly environment: Environment;
}

// ------------------------------------------------------------------------------------------ schema

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
  p50: ms().nullable(),
  p90: ms().nullable(),
  p99: ms().nullable(),
  p999: ms().nullable(),
  max: ms().nullable(),
});

const faultMark = z.object({ atS: z.number(), action: z.enum(FAULT_ACTIONS), node: z.string() });
const minMedianMaxMs = z.object({ median: ms(), min: ms(), max: ms() });
const resourceUse = z.object({ rssMiB: z.number().min(0), fds: count, threads: count });

export const runResultSchema = z
  .object({
    schema: z.literal(RESULT_SCHEMA_ID),
    verdict: z.enum(VERDICTS),
    errors: z.array(z.string()),
    target: z.enum(TARGET_NAMES),
    runtime: z.enum(RUNTIMES),
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
    }),
    scenario: z.object({ durationMs: ms().min(0), warmupMs: ms().min(0), settleMs: ms().min(0) }),
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
      oracle: z.string(),
      epoch: z.number().int().nullable(),
      scores: z.record(z.string(), z.array(z.number())),
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
            tookMs: ms().nullable(),
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
      paperRecoveryMs: ms().nullable(),
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
    model: z.record(z.string(), z.object({ before: ms().nullable(), after: ms().nullable() })),
    floor: z.object({
      source: z.enum(['traced', 'calibrated', 'none']),
      method: z.string(),
      leaderMs: ms().nullable(),
      followerMs: ms().nullable(),
      writes: count,
      perDc: z.record(z.string(), z.object({ before: ms().nullable(), after: ms().nullable() })),
    }),
    selfCheck: z.object({ checked: z.array(z.string()), violations: z.array(z.string()) }),
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
        }),
      ),
      otherPctOfCore: z.number().min(0).nullable(),
      shapingPctOfCore: z.number().min(0).nullable(),
      shapingUsPerWrite: z.number().min(0).nullable(),
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
      z.record(z.string(), z.object({ configuredRttMs: ms().min(0), measuredRttMs: ms().nullable() })),
    ),
    writes: z.object({
      attempted: count,
      acked: count,
      failed: count,
      lost: count,
      lostList: z.array(z.string()).optional(),
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
    environment: z.object({
      nodeVersion: z.string(),
      os: z.string(),
      kernel: z.string(),
      cpus: count,
      cpuModel: z.string(),
      poleBenchVersion: z.string(),
      hostname: z.string(),
    }),
  })
  .superRefine((r, ctx) => {
    // A "passed" verdict with a failed threshold would make exit code and report disagree.
    if (r.verdict === 'passed' && r.thresholds.some((t) => !t.ok)) {
      ctx.addIssue({ code: 'custom', path: ['verdict'], message: '"passed" but a threshold failed' });
    }
  });

/** Validate parsed JSON as a result; throws zod's error on a mismatch. */
export function parseResult(data: unknown): RunResult {
  return runResultSchema.parse(data);
}

/** Read result.json back; InputError (exit code 2) with file, line and field on anything wrong. */
export function readResultFile(file: string): RunResult {
  return loadValidatedFile(file, runResultSchema);
}

/** The verdict a run earns: a broken run fails whatever its thresholds say. */
export function verdictFor(runFailed: boolean, thresholds: readonly ThresholdResult[]): Verdict {
  if (runFailed) return 'run-failed';
  return thresholds.every((t) => t.ok) ? 'passed' : 'threshold-failed';
}

/** The CLI's exit code for a verdict (0 passed, 1 a threshold failed, 3 the run failed). */
export function exitCodeFor(verdict: Verdict): 0 | 1 | 3 {
  return verdict === 'passed' ? 0 : verdict === 'threshold-failed' ? 1 : 3;
}

// The interfaces and the schema must describe the same documents, both ways.
type Parsed = z.output<typeof runResultSchema>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type DeepMutable<T> = T extends readonly (infer E)[]
  ? DeepMutable<E>[]
  : T extends object
    ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
    : T;
const schemaMatchesTypes: Same<DeepMutable<RunResult>, Parsed> = true;
void schemaMatchesTypes;
