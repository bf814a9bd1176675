// `pole-bench bench load`: how well the load agent keeps its open-loop schedule on this machine.
// Starts a real local cluster (fsync on), then for each target rate runs one `pole-bench agent`
// child process through the real IPC path against every node, and reports the rate it sent and
// got acknowledged, its send lateness and the write latency. The bar (issue 4): acknowledged rate
// within 1 % of the target at 1,000 and 5,000 writes/s, send-lateness p99 under 2 ms.
import { AgentProcess } from '../load/agent-process.js';
import { processCpuTicks, USER_HZ } from '../measure/proc-cpu.js';
import type { Arrival } from '../load/open-loop-schedule.js';
import { ProcessCluster } from './process-cluster.js';

export interface LoadBenchOptions {
  readonly rates: readonly number[];
  readonly durationS: number;
  readonly arrival: Arrival;
  readonly nodes: number;
  readonly size: number;
  readonly seed: number;
  /** Seconds at the start of each run recorded as 'warmup' and left out of the latency figures. */
  readonly warmupS: number;
  /** The agent's nice value (null: leave it); see DEFAULT_AGENT_NICE. */
  readonly nice: number | null;
  /** How the agent's send loop sleeps; undefined: the agent chooses by rate. */
  readonly wake?: 'thread' | 'timeout';
  readonly log?: (line: string) => void;
}

export const RATE_TOLERANCE = 0.01;
export const LATENESS_P99_BAR_MS = 2;

export interface LoadBenchRow {
  readonly targetRate: number;
  /** (acked + failed) / sending window: the schedule as sent. */
  readonly sentRate: number;
  /** acked / sending window. */
  readonly achievedRate: number;
  /** achievedRate / targetRate − 1. */
  readonly rateError: number;
  /** Send lateness over the whole run. */
  readonly latenessP99Ms: number;
  readonly latenessMaxMs: number;
  /** Send lateness after the warm-up. */
  readonly steadyLatenessP99Ms: number;
  /** Corrected latency (from the intended send time) after the warm-up. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Uncorrected latency (from the actual send time) after the warm-up. */
  readonly uncorrectedP99Ms: number;
  readonly attempted: number;
  readonly acked: number;
  readonly failed: number;
  readonly timedOut: number;
  readonly retries: number;
  readonly intervals: number;
  /** How the agent's send loop slept, and the nice value it got (null: none). */
  readonly wake: 'thread' | 'timeout';
  readonly nice: number | null;
  /** The agent process's CPU over the run, % of one core (null where /proc is missing). */
  readonly agentCpuPct: number | null;
  readonly rateWithinBar: boolean;
  readonly latenessWithinBar: boolean;
}

export interface LoadBenchResult {
  readonly rows: readonly LoadBenchRow[];
  readonly barMet: boolean;
  readonly details: {
    readonly nodes: number;
    readonly leader: string;
    readonly size: number;
    readonly durationS: number;
    readonly warmupS: number;
    readonly arrival: Arrival;
    readonly fsync: true;
  };
}

export async function runLoadBench(o: LoadBenchOptions): Promise<LoadBenchResult> {
  const log = o.log ?? (() => undefined);
  const cluster = await ProcessCluster.start({ nodes: o.nodes, fsync: true, initialLeader: 'p3' });
  try {
    const { leader } = await cluster.waitForServingLeader(20_000);
    log(`cluster of ${o.nodes} serving, leader ${leader}`);
    const endpoints = cluster.ids.map((id) => ({ node: id, ...cluster.clientAddress(id) }));
    const rows: LoadBenchRow[] = [];
    for (const rate of o.rates) {
      const row = await oneRate(o, rate, endpoints);
      rows.push(row);
      log(
        `${rate} writes/s: sent ${row.sentRate}, acked ${row.achievedRate} (${(row.rateError * 100).toFixed(2)} %), ` +
          `lateness p99 ${row.latenessP99Ms} ms (max ${row.latenessMaxMs}; after warm-up p99 ${row.steadyLatenessP99Ms}), latency p50 ${row.p50Ms} ms p99 ${row.p99Ms} ms, ` +
          `failed ${row.failed}, agent CPU ${row.agentCpuPct ?? '?'} % (wake ${row.wake}, nice ${row.nice ?? 'unchanged'})`,
      );
    }
    return {
      rows,
      barMet: rows.every((r) => r.rateWithinBar && r.latenessWithinBar),
      details: {
        nodes: o.nodes,
        leader,
        size: o.size,
        durationS: o.durationS,
        warmupS: o.warmupS,
        arrival: o.arrival,
        fsync: true,
      },
    };
  } finally {
    await cluster.stop();
  }
}

