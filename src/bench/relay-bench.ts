// `pole-bench bench relay`: how faithful and how cheap the userspace delay relay is on this
// machine. Three phases, all routes in one relay worker as in a run:
// 0. Baseline: the same probe straight to the echo server, no relay: the host's own share of any
//    error (thread wake-ups after idling cost ~0.1-0.3 ms each on the 2-core VM). The echo server
//    runs on its own thread, so the direct and the relayed round trips wake the same threads.
// 1. RTT: one route per configured RTT (rtt/2 each way) to a loopback echo server; ping-pong
//    probes through all routes at once; configured vs measured, and whether the error is within
//    the bar max(0.5 ms, 3 %).
// 2. Paced load: 1 kB messages at 5,000/s through a 20 ms route to the echo server (the load a run
//    puts on a pair of data centers), with a probe on a second connection: the relay threads' CPU
//    and the RTT under that load. Beside it, the echo thread's own CPU per message: it reads and
//    writes each message once, as the relay does, and nothing else, so it is the floor of any
//    relay written for Node on this machine, and it tells the relay's own work from that floor.
// 3. Bulk: as many bytes as the relay carries through a 20 ms route, MB/s (10^6 bytes).
import { createServer, connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DelayRelay, type RelayStats } from '../shaping/relay/delay-relay.js';
import type { DelayDistribution, LinkDelay } from '../shaping/relay/delay-distribution.js';
import { startEchoServer } from '../shaping/relay/echo-server.js';
import { measureRtt, type RttResult } from '../shaping/relay/rtt-probe.js';
import { pacedWrites } from './paced-writes.js';
import type { DirectionStats } from '../shaping/relay/relay-protocol.js';

/** Jitter as a share of the one-way delay, or in ms. */
export type JitterSpec = { readonly percent: number } | { readonly ms: number };

export interface RelayBenchOptions {
  readonly rttsMs: readonly number[];
  readonly samples: number;
  /** Pause between a pong and the next ping, ms. */
  readonly intervalMs: number;
  readonly jitter: JitterSpec;
  readonly distribution: DelayDistribution;
  readonly seed: number;
  /** Bytes of the bulk transfer (0 skips the phase). */
  readonly bulkBytes: number;
  /** Seconds of the paced load (0 skips the phase). */
  readonly loadSeconds: number;
  readonly log?: (line: string) => void;
}

export interface RttRow {
  readonly configuredMs: number;
  readonly jitterMs: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** measured mean − configured, ms. */
  readonly errorMs: number;
  readonly errorPct: number;
  /** max(0.5 ms, 3 % of the configured RTT). */
  readonly toleranceMs: number;
  readonly withinBar: boolean;
  /** The relay's own share: measured mean − configured − the baseline's mean, ms. */
  readonly relayErrorMs: number;
  readonly relayWithinBar: boolean;
}

export interface ThreadCpu {
  /** CPU of the relay thread and of its clock thread during the phase, ms (null: not Linux). */
  readonly relayMs: number | null;
  readonly clockMs: number | null;
  readonly wallMs: number;
  /** (relay + clock) / wall, % of one core. */
  readonly pctOfCore: number | null;
  /**
   * (relay + clock) CPU per message relayed (one way: a ping and its pong are two), per chunk
   * read from a socket, and per MB relayed (both directions); null where not measured or when
   * the phase relayed no messages (the bulk transfer is counted in MB only).
   */
  readonly usPerMessage: number | null;
  readonly usPerChunk: number | null;
  readonly usPerMB: number | null;
}

export interface Lateness {
  /** Over every released chunk of the phase's routes, both directions, ms. */
  readonly meanMs: number;
  readonly maxMs: number;
  readonly chunks: number;
}

