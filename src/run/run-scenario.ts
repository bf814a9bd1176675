// One benchmark run, start to finish: bring the topology's cluster up on a runtime, measure the
// shaped links, drive the open-loop load from one agent per data center, carry out the faults,
// time the recovery from node events, read every acknowledged write back, and turn it all into a
// result. Client (agents), nemesis (faults) and checker stay separate; this file only sequences them.
import { preload } from '../load/preload.js';
import { loopStalls, snapshotTransfers } from '../report/snapshots.js';
import { LOOP_STALL_MS } from '../node/loop-stall-watch.js';
import { timelineSeconds } from '../report/timeline-points.js';
import type { PreloadInfo } from '../report/result.js';
import * as hdr from 'hdr-histogram-js';
import type { NodeId } from '../node/core/types.js';
import { isEvent } from '../vocabulary/node-events.js';
import type { AgentProcess } from '../load/agent-process.js';
import { drainAgents } from './drain-agents.js';
import {
  DEGRADED_PHASE,
  FAULT_PHASE,
  type DoneMessage,
  type IntervalMessage,
  type LatencySummary,
} from '../load/agent-protocol.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import { wallNow } from '../runtime/process/process-cluster.js';
import { collectEnvironment } from '../report/environment.js';
import type { HlogInterval } from '../report/hlog-writer.js';
import { RESULT_SCHEMA_ID } from '../vocabulary/result-schema.js';
import type { FaultMark } from '../vocabulary/names.js';
import { verdictFor, type LatencyStats, type RunResult } from '../report/result.js';
import { evaluateThresholds } from '../report/thresholds.js';
import type { Threshold } from '../vocabulary/thresholds.js';
import { CpuSampler, cpuReport, type CpuReport } from '../measure/cpu-sampler.js';
import {
  FLOOR_PREFIX,
  WARMUP_PREFIX,
  calibrateFloor,
  unmeasuredFloor,
  warmUp,
  type NodeFloor,
} from '../measure/node-floor.js';
import { modelColumns } from '../report/model-columns.js';
import { clientRecovery } from '../report/client-recovery.js';
import { tracedFloor } from '../report/traced-floor.js';
import { selfCheck } from '../report/self-check.js';
import { latencyAnatomy, type LatencyAnatomy, type NodeTraceEvent } from '../report/latency-anatomy.js';
import { TRACE_EVERY } from '../node/trace/write-tracer.js';
import { KILLED, LEADER } from '../topology/topology-schema.js';
import { summariseElections, type Deposition } from '../report/elections.js';
import { explainRecovery } from '../report/recovery-explain.js';
import { ResourceSampler, emptyResourceReport, type ResourceReport } from '../measure/resource-sampler.js';
import { parseThresholds } from '../vocabulary/thresholds.js';
import type { Topology } from '../topology/topology.js';
import type { Runtime } from '../runtime/runtime.js';

export interface RunProgress {
  readonly phase: string;
  readonly elapsedS: number;
  readonly rate?: number;
  readonly errors?: number;
  readonly leader?: string;
}

export interface RunScenarioOptions {
  readonly topology: Topology;
  readonly runtime: Runtime;
  readonly seed: number;
  readonly thresholds: readonly Threshold[];
  readonly version: string;
  readonly onProgress?: (p: RunProgress) => void;
  /** Aborting (Ctrl-C) stops the run; the caller still tears the runtime down. */
  readonly signal?: AbortSignal;
}

export interface RunScenarioOutput {
  readonly result: RunResult;
  readonly intervals: HlogInterval[];
  readonly events: unknown[];
}

class RunAborted extends Error {}

/** How often the resource sampler reads every process's memory, files and threads. */
const RESOURCE_EVERY_MS = 5_000;

/** The load's paths: `${PATH_PREFIX}/${dc}/${seq}`. */
const PATH_PREFIX = '/pb';

