// A run's result (result.ts) from what the run collected: the scenario's phases (run/run-scenario.ts)
// fill in a CollectedRun, and everything the result says is computed here from it and the run's
// setting, with no runtime, target, agent or clock in reach, so a result can be built from fixture
// data and its figures checked in the unit tests. The recovery, the latency windows, the model and
// the floor, the anatomy, the elections, the timeline, the self-check and the thresholds meet here.
import type { DoneMessage, IntervalMessage } from '../load/agent-protocol.js';
import type { ClockReport } from '../measure/clock-offset.js';
import type { CpuReport } from '../measure/cpu-sampler.js';
import type { NodeFloor } from '../measure/node-floor.js';
import type { ResourceReport } from '../measure/resource-sampler.js';
import type { NodeId } from '../vocabulary/names.js';
import { LOOP_STALL_MS } from '../node/loop-stall-watch.js';
import { traceEveryOf } from '../topology/trace-sampling.js';
import { isEvent, type ClusterEvent } from '../vocabulary/node-events.js';
import type { Topology } from '../topology/topology.js';
import { summariseElections, type Deposition } from './elections.js';
import { latencyAnatomy, type LatencyAnatomy, type NodeTraceEvent } from './latency-anatomy.js';
import { latencyWindows } from './latency-windows.js';
import { modelColumns, type ModelSpan, type ModelSpans } from './model-columns.js';
import { meanOneWayOver } from './cluster-as-it-stands.js';
import { recoveryFigures } from './recovery-figures.js';
import {
  LOST_LISTED_MAX,
  verdictFor,
  type Environment,
  type PreloadInfo,
  type RunResult,
  type SafetyResult,
} from './result.js';
import { RESULT_SCHEMA_ID } from '../vocabulary/result-schema.js';
import { lostKeyCount, type FaultMark, type FinalRead, type PairReadings } from '../vocabulary/names.js';
import { selfCheck, type CheckedResult } from './self-check.js';
import { loopStalls, snapshotTransfers } from './snapshots.js';
import { evaluateThresholds } from './thresholds.js';
import { parseThresholds, type Threshold } from '../vocabulary/thresholds.js';
import { timelineSeconds } from './timeline-points.js';
import { nodeTunablesSeen } from './node-tunables-seen.js';
import { tracedFloor } from './traced-floor.js';

/** What a run collected, start to end (run/run-context.ts RunState, with the members' events). */
export interface CollectedRun {
  readonly startedAt: string;
  readonly finishedAt: string;
  /** What went wrong; a run with any failed. */
  readonly errors: readonly string[];
  /** The leader serving when the load started; null when none was seen. */
  readonly initial: NodeId | null;
  /** The leader the cause took out, and when it was carried out (wall ms; the recovery's zero). */
  readonly killed: NodeId | null;
  readonly killAt: number | null;
  /** When the cause was scheduled (wall ms), and its mark. */
  readonly causeScheduledAt: number | null;
  readonly cause: FaultMark | null;
  /** Measured RTT between data centers, ms (NaN where the shaping cannot measure). */
  readonly links: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Every reading of the relay's probe behind `links`; null where the shaping reads none. */
  readonly linkReadings?: PairReadings | null;
  /** By data center: its load agent's `done`. */
  readonly dones: ReadonlyMap<string, DoneMessage>;
  readonly intervals: readonly IntervalMessage[];
  /** "key@node" of every key the final read found short of its acknowledged writes. */
  readonly lostList: readonly string[];
  readonly finalRead?: FinalRead | null;
  /** Data center → why its agent's data was lost. */
  readonly lostAgents: ReadonlyMap<string, string>;
  /** Every member event, in arrival order. */
  readonly nodeEvents: readonly ClusterEvent[];
  /** Wall ms of the load's t = 0; 0 when the load never started. */
  readonly loadStart: number;
  /** Every fault carried out, in order. */
  readonly faults: readonly FaultMark[];
  readonly floor: NodeFloor;
  readonly cpu: CpuReport;
  readonly resources: ResourceReport;
  /** Every fault that took the serving leader out, in any order. */
  readonly depositions: readonly Deposition[];
  readonly preloaded: PreloadInfo | null;
  /** Other hosts' clocks (null: every stamp came from the harness's host). */
  readonly clocks?: ClockReport | null;
  /** The history's check, where the run had reads. */
  readonly safety?: SafetyResult;
}