export interface RelayBenchResult {
  /** Loopback RTT without the relay, same probe, ms. */
  readonly baseline: { readonly meanMs: number; readonly p50Ms: number; readonly maxMs: number };
  readonly rtt: RttRow[];
  readonly allWithinBar: boolean;
  readonly allRelayWithinBar: boolean;
  readonly rttLateness: Lateness;
  readonly rttCpu: ThreadCpu;
  readonly load: {
    readonly messagesPerSec: number;
    readonly messageBytes: number;
    readonly seconds: number;
    readonly routeRttMs: number;
    readonly sent: number;
    /** Bytes echoed back through the route / bytes sent: 1 when nothing is stuck. */
    readonly echoedRatio: number;
    readonly rttUnderLoad: { readonly meanMs: number; readonly p50Ms: number; readonly maxMs: number };
    readonly lateness: Lateness;
    readonly cpu: ThreadCpu;
    /**
     * The echo server's thread over the same phase: it read every message once and wrote each read
     * back at once (the paced ones and the probe's pings). CPU per message echoed and per read, µs
     * (null where not measured): per read is like for like with the relay's per chunk, a chunk
     * being one read that the relay writes out once.
     */
    readonly echo: {
      readonly cpuMs: number | null;
      readonly reads: number;
      readonly usPerMessage: number | null;
      readonly usPerRead: number | null;
      /**
       * Its reads against the relay's own account, two counts kept apart: the bytes the echo read
       * (and wrote back), the bytes the relay released toward it and back from it on the route.
       * Once every echo is home all three are equal (`agree`); if not, the echo's per-read and the
       * relay's per-chunk figures are not over the same traffic and say so.
       */
      readonly bytes: {
        readonly echoRead: number;
        readonly relayedToEcho: number;
        readonly relayedBack: number;
        readonly agree: boolean;
      };
    };
  } | null;
  readonly bulk: {
    readonly routeRttMs: number;
    readonly bytes: number;
    readonly seconds: number;
    readonly mbPerSec: number;
    readonly cpu: ThreadCpu;
  } | null;
  readonly details: {
    readonly samples: number;
    readonly intervalMs: number;
    readonly jitter: JitterSpec;
    readonly distribution: DelayDistribution;
    readonly seed: number;
    readonly leadMs: number;
    readonly wakeLatencyMs: number;
    readonly wakes: number;
    /** Wake-ups of the relay's clock thread over the whole bench. */
    readonly clockWakes: number;
    readonly napMs: number;
    /** Whether the relay threads got their raised priority. */
    readonly niceSet: boolean;
  };
}

const LOAD_RATE = 5000;
const LOAD_BYTES = 1024;
const SIDE_ROUTE_RTT_MS = 20;
/** Pings of the baseline idle about as long as those through a 20 ms route do. */
const BASELINE_INTERVAL_MS = 20;

