// src/report/: a run's outputs: result.json's shape (this file), report.md, charts/, the cross-checks,
// thresholds, latency.hlog, and compare/ (a run or suite against a baseline).
//
// result.json: everything a run found, as one versioned document ("pole-bench/result@3"). The
// report, the thresholds and `--json` all read this one shape. The interfaces are the contract; the
// zod schema (vocabulary/result-schema.ts, where topology thresholds can reach it too) reads a file
// back (e.g. to re-render a report) and must agree with them, which the compile-time check at the
// end enforces.
//
// Conventions: durations and latencies are milliseconds; wall-clock times are ISO 8601 strings;
// anything a run may fail to observe (no fault, no new leader, no writes in a window) is null,
// never 0, so that a threshold on it fails instead of passing by accident.
import type { CheckCounts } from '../check/check-history.js';
import type { FaultMark, FinalRead, PairReadings, TargetName } from '../vocabulary/names.js';
import type { z } from 'zod';
import type { CpuReport } from '../measure/cpu-sampler.js';
import type { LatencyAnatomy } from './latency-anatomy.js';
import type { ElectionsInfo } from './elections.js';
import type { ResourceReport } from '../measure/resource-sampler.js';
import type { ClockReport } from '../measure/clock-offset.js';
import type { FloorReading } from '../measure/node-floor.js';
import { loadValidatedFile } from '../util/load-validated.js';
import type { LoopStalls, SnapshotTransfer } from './snapshots.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';
import type { RecoveryExplain } from './recovery-explain.js';
import {
  runResultSchema,
  type RESULT_SCHEMA_ID,
  type SHAPING_MODES,
  type VERDICTS,
} from '../vocabulary/result-schema.js';

/**
 * passed: every threshold and cross-check held and every acknowledged write was verified;
 * threshold-failed: the run worked but a threshold did not hold; suspect: the run's own figures
 * disagree (a cross-check was violated) or acknowledged writes went unverified, so its figures,
 * thresholds included, cannot be trusted; run-failed: the run itself broke.
 */
export type Verdict = (typeof VERDICTS)[number];

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
  /** Writes go over this many keys (workload.keys); absent: every write a new key. */
  readonly keys?: number;
}

export interface ScenarioInfo {
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly settleMs: number;
  /**
   * The fault schedule as planned, before the run resolved "leader" or a minority (the timeline
   * holds what each did): enough, with the seed, to replay it (added within result@8: absent from
   * older files).
   */
  readonly faults?: readonly ScheduledFault[];
  /** The nemesis that drew the schedule's drawn faults, where one did. */
  readonly nemesis?: {
    readonly mix: readonly string[];
    readonly everyS: number;
    readonly forS: number;
    readonly seed: number;
  };
}

/** One fault of the schedule as planned. */
export interface ScheduledFault {
  readonly atS: number;
  readonly action: string;
  /** As the file says it: a node, "leader", "killed", "minority", data centers, the ring order. */
  readonly target: string;
  readonly ref?: number;
  readonly undoes?: number;
  readonly rttMs?: number;
  /** Drawn by the nemesis rather than written. */
  readonly drawn?: boolean;
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
  /**
   * Whom the harness handed leadership to after that election (etcd's MoveLeader, --etcd-prefer),
   * once it led; the "after" window's model is this leader's. Null: no hand-over.
   */
  readonly transferredTo: string | null;
  /** The oracle spec, e.g. "worst-case" or "latency:10ms,history". */
  readonly oracle: string;
  /** Whom the POLE election waited for before T (election.waitFor); null: ZooKeeper's own election. */
  readonly electionWaitFor: 'all' | 'live' | null;
  /** Epoch of the deciding election. */
  readonly epoch: number | null;
  /** The score of every proposal seen in the deciding election, by proposing node. */
  readonly scores: Readonly<Record<string, readonly number[]>>;
  /**
   * ZooKeeper: each survivor whose own proposal its leader did not hear before deciding, with that
   * proposal ([zxid epoch, zxid counter, sid]): FLE elects the best vote heard, not the best made.
   */
  readonly unheard: Readonly<Record<string, readonly number[]>>;
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
  /**
   * Who stamped firstCommitMs: the new leader itself (its `first-commit` event, the POLE node) or
   * the load agents (their first acknowledgement of the new epoch: ZooKeeper, etcd). Only a leader's
   * stamp is a second source for the outages, which are the agents' own. Absent from older files.
   */
  readonly firstCommitFrom?: 'leader' | 'clients';
  /** firstCommit − elected, the paper's definition of recovery time. */
  readonly paperRecoveryMs: number | null;
  /** The leader handed the lead to after the election (--etcd-prefer) leads; null: no hand-over. */
  readonly transferMs: number | null;
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
  /**
   * The standard deviation of every write's latency from the actual send (added within result@7:
   * null in older files): how far a sample of the writes (the traced ones) may stray by chance.
   */
  readonly sentSd: number | null;
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
  /** Under the initial leader after a fault that left it serving (runs with such a window only). */
  readonly degraded?: number | null;
  readonly after: number | null;
}