export async function runScenario(o: RunScenarioOptions): Promise<RunScenarioOutput> {
  const t = o.topology;
  const rt = o.runtime;
  const startedAt = new Date().toISOString();
  const errors: string[] = [];
  const harnessEvents: Array<Record<string, unknown>> = [];
  const note = (ev: string, fields: Record<string, unknown> = {}): void => {
    harnessEvents.push({ t: wallNow(), node: 'harness', ev, ...fields });
  };
  const progress = (phase: string, extra: Omit<RunProgress, 'phase' | 'elapsedS'> = {}): void =>
    o.onProgress?.({ phase, elapsedS: loadStart ? (wallNow() - loadStart) / 1000 : 0, ...extra });
  const sleepUntil = (wall: number): Promise<void> => abortable(Math.max(0, wall - wallNow()), o.signal);
  let loadStart = 0;
  const agents = new Map<string, AgentProcess>();
  const intervals: IntervalMessage[] = [];

  let initial: NodeId | null = null;
  let killed: NodeId | null = null;
  let killAt: number | null = null;
  let cause: FaultMark | null = null;
  /** When the cause was scheduled (wall ms): beside the instant it was carried out (`killAt`). */
  let causeScheduledAt: number | null = null;
  const cuts: Array<{ a: NodeId[]; b: NodeId[] }> = [];
  /** Elections a link fault may cause later; settled before the load ends. */
  const watchers: Array<Promise<void>> = [];
  const faultsDone: FaultMark[] = [];
  let links = new Map<string, Map<string, number>>();
  const dones = new Map<string, DoneMessage>();
  /** Data center → why its agent's data was lost. */
  const lostAgents = new Map<string, string>();
  let lostList: string[] = [];
  let floor: NodeFloor = unmeasuredFloor('the run ended before the calibration');
  let sampler: CpuSampler | undefined;
  let cpu: CpuReport = cpuReport([], 0);
  let resourceSampler: ResourceSampler | undefined;
  let resources: ResourceReport = emptyResourceReport(RESOURCE_EVERY_MS);
  /** Every fault that took the serving leader out (the first is `cause`). */
  const depositions: Deposition[] = [];
  /** The node the latest kill or pause took down: what `restart: killed` brings back. */
  let lastDown: NodeId | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let preloaded: PreloadInfo | null = null;

  try {
    progress('starting nodes');
    await rt.start();
    const first = await rt.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 30_000);
    initial = first.node;
    note('initial-leader', { leader: initial });
    progress('measuring links', { leader: initial });
    links = await rt.shaping.measure(20);
    const target = rt.target;
    if (t.scenario.preloadBytes !== undefined) {
      // The state the recovery experiments need before the load: snapshots of about this size.
      const total = t.scenario.preloadBytes;
      progress(`preloading ${Math.round(total / 1e6)} MB`, { leader: initial });
      preloaded = await preload(rt.clientAddress(initial), {
        bytes: total,
        size: t.workload.size,
        connect: target.connect,
        clientId: `run${o.seed}-preload`,
        ...(o.signal ? { signal: o.signal } : {}),
        onProgress: (written, all) =>
          progress(`preloading: ${Math.round((100 * written) / all)} %`, { leader: initial ?? '?' }),
      });
      note('preload', { ...preloaded });
    }
    progress('warming up', { leader: initial });
    await target.prepareWrites(rt.clientAddress(initial), WARMUP_PREFIX);
    await warmUp(
      { id: initial, ...rt.clientAddress(initial) },
      {
        rate: t.workload.rate,
        size: t.workload.size,
        durationMs: target.warmUpMs,
        clientId: `run${o.seed}-warmup`,
        connect: target.connect,
      },
    );
    // Whatever the agents' writes need in place (ZooKeeper: the znodes they set) before the clock runs.
    for (const dc of t.datacenters)
      await target.prepareWrites(rt.clientAddress(initial), `${PATH_PREFIX}/${dc.name}`);

    progress('starting load agents', { leader: initial });
    for (const dc of t.datacenters) {
      agents.set(dc.name, await rt.spawnAgent(dc.name, (m) => intervals.push(m)));
    }
    loadStart = wallNow() + 500;
    const sc = t.scenario;
    for (const dc of t.datacenters) {
      const rate = t.workload.ratePerDc.get(dc.name) ?? 0;
      if (rate <= 0) continue;
      agents.get(dc.name)?.start({
        dc: dc.name,
        endpoints: dc.nodes.map((n) => ({ node: n.id, ...rt.clientAddress(n.id) })),
        rate,
        size: t.workload.size,
        arrival: t.workload.arrival,
        seed: o.seed + dc.nodes[0]!.sid,
        durationMs: sc.durationMs,
        requestTimeoutMs: 2_000,
        writeDeadlineMs: 15_000,
        clientIdPrefix: `run${o.seed}`,
        pathPrefix: PATH_PREFIX,
        ...(t.workload.keys !== undefined ? { keys: t.workload.keys } : {}),
        protocol: target.protocol,
        phase: 'warmup',
        startAtMs: loadStart,
      });
    }
    let phaseNow = 'warmup';
    const toAgents = (name: string, atMs: number): void => {
      phaseNow = name;
      for (const a of agents.values()) a.phase(name, atMs);
      note('phase', { phase: name, at: atMs });
    };
    toAgents('before', loadStart + sc.warmupMs);
    await sleepUntil(loadStart);
    // The self-check covers the load and nothing else: the harness itself (with the relay thread),
    // the runtime's nodes and agents, and the machine as a whole.
    sampler = new CpuSampler(
      { harness: () => [{ pid: process.pid, label: 'harness' }], ...rt.cpuGroups() },
      () => rt.shaping.cpuMs(),
    );
    await sampler.start(loadStart);
    resourceSampler = new ResourceSampler(
      { harness: () => [{ pid: process.pid, label: 'harness' }], ...rt.cpuGroups() },
      RESOURCE_EVERY_MS,
    );
    await resourceSampler.start();
    progress('load', { leader: initial });
    // While the load runs: once a second, the last second's writes/s and errors, and the leader.
    ticker = setInterval(() => {
      const last = Math.max(-1, ...intervals.map((m) => m.index));
      const lastSecond = intervals.filter((m) => m.index === last);
      progress('load', {
        rate: lastSecond.reduce((n, m) => n + m.acked, 0),
        errors: intervals.reduce((n, m) => n + m.failed, 0),
        leader: currentLeader(rt) ?? 'electing',
      });
    }, 1000);

    /** The election after the fault that took the leader out, until it is done. */
    let electing: Promise<void> | undefined;
    for (const f of [...sc.faults].sort((a, b) => a.atMs - b.atMs)) {
      await sleepUntil(loadStart + f.atMs);
      // A fault aimed at "the leader" needs the one elected after the last leader was taken out;
      // any other goes ahead (restarting the members that election needs to reach a quorum).
      if (electing && (f.target === LEADER || f.datacenters?.includes(LEADER) === true)) await electing;
      progress('load', { leader: currentLeader(rt) ?? '?' });
      const leaderBefore = currentLeader(rt);
      const onNode = f.action !== 'partition' && f.action !== 'heal' && f.action !== 'link';
      // "leader" in a partition is the leader's data center at this moment.
      const dcs = f.datacenters?.map((d) =>
        d === LEADER && f.action === 'partition' && leaderBefore !== undefined
          ? t.node(leaderBefore).datacenter
          : d,
      );
      if (dcs?.includes(LEADER) && f.action === 'partition')
        throw new Error(`no serving leader whose data center to partition at ${f.atMs / 1000} s`);
      const target = !onNode
        ? f.action === 'partition'
          ? dcs!.join(',')
          : f.target
        : f.target === LEADER
          ? leaderBefore
          : f.target === KILLED
            ? lastDown
            : f.target;
      if (target === undefined)
        throw new Error(
          f.target === KILLED
            ? `nothing was killed or paused before the ${f.action} of "${KILLED}" at ${f.atMs / 1000} s`
            : `no serving leader to ${f.action} at ${f.atMs / 1000} s`,
        );
      const cutOff =
        f.action === 'partition'
          ? t.nodes.filter((n) => dcs?.includes(n.datacenter)).map((n) => n.id)
          : f.action === 'isolate'
            ? [target]
            : [];
      // The first fault that takes the serving leader out (killed, paused, cut off) is the one the
      // recovery phases are measured from.
      const takesLeaderOut =
        leaderBefore !== undefined &&
        (((f.action === 'kill' || f.action === 'pause') && target === leaderBefore) ||
          cutOff.includes(leaderBefore));
      const deposes = killAt === null && takesLeaderOut;
      const at = wallNow();
      if (deposes) toAgents(FAULT_PHASE, at);
      // Any other fault ends the steady state the model describes (and "before" with it).
      else if (killAt === null && phaseNow === 'before') toAgents(DEGRADED_PHASE, at);
      let when = at;
      if (f.action === 'kill') when = await rt.kill(target);
      else if (f.action === 'restart') await rt.restart(target);
      else if (f.action === 'pause') rt.pause(target);
      else if (f.action === 'resume') rt.resume(target);
      if (f.action === 'kill' || f.action === 'pause') lastDown = target;
      else if (f.action === 'restart' || f.action === 'resume') {
        // Not the last one down (two were killed, the first restarts): nothing more to do here.
        if (target === lastDown) lastDown = undefined;
      } else if (f.action === 'partition' || f.action === 'isolate') {
        const rest = t.nodes.map((n) => n.id).filter((id) => !cutOff.includes(id));
        await cutLinks(rt, cutOff, rest, true, f.action);
        cuts.push({ a: cutOff, b: rest });
      } else if (f.action === 'heal') {
        for (const c of cuts.splice(0)) await cutLinks(rt, c.a, c.b, false, 'heal');
      } else {
        const [a, b] = f.datacenters as [string, string];
        if (!(await rt.shaping.setRtt(a, b, f.rttMs as number)))
          throw new Error(`the ${rt.shaping.kind} shaping cannot change a link's delay during a run`);
      }
      note('fault', {
        action: f.action,
        target,
        at,
        ...(cutOff.length > 0 ? { cutOff } : {}),
        ...(f.rttMs !== undefined ? { rttMs: f.rttMs } : {}),
      });
      const mark: FaultMark = {
        atS: (at - loadStart) / 1000,
        action: f.action,
        node: f.action === 'link' ? `${target} rtt ${f.rttMs} ms` : target,
      };
      faultsDone.push(mark);
      if (takesLeaderOut) depositions.push({ at: when, mark, leader: leaderBefore });
      if (!takesLeaderOut && leaderBefore !== undefined && f.action === 'link') {
        // A link that changes under the leader may make it resign (or lose its quorum) some
        // seconds later: the first election that follows, before the next fault, is this fault's.
        const nextAt = sc.faults.find((g) => g.atMs > f.atMs)?.atMs ?? sc.durationMs;
        const fault = mark;
        const left = (): number => Math.max(0, loadStart + nextAt - wallNow());
        watchers.push(
          rt
            .waitFor(
              (e) => e.node === leaderBefore && e.t >= at && (e.ev === 'resigned' || e.ev === 'stepped-down'),
              left(),
            )
            .then((gone) => {
              depositions.push({ at, mark: fault, leader: leaderBefore });
              // The clients' gap starts when the leader stops serving.
              if (killAt === null) toAgents(FAULT_PHASE, gone.t);
              return rt.waitFor(
                (e) => e.ev === 'elected' && e.node === e.leader && e.t >= at && e.node !== leaderBefore,
                left(),
              );
            })
            .then((elected) => {
              if (killAt !== null) return;
              killed = leaderBefore;
              killAt = at;
              causeScheduledAt = loadStart + f.atMs;
              cause = fault;
              progress('recovering', { leader: elected.node });
              toAgents('after', elected.t + sc.settleMs);
            })
            .catch(() => undefined),
        );
      }
      if (deposes) {
        killed = leaderBefore;
        killAt = when;
        causeScheduledAt = loadStart + f.atMs;
        cause = mark;
        const since = killAt;
        const gone = killed;
        electing = rt
          .waitFor(
            (e) => e.ev === 'elected' && e.node === e.leader && e.t >= since && e.node !== gone,
            30_000,
          )
          .then((elected) => {
            progress('recovering', { leader: elected.node });
            toAgents('after', elected.t + sc.settleMs);
          });
        // Awaited below (and before any later fault aimed at the leader); this only keeps a
        // rejection meanwhile from counting as unhandled.
        electing.catch(() => undefined);
      }
    }
    if (electing) await electing;
    await Promise.all(watchers);
    // The final read needs every live member reachable: what is still cut is restored first.
    for (const c of cuts.splice(0)) await cutLinks(rt, c.a, c.b, false, 'heal');
    progress('load', { leader: currentLeader(rt) ?? '?' });
    await sleepUntil(loadStart + sc.durationMs);
    await sampler.stop();
    resources = await resourceSampler.stop();
    clearInterval(ticker);
    progress('draining');
    for (const a of agents.values()) a.stop();
    // Every agent's done, whatever became of the others: one that is lost fails the run, but what
    // the rest measured (and their acknowledged writes, checked below) is kept.
    const drained = await drainAgents(agents, (done) => withTimeout(done, 30_000, 'the load agent'));
    for (const [dc, d] of drained.dones) dones.set(dc, d);
    for (const [dc, why] of drained.lost) {
      lostAgents.set(dc, why);
      errors.push(`data center ${dc}: ${why}`);
      note('agent-lost', { dc, reason: why });
    }
    // Per write: every write sent during the load, acknowledged by now (some after the window).
    cpu = sampler.report([...dones.values()].reduce((n, d) => n + d.totals.acked, 0));

    progress('checking writes');
    const leaderNow = currentLeader(rt);
    if (leaderNow === undefined)
      throw new Error('no serving leader at the end of the run for the final read');
    const acked = [...dones.values()].flatMap((d) =>
      d.acked.map(([path, epoch, counter]) => ({ path, zxid: { epoch, counter } })),
    );
    const check = await target.checkAckedWrites({
      leader: rt.clientAddress(leaderNow),
      nodes: t.nodes
        .filter((n) => rt.isRunning(n.id))
        .map((n) => ({ id: n.id, address: rt.clientAddress(n.id) })),
      acked,
      runId: `run${o.seed}`,
    });
    lostList = check.lost;

    // A target whose members trace writes gets its floor from them (report/traced-floor.ts). Else
    // after the load, so that the calibration's delay-free round trips can never reach the RTTs
    // that a measured oracle elects by.
    if (!target.tracesWrites) {
      progress('calibrating the node floor', { leader: leaderNow });
      floor = await measureFloor(rt, t, leaderNow, `run${o.seed}-floor`);
    }
  } catch (err) {
    if (err instanceof RunAborted) throw err;
    errors.push((err as Error).message);
  } finally {
    clearInterval(ticker);
    // A run that failed during the load still says how busy the machine was until then.
    if (sampler && !cpu.sampled)
      cpu = await sampler.stop(intervals.reduce((n, m) => n + m.acked, 0)).catch(() => cpu);
    if (resourceSampler && !resources.sampled)
      resources = await resourceSampler.stop().catch(() => resources);
    await Promise.allSettled([...agents.values()].map((a) => a.kill()));
  }

  const nodeEvents = rt.events;
  const result = buildResult({
    o,
    startedAt,
    errors,
    initial,
    killed,
    killAt,
    causeScheduledAt,
    cause,
    links,
    dones,
    intervals,
    lostList,
    lostAgents,
    nodeEvents,
    loadStart,
    faults: faultsDone,
    floor,
    cpu,
    resources,
    depositions: [...depositions].sort((a, b) => a.at - b.at),
    preloaded,
  });
  const events = [...nodeEvents, ...harnessEvents].sort((a, b) => (a.t as number) - (b.t as number));
  return {
    result,
    intervals: intervals.map((m) => ({
      tag: m.dc,
      startMs: m.startMs,
      endMs: m.endMs,
      histogramBase64: m.histogram,
      maxMs: maxOf(m.histogram) / 1000,
    })),
    events,
  };
}