export async function runRelayBench(o: RelayBenchOptions): Promise<RelayBenchResult> {
  const log = o.log ?? (() => undefined);
  for (const rtt of o.rttsMs) {
    if (!Number.isFinite(rtt) || rtt <= 0) throw new RangeError(`RTTs must be > 0 ms, got ${rtt}`);
  }
  const link = (rttMs: number): LinkDelay => ({
    delayMs: rttMs / 2,
    jitterMs: 'percent' in o.jitter ? ((rttMs / 2) * o.jitter.percent) / 100 : o.jitter.ms,
    distribution: o.distribution,
  });
  const echo = await startEchoServer({ inWorker: true });
  const sink = await startSink();
  const side = link(SIDE_ROUTE_RTT_MS);
  const relay = await DelayRelay.start({
    seed: o.seed,
    routes: [
      ...o.rttsMs.map((rtt) => ({
        name: rttRoute(rtt),
        target: { host: '127.0.0.1', port: echo.port },
        forward: link(rtt),
        backward: link(rtt),
      })),
      { name: 'load', target: { host: '127.0.0.1', port: echo.port }, forward: side, backward: side },
      { name: 'bulk', target: { host: '127.0.0.1', port: sink.port }, forward: side, backward: side },
    ],
  });
  try {
    const direct = await measureRtt({
      host: '127.0.0.1',
      port: echo.port,
      samples: Math.min(o.samples, 100),
      intervalMs: BASELINE_INTERVAL_MS,
    });
    const baseline = { meanMs: direct.meanMs, p50Ms: direct.p50Ms, maxMs: direct.maxMs };
    log(
      `baseline, no relay: mean ${baseline.meanMs.toFixed(3)} p50 ${baseline.p50Ms.toFixed(3)} max ${baseline.maxMs.toFixed(3)} ms`,
    );
    log(`RTT: ${o.samples} samples through each of ${o.rttsMs.join(', ')} ms, all at once`);
    const before = await relay.stats();
    const results = await Promise.all(
      o.rttsMs.map((rtt) =>
        measureRtt({
          host: '127.0.0.1',
          port: relay.port(rttRoute(rtt)),
          samples: o.samples,
          intervalMs: o.intervalMs,
        }),
      ),
    );
    const after = await relay.stats();
    const rtt = o.rttsMs.map((configuredMs, i) =>
      rttRow(configuredMs, link(configuredMs).jitterMs * 2, results[i]!, baseline.meanMs),
    );
    for (const r of rtt) log(formatRttRow(r));
    const rttLateness = lateness(after, o.rttsMs.map(rttRoute), before);
    // Per MB says nothing of 64-byte pings: this phase is counted in messages.
    const rttCpu = cpuBetween(before, after, {
      ...relayed(after, o.rttsMs.map(rttRoute), before),
      messages: results.reduce((n, r) => n + 2 * r.pings, 0),
      bytes: null,
    });
    log(`  release lateness ${fmtLateness(rttLateness)}; relay CPU ${fmtCpu(rttCpu)}`);

    let load: RelayBenchResult['load'] = null;
    if (o.loadSeconds > 0) {
      log(
        `paced load: ${LOAD_RATE} × ${LOAD_BYTES} B/s for ${o.loadSeconds} s through a ${SIDE_ROUTE_RTT_MS} ms route`,
      );
      const s0 = await relay.stats();
      const e0 = await echo.usage();
      const [paced, probe] = await Promise.all([
        pacedLoad(relay.port('load'), o.loadSeconds),
        measureRtt({
          host: '127.0.0.1',
          port: relay.port('load'),
          samples: Math.max(1, Math.floor((o.loadSeconds * 1000) / (SIDE_ROUTE_RTT_MS + o.intervalMs)) - 2),
          intervalMs: o.intervalMs,
        }),
      ]);
      const s1 = await relay.stats();
      const e1 = await echo.usage();
      const echoCpuMs = e0.cpuMs === null || e1.cpuMs === null ? null : e1.cpuMs - e0.cpuMs;
      const echoReads = e1.reads - e0.reads;
      const echoed = paced.sent + probe.pings;
      const toEcho = relayed(s1, ['load'], s0, ['forward']).bytes;
      const back = relayed(s1, ['load'], s0, ['backward']).bytes;
      const echoRead = e1.bytes - e0.bytes;
      load = {
        messagesPerSec: LOAD_RATE,
        messageBytes: LOAD_BYTES,
        seconds: o.loadSeconds,
        routeRttMs: SIDE_ROUTE_RTT_MS,
        sent: paced.sent,
        echoedRatio: paced.echoedBytes / (paced.sent * LOAD_BYTES),
        rttUnderLoad: { meanMs: probe.meanMs, p50Ms: probe.p50Ms, maxMs: probe.maxMs },
        lateness: lateness(s1, ['load'], s0),
        // Each paced message and each probe ping comes back: two relayed messages apiece.
        cpu: cpuBetween(s0, s1, {
          messages: 2 * (paced.sent + probe.pings),
          ...relayed(s1, ['load'], s0),
        }),
        echo: {
          cpuMs: echoCpuMs,
          reads: echoReads,
          usPerMessage: echoCpuMs === null || echoed <= 0 ? null : (echoCpuMs * 1000) / echoed,
          usPerRead: echoCpuMs === null || echoReads <= 0 ? null : (echoCpuMs * 1000) / echoReads,
          bytes: {
            echoRead,
            relayedToEcho: toEcho,
            relayedBack: back,
            agree: echoRead === toEcho && toEcho === back,
          },
        },
      };
      log(
        `  sent ${load.sent} (${load.echoedRatio === 1 ? 'all' : `${(load.echoedRatio * 100).toFixed(1)} %`} echoed back); RTT under load mean ${load.rttUnderLoad.meanMs.toFixed(2)} p50 ${load.rttUnderLoad.p50Ms.toFixed(2)} max ${load.rttUnderLoad.maxMs.toFixed(2)} ms; lateness ${fmtLateness(load.lateness)}; relay CPU ${fmtCpu(load.cpu)}`,
      );
      const e = load.echo;
      if (e.usPerMessage !== null && e.usPerRead !== null)
        log(
          `  the echo thread, which reads every message once and writes back each read: ${e.usPerMessage.toFixed(1)} µs per message, ${e.usPerRead.toFixed(0)} per read (${e.reads} reads): the floor of a Node thread here`,
        );
      log(
        e.bytes.agree
          ? `  checked: the echo read the ${e.bytes.echoRead} B the relay released toward it, and the relay released them all back`
          : `  MISMATCH: the echo read ${e.bytes.echoRead} B, the relay released ${e.bytes.relayedToEcho} B toward it and ${e.bytes.relayedBack} B back: its per-read figure is not over the relay's traffic`,
      );
    }

    let bulk: RelayBenchResult['bulk'] = null;
    if (o.bulkBytes > 0) {
      const s0 = await relay.stats();
      const seconds = await bulkTransfer(relay.port('bulk'), sink, o.bulkBytes);
      const s1 = await relay.stats();
      bulk = {
        routeRttMs: SIDE_ROUTE_RTT_MS,
        bytes: o.bulkBytes,
        seconds,
        mbPerSec: o.bulkBytes / 1e6 / seconds,
        cpu: cpuBetween(s0, s1, { messages: null, ...relayed(s1, ['bulk'], s0) }),
      };
      log(
        `bulk: ${(o.bulkBytes / 1e6).toFixed(0)} MB through a ${SIDE_ROUTE_RTT_MS} ms route in ${seconds.toFixed(2)} s = ${bulk.mbPerSec.toFixed(0)} MB/s; relay CPU ${fmtCpu(bulk.cpu)}`,
      );
    }
    const last = await relay.stats();
    return {
      baseline,
      rtt,
      allWithinBar: rtt.every((r) => r.withinBar),
      allRelayWithinBar: rtt.every((r) => r.relayWithinBar),
      rttLateness,
      rttCpu,
      load,
      bulk,
      details: {
        samples: o.samples,
        intervalMs: o.intervalMs,
        jitter: o.jitter,
        distribution: o.distribution,
        seed: o.seed,
        leadMs: last.worker.leadMs,
        wakeLatencyMs: last.worker.wakeLatencyMs,
        wakes: last.worker.wakes,
        clockWakes: last.worker.clockWakes,
        niceSet: last.worker.niceSet,
        napMs: last.worker.napMs,
      },
    };
  } finally {
    await relay.close();
    await echo.close();
    await sink.close();
  }
}

