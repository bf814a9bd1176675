// `pole-bench bench heartbeat`: what heartbeats cost. Runs the same idle cluster of real node
// processes twice, heartbeats off and on, and reads every node's CPU time from /proc over the same
// window; the difference is the heartbeats' cost (the leader's own PINGs are in both runs). Also
// checks that the heartbeats did run: every node's RTT_i must list every other node.
import { processCpuTicks, USER_HZ } from '../measure/proc-cpu.js';
import type { NodeId } from '../vocabulary/names.js';
import { ProcessCluster } from './process-cluster.js';
import { getJson } from '../util/http-json.js';

export interface HeartbeatBenchOptions {
  readonly nodes: number;
  readonly periodMs: number;
  /** Seconds of CPU measurement per run. */
  readonly durationS: number;
  readonly log?: (line: string) => void;
}

export interface CpuRun {
  readonly heartbeatMs: number;
  /** Mean CPU of one node process, % of one core. */
  readonly perNodePct: number;
  /** All node processes together, % of one core. */
  readonly totalPct: number;
}

export interface HeartbeatBenchResult {
  readonly nodes: number;
  readonly periodMs: number;
  readonly durationS: number;
  readonly off: CpuRun;
  readonly on: CpuRun;
  /** on − off. */
  readonly costPerNodePct: number;
  readonly costTotalPct: number;
  /** Heartbeats sent per second by the whole cluster (one per ordered pair and period). */
  readonly messagesPerSec: number;
  /** Peers in every node's RTT_i at the end of the "on" run (should be nodes − 1 each). */
  readonly measuredPeers: Readonly<Record<NodeId, number>>;
}

export async function runHeartbeatBench(opts: HeartbeatBenchOptions): Promise<HeartbeatBenchResult> {
  const log = opts.log ?? (() => undefined);
  const off = await measure(opts, 0, log);
  const on = await measure(opts, opts.periodMs, log);
  const n = opts.nodes;
  return {
    nodes: n,
    periodMs: opts.periodMs,
    durationS: opts.durationS,
    off: off.cpu,
    on: on.cpu,
    costPerNodePct: on.cpu.perNodePct - off.cpu.perNodePct,
    costTotalPct: on.cpu.totalPct - off.cpu.totalPct,
    messagesPerSec: (n * (n - 1) * 1000) / opts.periodMs,
    measuredPeers: on.measuredPeers,
  };
}

async function measure(
  opts: HeartbeatBenchOptions,
  heartbeatMs: number,
  log: (line: string) => void,
): Promise<{ cpu: CpuRun; measuredPeers: Record<NodeId, number> }> {
  const cluster = await ProcessCluster.start({
    nodes: opts.nodes,
    fsync: false,
    initialLeader: `p${opts.nodes}`,
    timers: { tickMs: 100, syncLimit: 5, initLimit: 10, heartbeatMs },
  });
  try {
    await cluster.waitForServingLeader(20_000);
    // Let start-up work (JIT, connection set-up) settle before measuring.
    await delay(2000);
    const pids = cluster.ids.map((id) => cluster.pid(id)).filter((p): p is number => p !== undefined);
    const before = await Promise.all(pids.map(cpuTicks));
    const t0 = performance.now();
    await delay(opts.durationS * 1000);
    const after = await Promise.all(pids.map(cpuTicks));
    const wallS = (performance.now() - t0) / 1000;
    const used = after.map((a, i) => (a - (before[i] as number)) / USER_HZ);
    const totalPct = (100 * used.reduce((x, y) => x + y, 0)) / wallS;
    const cpu = { heartbeatMs, perNodePct: totalPct / pids.length, totalPct };
    log(
      `heartbeats ${heartbeatMs === 0 ? 'off' : `every ${heartbeatMs} ms`}: ` +
        `${cpu.perNodePct.toFixed(2)} % of a core per node, ${cpu.totalPct.toFixed(2)} % for all ${pids.length}`,
    );
    const measuredPeers: Record<NodeId, number> = {};
    if (heartbeatMs > 0) {
      for (const id of cluster.ids) {
        const status = (await getJson(cluster.httpAddress(id))) as { rttMs?: Record<string, number> };
        measuredPeers[id] = Object.keys(status.rttMs ?? {}).filter((k) => k !== id).length;
      }
    }
    return { cpu, measuredPeers };
  } finally {
    await cluster.stop();
  }
}

/** utime + stime of a process, in clock ticks. */
async function cpuTicks(pid: number): Promise<number> {
  const ticks = await processCpuTicks(pid);
  if (ticks === null) throw new Error(`cannot read the CPU time of process ${pid} from /proc`);
  return ticks;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