/**
 * The node floor (see measure/node-floor.ts) with every delay between data centers taken out for
 * 3 s and put back after, whatever happens. A shaping that cannot change its delays during a run
 * gives no floor, and says why; so does a calibration that fails (the run itself stands).
 */
async function measureFloor(rt: Runtime, t: Topology, leader: NodeId, clientId: string): Promise<NodeFloor> {
  if (!(await rt.shaping.change('zero')))
    return unmeasuredFloor(`the ${rt.shaping.kind} shaping cannot take its delays out during a run`);
  try {
    await rt.target.prepareWrites(rt.clientAddress(leader), FLOOR_PREFIX);
    return await calibrateFloor({
      connect: rt.target.connect,
      leader,
      nodes: t.nodes.filter((n) => rt.isRunning(n.id)).map((n) => ({ id: n.id, ...rt.clientAddress(n.id) })),
      rate: t.workload.rate,
      size: t.workload.size,
      durationMs: 3_000,
      clientId,
    });
  } catch (err) {
    return unmeasuredFloor(`the calibration failed: ${(err as Error).message}`);
  } finally {
    await rt.shaping.change('topology');
  }
}

/** The leader serving now: the latest `serving` event of a leader whose process still runs. */
/** Cuts or restores the links between two sets of members, or says why this shaping cannot. */
async function cutLinks(rt: Runtime, a: NodeId[], b: NodeId[], cut: boolean, what: string): Promise<void> {
  if (!(await rt.shaping.cut(a, b, cut)))
    throw new Error(`the ${rt.shaping.kind} shaping cannot cut links (${what}); use --shaping relay`);
}