/** What the run was: the topology and the command line's choices, and where it ran. */
export interface ResultSetting {
  readonly topology: Topology;
  readonly target: {
    readonly name: RunResult['target'];
    /** Whether its members trace writes: the floor then comes from them, not a calibration. */
    readonly tracesWrites: boolean;
    readonly hasOracles: boolean;
    readonly electionRule: string;
  };
  readonly runtime: RunResult['runtime'];
  readonly shaping: { readonly kind: RunResult['shaping']['mode']; readonly reason: string };
  readonly seed: number;
  /** The command line's thresholds (the topology's own are added here). */
  readonly thresholds: readonly Threshold[];
  readonly environment: Environment;
}

export function buildResult(s: ResultSetting, x: CollectedRun): RunResult {
  const t = s.topology;
  const ev = x.nodeEvents;
  const dcs = t.datacenters.map((d) => d.name);
  const dones = [...x.dones.values()];
  const { elected, transferredTo, epoch, scores, unheard, recovery } = recoveryFigures(x, dcs);
  // The paper's model alone (network only); the floor beside it, never folded in.
  const spans = modelSpans(t, x, recovery.electedMs, transferredTo ?? elected);
  const columns = modelColumns(t, spans, x.faults, x.floor);
  const anatomy = anatomyOf(t, dones, ev, s.shaping.kind === 'none', spans, x.faults);
  const checked: CheckedResult = {
    schema: RESULT_SCHEMA_ID,
    errors: x.errors,
    target: s.target.name,
    runtime: s.runtime,
    shaping: shapingInfo(s),
    ...runSetting(t),
    seed: s.seed,
    startedAt: x.startedAt,
    finishedAt: x.finishedAt,
    leaders: leadersOf(s, x, { elected, transferredTo, epoch, scores, unheard }),
    recovery,
    latency: latencyWindows(dcs, x.dones, x.lostAgents),
    model: columns.model,
    modelBasis: columns.basis,
    // A target whose members trace writes gets its floor from them; the others', calibrated after
    // the load, is mixed per window by modelColumns.
    floor: s.target.tracesWrites ? tracedFloor(anatomy, dcs) : columns.floor,
    cpu: x.cpu,
    anatomy,
    elections: summariseElections(
      ev,
      [...x.depositions].sort((a, b) => a.at - b.at),
      x.loadStart,
      x.loadStart ? x.loadStart + t.scenario.durationMs : 0,
    ),
    resources: x.resources,
    preload: x.preloaded,
    snapshots: snapshotTransfers(ev, x.loadStart),
    // Only the POLE node watches its own event loop; a JVM's pauses are not seen this way.
    ...(s.target.name === 'pole'
      ? { loopStalls: loopStalls(ev, x.loadStart), loopStallMs: LOOP_STALL_MS }
      : {}),
    links: linkRtts(t, x.links),
    linkReadings: x.linkReadings ?? null,
    ...(x.clocks ? { clocks: x.clocks } : {}),
    ...(x.safety ? { safety: x.safety } : {}),
    writes: writesOf(x, dones),
    load: loadOf(t, dones),
    timeline: timeline(x.intervals, x.loadStart, x.faults, t.scenario.durationMs),
    environment: withTunablesSeen(s.environment, nodeTunablesSeen(ev)),
  };
  // The topology's own thresholds (a soak's), checked when it was loaded, then the command line's.
  const asked = [...parseThresholds(t.scenario.thresholds, 'scenario.thresholds'), ...s.thresholds];
  // The target's promises after them, each once: a user's own "writes.lost == 0" is the same one.
  const all = [
    ...asked,
    ...promisedThresholds(x.safety).filter((p) => !asked.some((a) => a.expr === p.expr)),
  ];
  const partial = { ...checked, selfCheck: selfCheck(checked) };
  const thresholds = evaluateThresholds(all, partial);
  const trust = {
    violations: partial.selfCheck.violations.length,
    unverified: partial.writes.unverified ?? 0,
  };
  return { ...partial, thresholds, verdict: verdictFor(x.errors.length > 0, thresholds, trust) };
}