/** What a window's model was taken over (report/model-columns.ts). */
export interface WindowBasis {
  readonly leader: string | null;
  /** The window, s from the load start. */
  readonly fromS: number;
  readonly toS: number;
  /** The window split at the faults inside it: each part's members and links. */
  readonly segments: ReadonlyArray<{
    readonly fromS: number;
    readonly toS: number;
    /** The members the leader could count on: up, and on its side of every partition. */
    readonly members: readonly string[];
    /** Who was out and why, what was cut, which links changed, in words. */
    readonly state: string;
    /** Why (part of) this part has no model; null: it has one for every data center. */
    readonly noModel: string | null;
    /** The leader in this part, where one took over inside the window (absent in older files). */
    readonly leader?: string | null;
  }>;
}

/** By window (before, degraded, after): what its model was taken over. */
export type ModelBasis = Readonly<Record<string, WindowBasis>>;

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
  /**
   * A calibrated floor's per-window mix of the kept calibration's medians instead of its means:
   * what a window's median is held to (absent for a traced floor and in older files).
   */
  readonly perDcMedian?: Readonly<Record<string, ModelWindows>>;
  /** A calibrated floor: every calibration taken, and which one the figures are (absent in older files). */
  readonly readings?: readonly FloorReading[];
  readonly kept?: number;
}

export interface SelfCheck {
  /** The invariants that were evaluated on this run (held or violated), each in a few words. */
  readonly checked: readonly string[];
  /** Those that did not hold, each `check: the figures`. */
  readonly violations: readonly string[];
  /**
   * The invariants this run gave nothing to evaluate, with why (too few traced writes, no
   * independent source for this target): never counted as held. Absent from older files.
   */
  readonly notEvaluated?: readonly NotEvaluated[];
}

export interface NotEvaluated {
  readonly check: string;
  readonly why: string;
}

export interface LinkRtt {
  readonly configuredRttMs: number;
  /** Measured through the shaping before the load started; null when not measured. */
  readonly measuredRttMs: number | null;
  /** The configured round trip's jitter, ms (its two directions' added as variances; absent in older files). */
  readonly jitterMs?: number;
}

/** How many "key@member" entries of the final read's finds a result keeps. */
export const LOST_LISTED_MAX = 100;