function currentLeader(rt: Runtime): NodeId | undefined {
  const ev = rt.events;
  for (let i = ev.length - 1; i >= 0; i--) {
    const e = ev[i]!;
    if (e.ev === 'serving' && e.leader === undefined && rt.isRunning(e.node)) return e.node;
  }
  return undefined;
}

function buildResult(x: {
  o: RunScenarioOptions;
  startedAt: string;
  errors: string[];
  initial: NodeId | null;
  /** The leader the cause took out, and when (the recovery's zero). */
  killed: NodeId | null;
  killAt: number | null;
  causeScheduledAt: number | null;
  cause: FaultMark | null;
  links: Map<string, Map<string, number>>;
  dones: Map<string, DoneMessage>;
  intervals: IntervalMessage[];
  lostList: string[];
  /** Data center → why its agent's data was lost. */
  lostAgents: ReadonlyMap<string, string>;
  nodeEvents: readonly ClusterEvent[];
  loadStart: number;
  faults: FaultMark[];
  floor: NodeFloor;
  cpu: CpuReport;
  resources: ResourceReport;
  depositions: readonly Deposition[];
  preloaded: PreloadInfo | null;
}): RunResult {
  const t = x.o.topology;
  const ev = x.nodeEvents;
  const after = (pred: (e: ClusterEvent) => boolean): ClusterEvent | undefined =>
    x.killAt === null ? undefined : ev.find((e) => e.t >= (x.killAt as number) && pred(e));
  const electedEv = after((e) => e.ev === 'elected' && e.node === e.leader && e.node !== x.killed);
  const elected = electedEv?.node ?? null;
  const rel = (e: ClusterEvent | undefined): number | null =>
    e && x.killAt !== null ? e.t - x.killAt : null;
  const detect = after((e) => e.ev === 'leader-lost');
  const serving = after((e) => e.ev === 'serving' && e.leader === undefined && e.node === elected);
  // ZooKeeper names the epoch only once its leader has a quorum: take it from `serving` then.
  const epoch =
    (electedEv?.ev === 'elected' ? electedEv.epoch : undefined) ??
    (serving?.ev === 'serving' ? serving.epoch : undefined) ??
    null;
  const electedMs = rel(electedEv);
  const firstCommitMs = firstCommitAfterKill(x, elected, epoch);

  const latency: Record<string, RunResult['latency'][string]> = {};
  const dones = [...x.dones.values()];
  // The paper's model alone (network only); the floor beside it, never folded in.
  // A killed leader stays down; one cut off is back once the cut is restored.
  const dead = x.cause?.action === 'kill' ? x.killed : null;
  const columns = modelColumns(t, { initial: x.initial, elected, killed: dead }, x.floor);
  const model = columns.model;
  for (const dc of t.datacenters) {
    const d = x.dones.get(dc.name);
    const window = (name: string): LatencyStats | null => {
      const p = d?.phases[name];
      return p ? stats(p.corrected, p.uncorrected) : null;
    };
    const degraded = window(DEGRADED_PHASE);
    latency[dc.name] = {
      warmup: window('warmup'),
      before: window('before'),
      ...(degraded ? { degraded } : {}),
      during: window(FAULT_PHASE),
      after: window('after'),
      attempted: d?.totals.attempted ?? 0,
      failed: d?.totals.failed ?? 0,
      lost: x.lostAgents.get(dc.name) ?? (d ? null : 'the load agent reported nothing'),
    };
  }
  const anatomy = anatomyOf(t, dones, x.nodeEvents, x.o.runtime.shaping.kind === 'none');
  const floor = x.o.runtime.target.tracesWrites
    ? tracedFloor(
        anatomy,
        t.datacenters.map((d) => d.name),
      )
    : columns.floor;
  const links: Record<string, Record<string, RunResult['links'][string][string]>> = {};
  for (const a of t.datacenters)
    for (const b of t.datacenters) {
      const m = x.links.get(a.name)?.get(b.name);
      (links[a.name] ??= {})[b.name] = {
        configuredRttMs: t.rttMs(a.name, b.name),
        measuredRttMs: m === undefined || Number.isNaN(m) ? null : m,
      };
    }
  const sum = (f: (d: DoneMessage) => number): number => dones.reduce((s, d) => s + f(d), 0);
  const shaping = x.o.runtime.shaping;
  const j = t.shaping.jitter;
  const checked: Omit<RunResult, 'selfCheck' | 'thresholds' | 'verdict'> = {
    schema: RESULT_SCHEMA_ID,
    errors: x.errors,
    target: x.o.runtime.target.name,
    runtime: x.o.runtime.name,
    shaping: {
      mode: shaping.kind,
      reason: shaping.reason,
      jitter: j.kind === 'fraction' ? `${j.fraction * 100}%` : `${j.ms}ms`,
      distribution: t.shaping.distribution,
    },
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
    },
    scenario: {
      durationMs: t.scenario.durationMs,
      warmupMs: t.scenario.warmupMs,
      settleMs: t.scenario.settleMs,
    },
    seed: x.o.seed,
    startedAt: x.startedAt,
    finishedAt: new Date().toISOString(),
    leaders: {
      initial: x.initial,
      killed: dead,
      cause: x.cause && x.killed ? { ...x.cause, leader: x.killed } : null,
      elected,
      // ZooKeeper elects by its own rule (FastLeaderElection: the newest history, then the highest id).
      oracle: x.o.runtime.target.hasOracles ? t.cluster.oracle : 'zookeeper-fle',
      epoch,
      scores: (electedEv?.ev === 'elected' ? electedEv.proposals : undefined) ?? {},
      resignations: ev.filter(isEvent('resigned')).map((e) => ({
        atS: (e.t - x.loadStart) / 1000,
        leader: e.node,
        successor: e.successor,
        own: [...e.own],
        successorScore: [...e.successorScore],
      })),
    },
    recovery: {
      explain: explainRecovery(ev, x.killAt, elected),
      detectMs: rel(detect),
      electedMs,
      servingMs: rel(serving),
      firstCommitMs,
      paperRecoveryMs: electedMs !== null && firstCommitMs !== null ? firstCommitMs - electedMs : null,
      faultAtS: x.killAt === null ? null : (x.killAt - x.loadStart) / 1000,
      scheduledAtS: x.causeScheduledAt === null ? null : (x.causeScheduledAt - x.loadStart) / 1000,
      perDc: clientRecovery(
        t.datacenters.map((d) => d.name),
        x.dones,
        x.killAt,
        epoch,
      ),
    },
    latency,
    model,
    floor,
    cpu: x.cpu,
    anatomy,
    elections: summariseElections(
      ev,
      x.depositions,
      x.loadStart,
      x.loadStart ? x.loadStart + t.scenario.durationMs : 0,
    ),
    resources: x.resources,
    preload: x.preloaded,
    snapshots: snapshotTransfers(ev, x.loadStart),
    // Only the POLE node watches its own event loop; a JVM's pauses are not seen this way.
    ...(x.o.runtime.target.name === 'pole'
      ? { loopStalls: loopStalls(ev, x.loadStart), loopStallMs: LOOP_STALL_MS }
      : {}),
    links,
    writes: {
      attempted: sum((d) => d.totals.attempted),
      acked: sum((d) => d.totals.acked),
      failed: sum((d) => d.totals.failed),
      lost: x.lostList.length,
      ...(x.lostList.length > 0 ? { lostList: x.lostList.slice(0, 100) } : {}),
    },
    load: {
      targetRate: t.workload.rate,
      achievedRate: dones.length > 0 ? sum((d) => d.sentRate) : null,
      latenessP99Ms: dones.length > 0 ? Math.max(...dones.map((d) => d.lateness.p99)) : null,
    },
    timeline: timeline(x.intervals, x.loadStart, x.faults, t.scenario.durationMs),
    environment: collectEnvironment(x.o.version),
  };
  // The topology's own thresholds (a soak's), checked when it was loaded, then the command line's.
  const all = [...parseThresholds(t.scenario.thresholds, 'scenario.thresholds'), ...x.o.thresholds];
  const partial = { ...checked, selfCheck: selfCheck(checked) };
  const thresholds = evaluateThresholds(all, partial);
  return { ...partial, thresholds, verdict: verdictFor(x.errors.length > 0, thresholds) };
}