/** Who led, who was taken out, who was elected, and by what rule. */
function leadersOf(
  s: ResultSetting,
  x: CollectedRun,
  f: Pick<RunResult['leaders'], 'elected' | 'transferredTo' | 'epoch' | 'scores' | 'unheard'>,
): RunResult['leaders'] {
  const t = s.topology;
  const { elected, transferredTo, epoch, scores, unheard } = f;
  // A killed leader stays down; one cut off is back once the cut is restored.
  const dead = x.cause?.action === 'kill' ? x.killed : null;
  return {
    initial: x.initial,
    killed: dead,
    cause: x.cause && x.killed ? { ...x.cause, leader: x.killed } : null,
    elected,
    transferredTo,
    // ZooKeeper and etcd elect by their own rules (FastLeaderElection: the newest history heard
    // in its round, then the highest id; Raft: the first to time out with a log at least as new
    // as a majority's).
    oracle: s.target.hasOracles ? t.cluster.oracle : s.target.electionRule,
    electionWaitFor: s.target.hasOracles ? (t.cluster.electionWaitFor ?? 'live') : null,
    epoch,
    scores,
    unheard,
    resignations: x.nodeEvents.filter(isEvent('resigned')).map((e) => ({
      atS: (e.t - x.loadStart) / 1000,
      leader: e.node,
      successor: e.successor,
      own: [...e.own],
      successorScore: [...e.successorScore],
    })),
  };
}

const sumOf = (dones: readonly DoneMessage[], f: (d: DoneMessage) => number): number =>
  dones.reduce((n, d) => n + f(d), 0);

/** What was written, acknowledged, failed and lost, and what the final read covered. */
function writesOf(x: CollectedRun, dones: readonly DoneMessage[]): RunResult['writes'] {
  const sum = (f: (d: DoneMessage) => number): number => sumOf(dones, f);
  return {
    attempted: sum((d) => d.totals.attempted),
    acked: sum((d) => d.totals.acked),
    failed: sum((d) => d.totals.failed),
    ...(sum((d) => d.totals.failed) > 0 ? { failedCodes: failedCodes(dones) } : {}),
    lost: lostKeyCount(x.lostList),
    // The agents' count less what the final read covered; every write when it made none.
    unverified: Math.max(0, sum((d) => d.totals.acked) - (x.finalRead?.writes ?? 0)),
    ...(x.lostList.length > 0 ? { lostList: x.lostList.slice(0, LOST_LISTED_MAX) } : {}),
    ...(x.finalRead ? { finalRead: x.finalRead } : {}),
  };
}

/** The rate asked for and the rate the agents kept. */
function loadOf(t: ResultSetting['topology'], dones: readonly DoneMessage[]): RunResult['load'] {
  return {
    targetRate: t.workload.rate,
    achievedRate: dones.length > 0 ? sumOf(dones, (d) => d.sentRate) : null,
    latenessP99Ms: dones.length > 0 ? Math.max(...dones.map((d) => d.lateness.p99)) : null,
  };
}

/** The topology, workload and scenario the run was set. */
function runSetting(t: ResultSetting['topology']): Pick<RunResult, 'topology' | 'workload' | 'scenario'> {
  return {
    topology: {
      name: t.name,
      file: t.file,
      datacenters: t.datacenters.map((d) => ({ name: d.name, nodes: d.nodes.map((n) => n.id) })),
    },
    workload: {
      rate: t.workload.rate,
      size: t.workload.size,
      arrival: t.workload.arrival,
      share: Object.fromEntries([...t.workload.ratePerDc].map(([dc, r]) => [dc, r / t.workload.rate])),
      ...(t.workload.keys !== undefined ? { keys: t.workload.keys } : {}),
    },
    scenario: {
      durationMs: t.scenario.durationMs,
      warmupMs: t.scenario.warmupMs,
      settleMs: t.scenario.settleMs,
      faults: t.scenario.faults.map((f) => ({
        atS: f.atMs / 1000,
        action: f.action,
        target: f.nodes && f.action !== 'ring' ? f.nodes.join(',') : f.target,
        ...(f.ref !== undefined ? { ref: f.ref } : {}),
        ...(f.undoes !== undefined ? { undoes: f.undoes } : {}),
        ...(f.rttMs !== undefined ? { rttMs: f.rttMs } : {}),
        ...(f.drawn ? { drawn: true } : {}),
      })),
      ...(t.scenario.nemesis
        ? {
            nemesis: {
              mix: t.scenario.nemesis.mix,
              everyS: t.scenario.nemesis.everyMs / 1000,
              forS: t.scenario.nemesis.forMs / 1000,
              seed: t.scenario.nemesis.seed,
            },
          }
        : {}),
    },
  };
}