async function oneRate(
  o: LoadBenchOptions,
  rate: number,
  endpoints: ReadonlyArray<{ node: string; host: string; port: number }>,
): Promise<LoadBenchRow> {
  // The agent's CPU, sampled at each interval message (it exits right after `done`).
  const cpu: Array<{ cpuMs: number; at: number }> = [];
  const proc: { pid?: number } = {};
  const agent = await AgentProcess.spawn({
    onInterval: () => {
      void processCpuMs(proc.pid).then((cpuMs) => {
        if (cpuMs !== null) cpu.push({ cpuMs, at: performance.now() });
      });
    },
  });
  proc.pid = agent.pid;
  try {
    agent.start({
      dc: 'dc1',
      endpoints: [...endpoints],
      rate,
      size: o.size,
      arrival: o.arrival,
      seed: o.seed,
      durationMs: o.durationS * 1000,
      requestTimeoutMs: 5_000,
      writeDeadlineMs: 10_000,
      clientIdPrefix: `bench-load-${process.pid}-${Date.now()}-${rate}`,
      pathPrefix: `/bench-load/r${rate}`,
      phase: 'warmup',
      nice: o.nice,
      ...(o.wake ? { wake: o.wake } : {}),
    });
    const started = await agent.started;
    agent.phase('steady', started.startMs + o.warmupS * 1000);
    const done = await agent.done;
    const exit = await agent.exited;
    if (exit.code !== 0) throw new Error(`the load agent exited with ${exit.code ?? exit.signal}`);
    const steady = done.phases.steady;
    const rateError = done.achievedRate / rate - 1;
    return {
      targetRate: rate,
      sentRate: done.sentRate,
      achievedRate: done.achievedRate,
      rateError: Math.round(rateError * 1e5) / 1e5,
      latenessP99Ms: done.lateness.p99,
      latenessMaxMs: done.lateness.max,
      steadyLatenessP99Ms: steady?.lateness.p99 ?? NaN,
      p50Ms: steady?.corrected.p50 ?? NaN,
      p99Ms: steady?.corrected.p99 ?? NaN,
      uncorrectedP99Ms: steady?.uncorrected.p99 ?? NaN,
      attempted: done.totals.attempted,
      acked: done.totals.acked,
      failed: done.totals.failed,
      timedOut: done.totals.timedOut,
      retries: done.totals.retries,
      intervals: agent.intervals.length,
      wake: started.wake,
      nice: started.nice,
      agentCpuPct: cpuShare(cpu),
      rateWithinBar: Math.abs(rateError) <= RATE_TOLERANCE,
      latenessWithinBar: done.lateness.p99 < LATENESS_P99_BAR_MS,
    };
  } finally {
    await agent.kill();
  }
}

function cpuShare(samples: ReadonlyArray<{ cpuMs: number; at: number }>): number | null {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (!first || !last || last.at - first.at < 500) return null;
  return Math.round(((last.cpuMs - first.cpuMs) / (last.at - first.at)) * 1000) / 10;
}

/** CPU time (user + system) of a process so far, ms; null where /proc is not available. */
async function processCpuMs(pid: number | undefined): Promise<number | null> {
  const ticks = pid === undefined ? null : await processCpuTicks(pid);
  return ticks === null ? null : (ticks * 1000) / USER_HZ;
}