/**
 * The new leader's first commit, ms after the kill: its own `first-commit` event where the target
 * has one (the POLE node), else the first acknowledgement of a write of the new epoch that any
 * load agent saw (ZooKeeper: the clients' view, so it includes the reply's way back).
 */
function firstCommitAfterKill(
  x: { killAt: number | null; nodeEvents: readonly ClusterEvent[]; dones: Map<string, DoneMessage> },
  elected: NodeId | null,
  epoch: number | null,
): number | null {
  if (x.killAt === null || elected === null) return null;
  const killAt = x.killAt;
  const ev = x.nodeEvents.find((e) => e.t >= killAt && e.ev === 'first-commit' && e.node === elected);
  if (ev) return ev.t - killAt;
  if (epoch === null) return null;
  const acks = [...x.dones.values()].flatMap((d) => {
    const at = d.firstAckByEpoch[String(epoch)];
    return at !== undefined && at >= killAt ? [at] : [];
  });
  return acks.length > 0 ? Math.min(...acks) - killAt : null;
}

/** The latency anatomy of the traced writes (report/latency-anatomy.ts). */
function anatomyOf(
  t: Topology,
  dones: readonly DoneMessage[],
  events: readonly ClusterEvent[],
  unshaped: boolean,
): LatencyAnatomy {
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
      oneWayMs: (a, b) => (unshaped ? 0 : t.oneWayDelayMs(a, b)),
      members: t.nodes.length,
    },
    TRACE_EVERY,
  );
}

function stats(s: LatencySummary, fromSend: LatencySummary): LatencyStats {
  if (s.count === 0)
    return { count: 0, mean: null, sentMean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  return {
    count: s.count,
    mean: s.mean,
    sentMean: fromSend.mean,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    p999: s.p999,
    max: s.max,
  };
}

/** Per second of load, all data centers merged (report/timeline-points.ts). */
function timeline(
  intervals: IntervalMessage[],
  loadStart: number,
  faults: FaultMark[],
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

function maxOf(base64: string): number {
  const h = hdr.decodeFromCompressedBase64(base64);
  const max = h.maxValue;
  h.destroy();
  return max;
}

function abortable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = (): RunAborted =>
      signal?.reason instanceof RunAborted ? signal.reason : new RunAborted('interrupted');
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export { RunAborted };
