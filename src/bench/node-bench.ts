// `pole-bench bench node`: the node's own speed on this machine. Starts N real node processes on
// loopback; measures acknowledged-write throughput and latency with many writes in flight; then
// SIGKILLs the serving leader K times (restarting it after each recovery) and times each failover
// from the node events; finally reads every path back from every live node to count lost writes.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import type { NodeId } from '../node/core/types.js';
import { compareZxid, type Zxid } from '../node/core/zxid.js';
import { EndpointPool, writeWithRetry } from '../load/retrying-writer.js';
import { ProcessCluster, type ClusterEvent } from '../runtime/process/process-cluster.js';
import { checkAckedWrites } from '../run/checker.js';
import { spread } from '../util/spread.js';

export interface NodeBenchOptions {
  readonly nodes: number;
  /** Seconds of the throughput phase. */
  readonly durationS: number;
  readonly kills: number;
  readonly size: number;
  /** Writes in flight per connection during the throughput phase. */
  readonly depth: number;
  readonly connectionsPerNode: number;
  readonly fsync: boolean;
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

export interface NodeBenchResult {
  readonly throughput: { readonly writesPerSec: number; readonly p50Ms: number; readonly p99Ms: number };
  readonly failover: {
    readonly kills: number;
    readonly detectMs: Spread;
    readonly electedMs: Spread;
    readonly servingMs: Spread;
    readonly firstCommitMs: Spread;
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
      firstCommitMs: number;
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

export async function runNodeBench(o: NodeBenchOptions): Promise<NodeBenchResult> {
  const log = o.log ?? (() => undefined);
  const cluster = await ProcessCluster.start({ nodes: o.nodes, fsync: o.fsync, timers: o.timers });
  const book = new AckBook();
  try {
    await waitAllServing(cluster, 0, 20_000);
    log(`cluster of ${o.nodes} serving`);
    const throughput = await throughputPhase(cluster, o, book);
    log(
      `throughput: ${throughput.writesPerSec.toFixed(0)} writes/s, p50 ${throughput.p50Ms.toFixed(2)} ms, p99 ${throughput.p99Ms.toFixed(2)} ms`,
    );
    const failovers = await failoverPhase(cluster, o, book, log);
    const lostWrites = await countLost(cluster, book);
    const spread = (f: (x: (typeof failovers)[number]) => number): Spread => summarize(failovers.map(f));
    return {
      throughput,
      failover: {
        kills: failovers.length,
        detectMs: spread((f) => f.detectMs),
        electedMs: spread((f) => f.electedMs),
        servingMs: spread((f) => f.servingMs),
        firstCommitMs: spread((f) => f.firstCommitMs),
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
    // Keep the evidence: every node event of the failed run, for diagnosis.
    const file = join(tmpdir(), `pole-bench-node-bench-failure-${Date.now()}.jsonl`);
    await writeFile(file, cluster.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    throw new Error(`${(err as Error).message} (node events of this run: ${file})`);
  } finally {
    await cluster.stop();
  }
}

async function waitAllServing(cluster: ProcessCluster, since: number, timeoutMs: number): Promise<void> {
  const leader = await cluster.waitForServingLeader(timeoutMs, since);
  await Promise.all(
    cluster.ids
      .filter((id) => id !== leader.leader && cluster.isRunning(id))
      .map((id) =>
        cluster.waitFor(
          (e) => e.node === id && e.ev === 'serving' && e.epoch === leader.epoch,
          timeoutMs,
          since,
        ),
      ),
  );
}

async function throughputPhase(
  cluster: ProcessCluster,
  o: NodeBenchOptions,
  book: AckBook,
): Promise<NodeBenchResult['throughput']> {
  const endpoints = cluster.ids.flatMap((id) =>
    Array.from({ length: o.connectionsPerNode }, () => cluster.clientAddress(id)),
  );
  const pool = new EndpointPool(endpoints);
  const hist = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });
  const warmupEnd = Date.now() + 1000;
  const end = warmupEnd + o.durationS * 1000;
  let measured = 0;
  let measureStart = 0;
  const worker = async (conn: number, lane: number): Promise<void> => {
    const data = randomBytes(o.size);
    const clientId = `bench-${conn}-${lane}`;
    for (let seq = 1; Date.now() < end; seq++) {
      const path = `/bench/${conn}/${lane}/${seq % 64}`;
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
  try {
    await Promise.all(
      endpoints.flatMap((_, conn) => Array.from({ length: o.depth }, (_, lane) => worker(conn, lane))),
    );
  } finally {
    await pool.close();
  }
  const seconds = (end - Math.max(measureStart, warmupEnd)) / 1000;
  const result = {
    writesPerSec: round(measured / seconds, 0),
    p50Ms: round(hist.getValueAtPercentile(50) / 1000, 3),
    p99Ms: round(hist.getValueAtPercentile(99) / 1000, 3),
  };
  hist.destroy();
  return result;
}

async function failoverPhase(
  cluster: ProcessCluster,
  o: NodeBenchOptions,
  book: AckBook,
  log: (l: string) => void,
): Promise<NodeBenchResult['details']['failovers'] extends ReadonlyArray<infer F> ? F[] : never> {
  const out: NodeBenchResult['details']['failovers'] extends ReadonlyArray<infer F> ? F[] : never = [];
  // A steady trickle of writes from every node, so the first commit of each new epoch is real traffic.
  const pool = new EndpointPool(
    cluster.ids.map((id) => cluster.clientAddress(id)),
    2_000,
  );
  let stop = false;
  const trickle = async (lane: number): Promise<void> => {
    const data = randomBytes(o.size);
    for (let seq = 1; !stop; seq++) {
      const path = `/failover/${lane}/${seq % 64}`;
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
        book.record(path, r.zxid);
      } catch {
        // Unacknowledged: not counted, nothing to check.
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const lanes = Array.from({ length: cluster.ids.length * 2 }, (_, i) => trickle(i));
  try {
    for (let k = 0; k < o.kills; k++) {
      const current = await labelled(
        `kill ${k + 1}: a serving leader`,
        cluster.waitForServingLeader(10_000, lastServingIndex(cluster)),
      );
      await new Promise((r) => setTimeout(r, 300));
      const mark = cluster.events.length;
      const killedAt = await cluster.kill(current.leader);
      const next = await labelled(
        `kill ${k + 1}: a new serving leader after killing ${current.leader}`,
        cluster.waitForServingLeader(10_000, mark),
      );
      const leader = next.leader;
      const first = await cluster.waitFor(
        (e) => e.node === leader && e.ev === 'first-commit' && e.epoch === next.epoch,
        10_000,
        mark,
      );
      const after = cluster.events.slice(mark);
      const detect = after.find((e) => e.ev === 'leader-lost');
      const elected = findLast(
        after,
        (e) => e.node === leader && e.ev === 'elected' && e.leader === leader && e.epoch === next.epoch,
      );
      if (!detect || !elected) throw new Error('failover events missing (leader-lost / elected)');
      const f = {
        killed: current.leader,
        elected: leader,
        detectMs: round(detect.t - killedAt, 2),
        electedMs: round(elected.t - killedAt, 2),
        servingMs: round(next.event.t - killedAt, 2),
        firstCommitMs: round(first.t - killedAt, 2),
      };
      out.push(f);
      log(
        `kill ${k + 1}: ${f.killed} → ${f.elected}: detect ${f.detectMs} ms, elected ${f.electedMs} ms, serving ${f.servingMs} ms, first commit ${f.firstCommitMs} ms`,
      );
      const restartMark = cluster.events.length;
      await cluster.startNode(current.leader);
      await labelled(
        `kill ${k + 1}: ${current.leader} serving again after its restart`,
        cluster.waitFor((e) => e.node === current.leader && e.ev === 'serving', 20_000, restartMark),
      );
    }
  } finally {
    stop = true;
    await Promise.all(lanes);
    await pool.close();
  }
  return out;
}

function lastServingIndex(cluster: ProcessCluster): number {
  for (let i = cluster.events.length - 1; i >= 0; i--) {
    const e = cluster.events[i]!;
    if (e.ev === 'serving' && e.leader === undefined && cluster.isRunning(e.node)) return i;
  }
  return 0;
}

/** Every path's last acknowledged write must be on every live node (the run's checker). */
async function countLost(cluster: ProcessCluster, book: AckBook): Promise<number> {
  const leader = await cluster.waitForServingLeader(10_000, lastServingIndex(cluster));
  const { lost } = await checkAckedWrites({
    leader: cluster.clientAddress(leader.leader),
    nodes: cluster.ids
      .filter((x) => cluster.isRunning(x))
      .map((id) => ({ id, address: cluster.clientAddress(id) })),
    acked: [...book.last].map(([path, zxid]) => ({ path, zxid })),
    runId: `bench-node-${Date.now()}`,
  });
  return lost.length;
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