function rttRoute(rttMs: number): string {
  return `rtt-${rttMs}`;
}

export function toleranceMs(configuredMs: number): number {
  return Math.max(0.5, 0.03 * configuredMs);
}

function rttRow(configuredMs: number, rttJitterMs: number, r: RttResult, baselineMs: number): RttRow {
  const errorMs = r.meanMs - configuredMs;
  const relayErrorMs = errorMs - baselineMs;
  const tol = toleranceMs(configuredMs);
  return {
    configuredMs,
    jitterMs: rttJitterMs,
    meanMs: r.meanMs,
    p50Ms: r.p50Ms,
    minMs: r.minMs,
    maxMs: r.maxMs,
    errorMs,
    errorPct: (errorMs / configuredMs) * 100,
    toleranceMs: tol,
    withinBar: Math.abs(errorMs) <= tol,
    relayErrorMs,
    relayWithinBar: Math.abs(relayErrorMs) <= tol,
  };
}

export function formatRttRow(r: RttRow): string {
  return (
    `  ${r.configuredMs} ms: mean ${r.meanMs.toFixed(3)} p50 ${r.p50Ms.toFixed(3)} min ${r.minMs.toFixed(3)} ` +
    `max ${r.maxMs.toFixed(3)} ms, error ${signed(r.errorMs)} ms (${r.errorPct.toFixed(2)} %) ` +
    `${r.withinBar ? 'within' : 'OUTSIDE'} ±${r.toleranceMs.toFixed(2)} ms; ` +
    `net of baseline ${signed(r.relayErrorMs)} ms ${r.relayWithinBar ? 'within' : 'OUTSIDE'}`
  );
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
}