export interface WritesInfo {
  readonly attempted: number;
  readonly acked: number;
  /** Errors and timeouts, each write counted once however often it was retried. */
  readonly failed: number;
  /** The failed writes by their last error's code (absent from files written before issue 27). */
  readonly failedCodes?: Readonly<Record<string, number>>;
  /**
   * Keys short of their acknowledged writes on some member read (each lost one or more; counted
   * per key since 2026-11-28, per key and member before).
   */
  readonly lost: number;
  /**
   * Acknowledged writes the final read did not cover (the agents' count less the writes whose key
   * it read): nothing is known of them, so "lost" says nothing of them and the run cannot pass.
   * Absent from older files.
   */
  readonly unverified?: number;
  /** The first (up to LOST_LISTED_MAX) "key@member" found short. */
  readonly lostList?: readonly string[];
  /** Where the final read looked (absent from files written before 2026-11-28). */
  readonly finalRead?: FinalRead;
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

export interface Timeline {
  /** Wall time of the load start (t = 0); null when the load never started. */
  readonly startedAt: string | null;
  readonly seconds: readonly TimelinePoint[];
  readonly faults: readonly FaultMark[];
  /** Left out of `seconds` (added within result@7: absent from older files and when nothing was). */
  readonly afterLoad?: AfterLoad;
}

export interface SafetyResult {
  /** The history's file beside result.json. */
  readonly history: string;
  /**
   * Keys violated under a model the target promises, and pairs of a connection and a key whose
   * reads went back in time (every read path promises that much): the verdict holds it to 0.
   */
  readonly broken: number;
  /** Keys a promised model's check left undecided (its time ran out; also held to 0). */
  readonly undecided: number;
  readonly models: readonly SafetyModelResult[];
  /**
   * The history's writes, sent and completed: the agents count the same writes apart (their
   * totals), and self-check historyAgrees holds the two to each other. Absent from older files.
   */
  readonly writes?: { readonly sent: number; readonly ok: number };
}

/** One operation of a counterexample, ms from the load's start. */
export interface SafetyOp {
  /** Its process, and the connection it went over where the history names one. */
  readonly process: string;
  readonly f: 'read' | 'write' | 'cas';
  readonly value: string | null;
  readonly invokedMs: number;
  readonly completedMs: number | null;
}

/**
 * One model the history was checked against. linearizable: keys, each a register; session: pairs
 * of a connection and a key (`keys`), and the reads among them (`ops`), held to never going back in
 * time (added within result@8).
 */
export interface SafetyModelResult extends CheckCounts {
  readonly model: 'linearizable' | 'session';
  /** The target's read path the reads took (Target.reads). */
  readonly readMode: string;
  /** Whether the target promises this model for that read path: then the verdict holds it. */
  readonly promised: boolean;
  /** The first violated key's shortest counterexample, ms from the load's start. */
  readonly counterexample: { readonly key: string; readonly ops: readonly SafetyOp[] } | null;
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
  /** GLIBC_TUNABLES the POLE nodes started with (POLE runs only). */
  readonly nodeTunables?: string;
  /**
   * The same as each POLE node's own process read it at its last start (its `started` event; null:
   * unset): a second reading of nodeTunables, through whatever the runtime passed it by (a
   * process's environment, a container's, a swarm task's start script). The self-check holds the
   * two together. Absent where no node said (other targets, older runs).
   */
  readonly nodeTunablesSeen?: Readonly<Record<string, string | null>>;
  /** This machine's transparent huge page mode (always, madvise, never), where Linux says. */
  readonly transparentHugePages?: string;
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
  /** model[dc]: the paper's model alone, each window over the cluster as it stood then. */
  readonly model: Readonly<Record<string, ModelWindows>>;
  /** What each window's model was taken over (absent from older files: the full cluster). */
  readonly modelBasis?: ModelBasis;
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
  /**
   * Every reading of the links by the relay's probe, with the undelayed route read beside them;
   * null where the shaping reads none (added within result@7: absent from files written before).
   */
  readonly linkReadings?: PairReadings | null;
  /**
   * Every other host's clock against the harness's, before and after the load, by host name
   * (measure/clock-offset.ts): what its stamps were corrected by, and how surely. Added within
   * result@8: absent from files written before and from runs whose stamps all come from one host.
   */
  readonly clocks?: ClockReport;
  /** What the system promised against what it did, from the run's history (runs with reads). */
  readonly safety?: SafetyResult;
  readonly writes: WritesInfo;
  readonly load: LoadInfo;
  readonly timeline: Timeline;
  readonly thresholds: readonly ThresholdResult[];
  readonly environment: Environment;
}

/** Validate parsed JSON as a result; throws zod's error on a mismatch. */
export function parseResult(data: unknown): RunResult {
  return runResultSchema.parse(data);
}

/** Read result.json back; InputError (exit code 2) with file, line and field on anything wrong. */
export function readResultFile(file: string): RunResult {
  return loadValidatedFile(file, runResultSchema);
}

/**
 * The verdict a run earns: a broken run fails whatever else it says; a run whose figures disagree
 * with each other, or that left acknowledged writes unverified, is suspect whatever its thresholds
 * say (they were evaluated on those figures).
 */
export function verdictFor(
  runFailed: boolean,
  thresholds: readonly ThresholdResult[],
  trust: { readonly violations: number; readonly unverified: number } = { violations: 0, unverified: 0 },
): Verdict {
  if (runFailed) return 'run-failed';
  if (trust.violations > 0 || trust.unverified > 0) return 'suspect';
  return thresholds.every((t) => t.ok) ? 'passed' : 'threshold-failed';
}

/**
 * Why a result's figures cannot be trusted, one entry each: every violated check by name (its
 * violations are `name: figures`), and acknowledged writes the final read did not cover.
 */
export function suspectBecause(r: {
  readonly selfCheck: Pick<SelfCheck, 'checked' | 'violations'>;
  readonly writes: Pick<WritesInfo, 'unverified'>;
}): string[] {
  const named = r.selfCheck.checked.filter((c) => r.selfCheck.violations.some((v) => v.startsWith(`${c}: `)));
  const unnamed = r.selfCheck.violations.filter((v) => !named.some((c) => v.startsWith(`${c}: `)));
  const unverified = r.writes.unverified ?? 0;
  return [
    ...named,
    ...unnamed,
    ...(unverified > 0 ? [`${unverified} acknowledged writes not verified by the final read`] : []),
  ];
}

/** The CLI's exit codes: 2 is bad input (util/input-error.ts), never a verdict. */
export const EXIT_CODES = { passed: 0, 'threshold-failed': 1, 'run-failed': 3, suspect: 4 } as const;

/** The CLI's exit code for a verdict (0 passed, 1 a threshold failed, 3 the run failed, 4 suspect). */
export function exitCodeFor(verdict: Verdict): (typeof EXIT_CODES)[Verdict] {
  return EXIT_CODES[verdict];
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
