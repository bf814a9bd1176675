// src/bench/: the measurements of `pole-bench bench …`, one file each (node, state, heartbeat, relay,
// load, cost, docker): how fast one part of the node or the harness is on this machine, or what it costs.
//
// `pole-bench bench node`: a target's own speed on this machine. Starts N real members on loopback
// (POLE nodes, or ZooKeeper servers with --target zookeeper, the same measurement side by side);
// measures acknowledged-write throughput and latency with many writes in flight; then SIGKILLs
// the serving leader K times (restarting it after each recovery) and times each failover from
// the members' events; finally reads every write back from every live member to count lost ones.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import type { NodeId } from '../vocabulary/names.js';
import { compareZxid, type Zxid } from '../vocabulary/zxid.js';
import { EndpointPool, writeWithRetry } from '../load/retrying-writer.js';
import { ProcessCluster } from './process-cluster.js';
import { processResources } from '../measure/resource-sampler.js';
import { CpuSampler, type CpuProcess, type CpuReport } from '../measure/cpu-sampler.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import { parseTopology } from '../topology/topology.js';
import { targetNamed } from '../targets/registry.js';
import { noShaper } from '../shaping/no-shaper.js';
import type { Target } from '../targets/target.js';
import type { ProcessMembers } from '../runtime/process/member-processes.js';
import { startPlannedProcesses } from '../runtime/process/planned-processes.js';
import { lostKeyCount, type TargetName } from '../vocabulary/names.js';
import { spread } from '../util/spread.js';
import { checkDetectAgainstDeath, type DeathCheck } from './death-check.js';
import { wallNowMs } from '../util/wall-clock.js';

export interface NodeBenchOptions {
  /** The system under test (default pole). */
  readonly target?: TargetName;
  /** Aborting it (Ctrl-C, SIGTERM) stops the members at once: the bench fails and cleans up. */
  readonly signal?: AbortSignal;
  readonly nodes: number;
  /** Seconds of the throughput phase. */
  readonly durationS: number;
  readonly kills: number;
  readonly size: number;
  /** Writes in flight per connection during the throughput phase. */
  readonly depth: number;
  readonly connectionsPerNode: number;
  readonly fsync: boolean;
  /** POLE only: a node's local snapshot every this many txns, which bounds the log it holds in memory. */
  readonly snapshotEvery?: number;
  readonly timers: {
    tickMs: number;
    syncLimit: number;
    initLimit: number;
    electionTimeoutMs: number;
    retryBaseMs: number;
  };
  readonly log?: (line: string) => void;
}

// Failover is detected by the broken connection, so a roomy syncLimit (500 ms) costs nothing there
// and keeps a busy 2-core machine (six processes) from mistaking a slow event loop for a dead leader.
export const LAN_TIMERS = {
  tickMs: 50,
  syncLimit: 10,
  initLimit: 20,
  electionTimeoutMs: 40,
  retryBaseMs: 40,
};

export interface Spread {
  readonly median: number;
  readonly max: number;
}

/** What the throughput phase's measured window cost, from /proc's clock ticks (cpu-sampler.ts). */
export interface ThroughputCpu {
  readonly windowS: number;
  /** Share of all cores busy, % (/proc/stat). */
  readonly machineBusyPct: number | null;
  /** The members together and the harness (the load's clients), % of one core and µs per write. */
  readonly nodesPctOfCore: number;
  readonly nodesUsPerWrite: number | null;
  readonly harnessPctOfCore: number;
  readonly harnessUsPerWrite: number | null;
  /** Per member, % of one core: the leader's share against the followers'. */
  readonly perNode: Readonly<Record<string, number>>;
}

export interface NodeBenchResult {
  readonly target: TargetName;
  readonly throughput: {
    readonly writesPerSec: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    /** Absent from results written before it was measured. */
    readonly cpu?: ThroughputCpu;
  };
  readonly failover: {
    readonly kills: number;
    readonly detectMs: Spread;
    readonly electedMs: Spread;
    readonly servingMs: Spread;
    /** The leader's own first-commit event (the POLE node has one; ZooKeeper logs none). */
    readonly firstCommitMs: Spread | null;
    /** The first write of the new epoch acknowledged to a client: the same measure for every target. */
    readonly firstAckMs: Spread;
    /** The killed process reaped by the harness (details.failovers' goneMs). */
    readonly goneMs: Spread;
    /** Each detection against the reaping, the second clock on the death (death-check.ts). */
    readonly detectCheck: DeathCheck;
  };
  readonly lostWrites: number;
  readonly details: {
    readonly nodes: number;
    readonly size: number;
    readonly durationS: number;
    readonly inFlight: number;
    readonly fsync: boolean;
    readonly timers: NodeBenchOptions['timers'];
    readonly acked: number;
    readonly checkedPaths: number;
    readonly failovers: ReadonlyArray<{
      killed: NodeId;
      elected: NodeId;
      detectMs: number;
      electedMs: number;
      servingMs: number;
      firstCommitMs: number | null;
      firstAckMs: number;
      /**
       * When the harness saw the killed process reaped, ms from the kill: Linux frees a dying
       * process's memory before it closes its sockets, so no member can detect the death before
       * about this (scripts/kill-close.js). The check on detectMs, by another clock path.
       */
      goneMs: number;
      /** The killed leader's resident memory just before the kill, MiB (null where unread). */
      rssMiB: number | null;
    }>;
  };
}