type Direction = 'forward' | 'backward';
const BOTH_WAYS: readonly Direction[] = ['forward', 'backward'];

/** The given directions of the named routes, now and at `since` (absent: counted from zero). */
function eachDirection(
  stats: RelayStats,
  names: readonly string[],
  since: RelayStats | undefined,
  visit: (now: DirectionStats, then: DirectionStats | undefined) => void,
  dirs: readonly Direction[] = BOTH_WAYS,
): void {
  for (const name of names) {
    const now = stats.routes.find((r) => r.name === name);
    if (now === undefined) continue;
    const then = since?.routes.find((r) => r.name === name);
    for (const dir of dirs) visit(now[dir], then?.[dir]);
  }
}

function lateness(stats: RelayStats, names: readonly string[], since?: RelayStats): Lateness {
  let chunks = 0;
  let sum = 0;
  let max = 0;
  eachDirection(stats, names, since, (a, b) => {
    chunks += a.chunks - (b?.chunks ?? 0);
    sum += a.latenessMeanMs * a.chunks - (b ? b.latenessMeanMs * b.chunks : 0);
    // The max is since the start, an upper bound for the phase.
    max = Math.max(max, a.latenessMaxMs);
  });
  return { meanMs: chunks === 0 ? 0 : sum / chunks, maxMs: max, chunks };
}

/** Bytes and chunks the named routes relayed since `since`, both directions unless told. */
function relayed(
  stats: RelayStats,
  names: readonly string[],
  since: RelayStats,
  dirs: readonly Direction[] = BOTH_WAYS,
): { bytes: number; chunks: number } {
  let bytes = 0;
  let chunks = 0;
  eachDirection(
    stats,
    names,
    since,
    (a, b) => {
      bytes += a.bytes - (b?.bytes ?? 0);
      chunks += a.chunks - (b?.chunks ?? 0);
    },
    dirs,
  );
  return { bytes, chunks };
}

function cpuBetween(
  a: RelayStats,
  b: RelayStats,
  traffic: { messages: number | null; bytes: number | null; chunks: number },
): ThreadCpu {
  const wallMs = b.worker.uptimeMs - a.worker.uptimeMs;
  const relayMs = a.worker.cpuMs === null || b.worker.cpuMs === null ? null : b.worker.cpuMs - a.worker.cpuMs;
  const clockMs =
    a.worker.clockCpuMs === null || b.worker.clockCpuMs === null
      ? null
      : b.worker.clockCpuMs - a.worker.clockCpuMs;
  const cpuUs = relayMs === null || clockMs === null ? null : (relayMs + clockMs) * 1000;
  const per = (n: number | null): number | null =>
    cpuUs === null || n === null || n <= 0 ? null : cpuUs / n;
  return {
    relayMs,
    clockMs,
    wallMs,
    pctOfCore: cpuUs === null ? null : (cpuUs / 1000 / wallMs) * 100,
    usPerMessage: per(traffic.messages),
    usPerChunk: per(traffic.chunks),
    usPerMB: per(traffic.bytes === null ? null : traffic.bytes / 1e6),
  };
}