/**
 * The windows the model is made for, as the phases switched (chaos/fault-schedule.ts,
 * chaos/election-watch.ts): "before" from the warm-up's end to the first fault; "degraded" from a
 * first fault that left the leader serving to the one that took it out (or the end); "after" from
 * the election plus the settle time to the end, under the leader elected (or handed the lead, after
 * --etcd-prefer). Seconds from the load start.
 */
function modelSpans(
  t: Topology,
  x: CollectedRun,
  electedMs: number | null,
  afterLeader: NodeId | null,
): ModelSpans {
  const endS = t.scenario.durationMs / 1000;
  const warmupS = t.scenario.warmupMs / 1000;
  const faults = [...x.faults].sort((a, b) => a.atS - b.atS);
  const first = faults[0];
  const causeS = x.killAt !== null && x.loadStart ? (x.killAt - x.loadStart) / 1000 : null;
  const firstS = first?.atS ?? endS;
  const cause = x.cause;
  const isCause = (f: FaultMark): boolean =>
    cause !== null && f.atS === cause.atS && f.action === cause.action && f.node === cause.node;
  const degrades = first !== undefined && !isCause(first);
  const afterS =
    causeS !== null && electedMs !== null ? causeS + (electedMs + t.scenario.settleMs) / 1000 : null;
  return {
    before: { fromS: Math.min(warmupS, firstS), toS: firstS, leader: x.initial },
    // Closed by the cause's own mark: the same stamp that put it in `faults`.
    ...(degrades
      ? { degraded: { fromS: first.atS, toS: x.cause?.atS ?? causeS ?? endS, leader: x.initial } }
      : {}),
    after: afterS !== null && afterS < endS ? afterSpan(x, afterS, endS, afterLeader) : null,
  };
}

/**
 * The after window with every leader that took over after the deciding one (one that resigned for a
 * better placed member, then that one for another, or an election with no fault): the leader at
 * the window's start is the last to take over before it, and those inside it split it. A take-over
 * is a leader's own `serving`: a member that thought it won but never had a quorum (one cut off by
 * a partition) served nothing, and is not one.
 */
function afterSpan(x: CollectedRun, fromS: number, toS: number, decided: NodeId | null): ModelSpan {
  const s = (t: number): number => (t - x.loadStart) / 1000;
  const takeovers: { atS: number; leader: NodeId }[] = [];
  let current = decided;
  // The deciding leader's own first serving since the cause.
  const since = x.killAt ?? x.loadStart;
  const settled =
    decided === null ? undefined : x.nodeEvents.find((e) => e.t >= since && servedBy(e, decided));
  for (const e of x.nodeEvents) {
    if (settled === undefined || e.t <= settled.t || e.ev !== 'serving' || e.leader !== undefined) continue;
    if (e.node === current) continue;
    current = e.node;
    takeovers.push({ atS: s(e.t), leader: e.node });
  }
  const leader = takeovers.filter((h) => h.atS <= fromS).at(-1)?.leader ?? decided;
  const handovers = takeovers.filter((h) => h.atS > fromS && h.atS < toS);
  return { fromS, toS, leader, ...(handovers.length > 0 ? { handovers } : {}) };
}

/** `e` is `leader`'s own word that it serves, as leader, with a quorum behind it. */
function servedBy(e: ClusterEvent, leader: NodeId): boolean {
  return e.ev === 'serving' && e.node === leader && e.leader === undefined;
}

/**
 * The result with one more violation, its verdict taken again: how a test drives a real run down
 * the suspect path (POLE_BENCH_INJECT_VIOLATION, docs/testing.md) without doctoring a figure.
 */
export function withInjectedViolation(r: RunResult, why: string): RunResult {
  const selfCheck = { ...r.selfCheck, violations: [...r.selfCheck.violations, `injected: ${why}`] };
  const trust = { violations: selfCheck.violations.length, unverified: r.writes.unverified ?? 0 };
  return { ...r, selfCheck, verdict: verdictFor(r.errors.length > 0, r.thresholds, trust) };
}