/** The last acknowledged write of every path: what every node must hold at the end (or newer). */
class AckBook {
  readonly last = new Map<string, Zxid>();
  acked = 0;
  record(path: string, z: Zxid): void {
    this.acked += 1;
    const prev = this.last.get(path);
    if (!prev || compareZxid(z, prev) > 0) this.last.set(path, z);
  }
}

/** The members under test and what the bench needs of them. */
interface BenchCluster {
  readonly target: Target;
  readonly ids: NodeId[];
  readonly members: ProcessMembers;
}

/** N members in one data center, no delay: POLE nodes by their own cluster, ZooKeeper by its target. */
async function startBenchCluster(o: NodeBenchOptions): Promise<BenchCluster> {
  const target = targetNamed(o.target ?? 'pole');
  const ids = Array.from({ length: o.nodes }, (_, i) => `p${i + 1}`);
  if (target.name === 'pole') {
    const cluster = await ProcessCluster.start({
      nodes: o.nodes,
      fsync: o.fsync,
      timers: o.timers,
      ...(o.snapshotEvery !== undefined ? { snapshotEvery: o.snapshotEvery } : {}),
    });
    return { target, ids, members: cluster };
  }
  const t = o.timers;
  const topology = parseTopology(
    'bench-lan.yaml',
    [
      `datacenters: [{ name: lan, nodes: [${ids.join(', ')}] }]`,
      `cluster: { timers: { tickMs: ${t.tickMs}, syncLimit: ${t.syncLimit}, initLimit: ${t.initLimit} } }`,
      'scenario: { duration: 10s }',
    ].join('\n'),
  );
  // One data center: no shaping, every member dialled at its own ports.
  const shape = noShaper(topology, 'one data center');
  return {
    target,
    ids,
    members: await startPlannedProcesses(target, {
      topology,
      seed: 1,
      fsync: o.fsync,
      shape: (members, plan) => shape.install({ members, plan }),
    }),
  };
}

export async function runNodeBench(o: NodeBenchOptions): Promise<NodeBenchResult> {
  const log = o.log ?? (() => undefined);
  const cluster = await startBenchCluster(o);
  const book = new AckBook();
  // Stopping the members makes whatever phase runs fail at once, into the clean-up below.
  const onAbort = (): void => void cluster.members.stop();
  if (o.signal?.aborted) onAbort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await waitAllServing(cluster, 0, 20_000);
    log(`cluster of ${o.nodes} serving`);
    const throughput = await throughputPhase(cluster, o, book);
    log(
      `throughput: ${throughput.writesPerSec.toFixed(0)} writes/s, p50 ${throughput.p50Ms.toFixed(2)} ms, p99 ${throughput.p99Ms.toFixed(2)} ms`,
    );
    if (throughput.cpu) log(cpuLine(throughput.cpu));
    const failovers = await failoverPhase(cluster, o, book, log);
    const lostWrites = await countLost(cluster, book);
    const spread = (f: (x: (typeof failovers)[number]) => number): Spread => summarize(failovers.map(f));
    const commits = failovers.map((f) => f.firstCommitMs).filter((x): x is number => x !== null);
    return {
      target: cluster.target.name,
      throughput,
      failover: {
        kills: failovers.length,
        detectMs: spread((f) => f.detectMs),
        electedMs: spread((f) => f.electedMs),
        servingMs: spread((f) => f.servingMs),
        firstCommitMs: commits.length === failovers.length && commits.length > 0 ? summarize(commits) : null,
        firstAckMs: spread((f) => f.firstAckMs),
        goneMs: spread((f) => f.goneMs),
        detectCheck: checkDetectAgainstDeath(failovers),
      },
      lostWrites,
      details: {
        nodes: o.nodes,
        size: o.size,
        durationS: o.durationS,
        inFlight: o.depth * o.connectionsPerNode * o.nodes,
        fsync: o.fsync,
        timers: o.timers,
        acked: book.acked,
        checkedPaths: book.last.size,
        failovers,
      },
    };
  } catch (err) {
    // Stopped on purpose (Ctrl-C, SIGTERM): nothing to diagnose.
    if (o.signal?.aborted) throw err;
    // Keep the evidence: every node event of the failed run, for diagnosis.
    const file = join(tmpdir(), `pole-bench-node-bench-failure-${Date.now()}.jsonl`);
    await writeFile(file, cluster.members.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    throw new Error(`${(err as Error).message} (node events of this run: ${file})`);
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    await cluster.members.stop();
  }
}