function fmtLateness(l: Lateness): string {
  return `mean ${(l.meanMs * 1000).toFixed(0)} µs, max ${l.maxMs.toFixed(2)} ms over ${l.chunks} chunks`;
}

function fmtCpu(c: ThreadCpu): string {
  if (c.relayMs === null || c.clockMs === null || c.pctOfCore === null) return 'unknown (no /proc)';
  const per = [
    c.usPerMessage === null ? null : `${c.usPerMessage.toFixed(0)} µs per message`,
    c.usPerChunk === null ? null : `${c.usPerChunk.toFixed(0)} per chunk`,
    c.usPerMB === null ? null : `${(c.usPerMB / 1000).toFixed(1)} ms per MB`,
  ].filter((x) => x !== null);
  return `${c.relayMs.toFixed(0)} ms + clock ${c.clockMs.toFixed(0)} ms in ${(c.wallMs / 1000).toFixed(1)} s = ${c.pctOfCore.toFixed(1)} % of a core (${per.join(', ')})`;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('error', reject);
    s.once('connect', () => {
      s.off('error', reject);
      s.setNoDelay(true);
      resolve(s);
    });
  });
}

/** Open loop (pacedWrites), then the echoes still crossing the route. */
async function pacedLoad(port: number, seconds: number): Promise<{ sent: number; echoedBytes: number }> {
  const socket = await open(port);
  const message = Buffer.alloc(LOAD_BYTES, 0x6c);
  let echoedBytes = 0;
  socket.on('data', (b: Buffer) => (echoedBytes += b.length));
  const sent = await pacedWrites(socket, message, LOAD_RATE, seconds);
  // Wait (bounded) for the echoes still crossing the route.
  const deadline = performance.now() + 2000 + SIDE_ROUTE_RTT_MS * 10;
  while (echoedBytes < sent * LOAD_BYTES && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  socket.destroy();
  return { sent, echoedBytes };
}

interface Sink {
  readonly port: number;
  /** Resolves when `bytes` more bytes than so far have arrived. */
  received(bytes: number): Promise<void>;
  close(): Promise<void>;
}

/** Counts and drops what it receives. */
async function startSink(): Promise<Sink> {
  let total = 0;
  let waiter: { until: number; resolve: () => void } | null = null;
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('data', (b: Buffer) => {
      total += b.length;
      if (waiter !== null && total >= waiter.until) {
        const w = waiter;
        waiter = null;
        w.resolve();
      }
    });
    s.on('error', () => s.destroy());
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('sink has no port');
  return {
    port: addr.port,
    received(bytes) {
      const until = total + bytes;
      return new Promise((resolve) => {
        if (total >= until) resolve();
        else waiter = { until, resolve };
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Seconds from the first byte written to the last byte arriving at the sink. */
async function bulkTransfer(port: number, sink: Sink, bytes: number): Promise<number> {
  const socket = await open(port);
  const block = Buffer.alloc(64 * 1024, 0x62);
  const arrived = sink.received(bytes);
  const start = performance.now();
  let left = bytes;
  while (left > 0) {
    const n = Math.min(left, block.length);
    left -= n;
    if (!socket.write(n === block.length ? block : block.subarray(0, n))) {
      await new Promise((r) => socket.once('drain', r));
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('bulk transfer: the sink did not get every byte in 120 s')),
      120_000,
    );
  });
  try {
    await Promise.race([arrived, timeout]);
  } finally {
    clearTimeout(timer);
  }
  const seconds = (performance.now() - start) / 1000;
  socket.destroy();
  return seconds;
}