function withTunablesSeen(
  e: Environment,
  seen: Readonly<Record<string, string | null>> | undefined,
): Environment {
  return seen ? { ...e, nodeTunablesSeen: seen } : e;
}

function shapingInfo(s: ResultSetting): RunResult['shaping'] {
  const j = s.topology.shaping.jitter;
  return {
    mode: s.shaping.kind,
    reason: s.shaping.reason,
    jitter: j.kind === 'fraction' ? `${j.fraction * 100}%` : `${j.ms}ms`,
    distribution: s.topology.shaping.distribution,
  };
}

/** Every ordered pair of data centers: the RTT the topology configures and the one measured. */
function linkRtts(t: Topology, measured: CollectedRun['links']): RunResult['links'] {
  const links: Record<string, Record<string, RunResult['links'][string][string]>> = {};
  for (const a of t.datacenters)
    for (const b of t.datacenters) {
      const m = measured.get(a.name)?.get(b.name);
      (links[a.name] ??= {})[b.name] = {
        configuredRttMs: t.rttMs(a.name, b.name),
        measuredRttMs: m === undefined || Number.isNaN(m) ? null : m,
        // The round trip's jitter: the two directions' spreads, independent, added as variances.
        jitterMs: Math.hypot(t.jitterMs(a.name, b.name), t.jitterMs(b.name, a.name)),
      };
    }
  return links;
}

/**
 * The latency anatomy of the traced writes (report/latency-anatomy.ts). A hop's network part is the
 * link as it stood in the write's window (the model's spans): after a link fault, the new delay.
 */
export function anatomyOf(
  t: Topology,
  dones: readonly DoneMessage[],
  events: readonly ClusterEvent[],
  unshaped: boolean,
  spans: ModelSpans,
  faults: readonly FaultMark[],
): LatencyAnatomy {
  const byPhase = new Map<string, (a: string, b: string) => number>();
  for (const [phase, span] of Object.entries(spans) as [string, ModelSpan | null | undefined][])
    if (span) byPhase.set(phase, meanOneWayOver(t, faults, span.fromS, span.toS));
  const traces: NodeTraceEvent[] = [];
  for (const e of events)
    if (e.ev === 'trace')
      traces.push({
        node: e.node,
        client: e.client as string,
        req: e.req as number,
        s: e.s as NodeTraceEvent['s'],
        ...(e.acks ? { acks: e.acks as Record<string, number> } : {}),
      });
  return latencyAnatomy(
    dones.map((d) => ({ dc: d.dc, clientId: d.clientId, traces: d.traces })),
    traces,
    {
      dcOf: (id) => t.node(id).datacenter,
      oneWayMs: (a, b, phase) => (unshaped ? 0 : (byPhase.get(phase) ?? t.oneWayDelayMs.bind(t))(a, b)),
      members: t.nodes.length,
    },
    traceEveryOf(t),
  );
}

/** Per second of load, all data centers merged (report/timeline-points.ts). */
export function timeline(
  intervals: readonly IntervalMessage[],
  loadStart: number,
  faults: readonly FaultMark[],
  durationMs: number,
): RunResult['timeline'] {
  const { seconds, afterLoad } = timelineSeconds(intervals, loadStart, durationMs);
  return {
    startedAt: loadStart ? new Date(loadStart).toISOString() : null,
    seconds,
    faults,
    ...(afterLoad ? { afterLoad } : {}),
  };
}

/** Every agent's failed writes by their last error's code, added up. */
function failedCodes(dones: readonly DoneMessage[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of dones)
    for (const [code, n] of Object.entries(d.totals.failedCodes ?? {})) out[code] = (out[code] ?? 0) + n;
  return out;
}

/**
 * What the target promised, held as thresholds every run has. Every target here acknowledges a
 * write only once a quorum holds it, so none may be lost, with or without a threshold of the
 * user's. Of its reads: no key violated under a model it promises, none left undecided (the check
 * ran out of time: the promise was then not shown to hold).
 */
function promisedThresholds(safety: SafetyResult | undefined): Threshold[] {
  const writes = parseThresholds(['writes.lost == 0'], 'the target’s promise');
  if (!safety?.models.some((m) => m.promised)) return writes;
  return [
    ...writes,
    ...parseThresholds(['safety.broken == 0', 'safety.undecided == 0'], 'the target’s promise'),
  ];
}