/** The leader serving now: the latest leader's `serving` event (no `leader` field) of a running member. */
async function servingLeader(
  c: BenchCluster,
  timeoutMs: number,
  since: number,
): Promise<{ leader: NodeId; epoch: number | undefined; event: ClusterEvent }> {
  const m = c.members;
  const e = await m.waitFor(
    (x) => x.ev === 'serving' && x.leader === undefined && m.isRunning(x.node),
    timeoutMs,
    since,
  );
  return { leader: e.node, epoch: e.ev === 'serving' ? e.epoch : undefined, event: e };
}

/** A follower serves its leader (POLE: the same epoch; ZooKeeper logs the leader's name instead). */
function followerServes(
  e: ClusterEvent,
  id: NodeId,
  leader: { leader: NodeId; epoch: number | undefined },
): boolean {
  if (e.node !== id || e.ev !== 'serving') return false;
  return e.epoch !== undefined ? e.epoch === leader.epoch : e.leader === leader.leader;
}

async function waitAllServing(c: BenchCluster, since: number, timeoutMs: number): Promise<void> {
  const leader = await servingLeader(c, timeoutMs, since);
  await Promise.all(
    c.ids
      .filter((id) => id !== leader.leader && c.members.isRunning(id))
      .map((id) => c.members.waitFor((e) => followerServes(e, id, leader), timeoutMs, since)),
  );
}

async function throughputPhase(
  c: BenchCluster,
  o: NodeBenchOptions,
  book: AckBook,
): Promise<NodeBenchResult['throughput']> {
  const endpoints = c.ids.flatMap((id) =>
    Array.from({ length: o.connectionsPerNode }, () => c.members.clientAddress(id)),
  );
  // One directory per connection; each lane of it writes 64 paths over and over.
  // Prepared through any member that takes it: what one member prepares, every member has.
  await Promise.all(endpoints.map((_ep, conn) => prepareOnAny(c, `/bench/${conn}`)));
  const pool = new EndpointPool(endpoints, 5_000, undefined, c.target.connect);
  const hist = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });
  const warmupEnd = Date.now() + 1000;
  const end = warmupEnd + o.durationS * 1000;
  let measured = 0;
  let measureStart = 0;
  // The members' and the harness's CPU over the measured window: a throughput with no cost beside
  // it cannot tell a faster node from a machine that happened to be quieter.
  const members = (): CpuProcess[] =>
    c.ids.flatMap((id) => {
      const pid = c.members.pid(id);
      return pid === undefined ? [] : [{ pid, label: id }];
    });
  const sampler = new CpuSampler({ nodes: members, harness: () => [{ pid: process.pid, label: 'harness' }] });
  let samplerStarted: Promise<void> | undefined;
  const startSampling = setTimeout(() => {
    samplerStarted = sampler.start();
  }, warmupEnd - Date.now());
  const worker = async (conn: number, lane: number): Promise<void> => {
    const data = randomBytes(o.size);
    const clientId = `bench-${conn}-${lane}`;
    for (let seq = 1; Date.now() < end; seq++) {
      const path = `/bench/${conn}/${lane * 64 + (seq % 64)}`;
      const start = performance.now();
      const r = await writeWithRetry(
        pool,
        conn,
        path,
        data,
        { clientId, requestId: seq },
        Date.now() + 10_000,
      );
      book.record(path, r.zxid);
      const now = Date.now();
      if (now >= warmupEnd && now < end) {
        if (measureStart === 0) measureStart = now;
        measured += 1;
        hist.recordValue(Math.max(1, Math.round((performance.now() - start) * 1000)));
      }
    }
  };
  let cpu: ThroughputCpu | undefined;
  let stopTimer: NodeJS.Timeout | undefined;
  try {
    // The window ends with the last write sent, before the workers drain what is in flight.
    const stopSampling = new Promise<void>(
      (resolve) => (stopTimer = setTimeout(resolve, end - Date.now())),
    ).then(async () => {
      await samplerStarted;
      // Writes acknowledged so far are the window's: `measured` counts none after `end`.
      if (samplerStarted) cpu = throughputCpu(await sampler.stop(measured));
    });
    await Promise.all([
      ...endpoints.flatMap((_, conn) => Array.from({ length: o.depth }, (_, lane) => worker(conn, lane))),
      stopSampling,
    ]);
  } finally {
    clearTimeout(startSampling);
    // A phase that failed before its window ended: the sampler stops with it.
    if (cpu === undefined && samplerStarted) {
      clearTimeout(stopTimer);
      await samplerStarted.then(() => sampler.stop()).catch(() => undefined);
    }
    await pool.close();
  }
  const seconds = (end - Math.max(measureStart, warmupEnd)) / 1000;
  const result = {
    writesPerSec: round(measured / seconds, 0),
    p50Ms: round(hist.getValueAtPercentile(50) / 1000, 3),
    p99Ms: round(hist.getValueAtPercentile(99) / 1000, 3),
    ...(cpu ? { cpu } : {}),
  };
  hist.destroy();
  return result;
}

function cpuLine(c: ThroughputCpu): string {
  const us = (x: number | null): string => (x === null ? '-' : `${x.toFixed(0)} µs`);
  const nodes = Object.entries(c.perNode)
    .map(([id, pct]) => `${id} ${pct.toFixed(0)} %`)
    .join(', ');
  return (
    `CPU over ${c.windowS.toFixed(1)} s: the members ${us(c.nodesUsPerWrite)} per write (${nodes} of a core), ` +
    `the harness's clients ${us(c.harnessUsPerWrite)}; the machine ${c.machineBusyPct ?? '-'} % busy`
  );
}

/** The sampler's report, as the bench prints it. */
function throughputCpu(r: CpuReport): ThroughputCpu {
  const perNode: Record<string, number> = {};
  for (const p of r.processes) if (p.group === 'nodes') perNode[p.label] = round(p.pctOfCore, 1);
  const us = (x: number | null | undefined): number | null => (x == null ? null : round(x, 1));
  return {
    windowS: round(r.windowS, 2),
    machineBusyPct: r.machineBusyPct === null ? null : round(r.machineBusyPct, 1),
    nodesPctOfCore: round(r.groups['nodes']?.pctOfCore ?? 0, 1),
    nodesUsPerWrite: us(r.groups['nodes']?.usPerWrite),
    harnessPctOfCore: round(r.groups['harness']?.pctOfCore ?? 0, 1),
    harnessUsPerWrite: us(r.groups['harness']?.usPerWrite),
    perNode,
  };
}

type Failover = NodeBenchResult['details']['failovers'][number];

/** How long the members may take, between them, to accept the failover phase's preparation. */
const PREPARE_MS = 20_000;

/**
 * Prepares `dir` on the first member that takes it. After the throughput phase a ZooKeeper
 * follower may be re-syncing with its leader (seen on a loaded 2-core VM: one lost its leader
 * every 1-2 s under the bench), and closes new connections until it serves again.
 */
async function prepareOnAny(c: BenchCluster, dir: string): Promise<void> {
  const until = Date.now() + PREPARE_MS;
  let last: unknown;
  for (let i = 0; Date.now() < until; i++) {
    const id = c.ids[i % c.ids.length]!;
    if (!c.members.isRunning(id)) continue;
    try {
      await c.target.prepareWrites(c.members.clientAddress(id), dir);
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`no member took the preparation of ${dir} within ${PREPARE_MS} ms: ${String(last)}`);
}

async function failoverPhase(
  c: BenchCluster,
  o: NodeBenchOptions,
  book: AckBook,
  log: (l: string) => void,
): Promise<Failover[]> {
  const out: Failover[] = [];
  const m = c.members;
  await prepareOnAny(c, '/failover');
  // A steady trickle of writes from every member, so the first commit of each new epoch is real
  // traffic; the first acknowledgement of each epoch is noted as it comes.
  const pool = new EndpointPool(
    c.ids.map((id) => m.clientAddress(id)),
    2_000,
    undefined,
    c.target.connect,
  );
  const firstAck = new Map<number, number>();
  let stop = false;
  const trickle = async (lane: number): Promise<void> => {
    const data = randomBytes(o.size);
    for (let seq = 1; !stop; seq++) {
      const path = `/failover/${lane * 64 + (seq % 64)}`;
      try {
        const r = await writeWithRetry(
          pool,
          lane,
          path,
          data,
          { clientId: `failover-${lane}`, requestId: seq },
          Date.now() + 10_000,
          2,
        );
        if (!firstAck.has(r.zxid.epoch)) firstAck.set(r.zxid.epoch, wallNowMs());
        book.record(path, r.zxid);
      } catch {
        // Unacknowledged: not counted, nothing to check.
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const lanes = Array.from({ length: c.ids.length * 2 }, (_, i) => trickle(i));
  try {
    for (let k = 0; k < o.kills; k++) {
      const current = await labelled(
        `kill ${k + 1}: a serving leader`,
        servingLeader(c, 10_000, lastServingIndex(c)),
      );
      await new Promise((r) => setTimeout(r, 300));
      const mark = m.events.length;
      const pid = m.pid(current.leader);
      const rss = pid === undefined ? null : await processResources(pid);
      const killedAt = await m.kill(current.leader);
      // kill() resolves once the process is reaped: after its memory is freed and its sockets closed.
      const goneMs = round(wallNowMs() - killedAt, 2);
      const next = await labelled(
        `kill ${k + 1}: a new serving leader after killing ${current.leader}`,
        servingLeader(c, 10_000, mark),
      );
      const leader = next.leader;
      const epoch = next.epoch;
      if (epoch === undefined) throw new Error(`kill ${k + 1}: ${leader} serves with no epoch`);
      const deadline = Date.now() + 10_000;
      while (!firstAck.has(epoch) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const ackAt = firstAck.get(epoch);
      if (ackAt === undefined)
        throw new Error(`kill ${k + 1}: no write of epoch ${epoch} acknowledged in 10 s`);
      const after = m.events.slice(mark);
      const commit = after.find((e) => e.node === leader && e.ev === 'first-commit' && e.epoch === epoch);
      const detect = after.find((e) => e.ev === 'leader-lost');
      const elected = findLast(after, (e) => e.node === leader && e.ev === 'elected' && e.leader === leader);
      if (!detect || !elected) throw new Error('failover events missing (leader-lost / elected)');
      const f: Failover = {
        killed: current.leader,
        elected: leader,
        detectMs: round(detect.t - killedAt, 2),
        electedMs: round(elected.t - killedAt, 2),
        servingMs: round(next.event.t - killedAt, 2),
        firstCommitMs: commit ? round(commit.t - killedAt, 2) : null,
        firstAckMs: round(ackAt - killedAt, 2),
        goneMs,
        rssMiB: rss === null ? null : round(rss.rssMiB, 0),
      };
      out.push(f);
      log(
        `kill ${k + 1}: ${f.killed} → ${f.elected}: detect ${f.detectMs} ms, elected ${f.electedMs} ms, serving ${f.servingMs} ms, ` +
          `first commit ${f.firstCommitMs ?? '-'} ms, first ack ${f.firstAckMs} ms; ` +
          `the killed process (${f.rssMiB ?? '?'} MiB resident) reaped after ${f.goneMs} ms`,
      );
      const restartMark = m.events.length;
      await m.restart(current.leader);
      await labelled(
        `kill ${k + 1}: ${current.leader} serving again after its restart`,
        m.waitFor((e) => e.node === current.leader && e.ev === 'serving', 20_000, restartMark),
      );
    }
  } finally {
    stop = true;
    await Promise.all(lanes);
    await pool.close();
  }
  return out;
}

function lastServingIndex(c: BenchCluster): number {
  const ev = c.members.events;
  for (let i = ev.length - 1; i >= 0; i--) {
    const e = ev[i]!;
    if (e.ev === 'serving' && e.leader === undefined && c.members.isRunning(e.node)) return i;
  }
  return 0;
}

/** Every acknowledged write must be on every live member (the target's own final read). */
async function countLost(c: BenchCluster, book: AckBook): Promise<number> {
  const leader = await servingLeader(c, 10_000, lastServingIndex(c));
  const { lost } = await c.target.checkAckedWrites({
    leader: c.members.clientAddress(leader.leader),
    nodes: c.ids
      .filter((x) => c.members.isRunning(x))
      .map((id) => ({ id, address: c.members.clientAddress(id) })),
    acked: [...book.last].map(([path, zxid]) => ({ path, zxid })),
    runId: `bench-node-${Date.now()}`,
  });
  return lostKeyCount(lost);
}

async function labelled<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
}

function findLast(
  events: readonly ClusterEvent[],
  pred: (e: ClusterEvent) => boolean,
): ClusterEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (pred(events[i]!)) return events[i];
  return undefined;
}

export function summarize(values: readonly number[]): Spread {
  const s = spread(values);
  return { median: round(s.median, 2), max: round(s.max, 2) };
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
