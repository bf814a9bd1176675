// The node floor: what a write costs when the network adds nothing (disk, batching, processing,
// the client's own part), measured, so that the paper's model (forwarding RTT + θc, pure network)
// can be shown with and without it and never mixed with it. It is calibrated on the run's own
// members with every delay between data centers taken out, after the load (so the calibration's
// delay-free round trips never reach the RTTs a measured oracle elects by): writes at the run's
// rate go to every node in turn, and the mean latency of those the leader took itself and of those
// a follower forwarded are the two floors. A data center's floor is the mix of the two that its
// clients see: the share of its live servers that is the leader.
import { median } from '../util/spread.js';
import type { NodeId } from '../vocabulary/names.js';
import { connectPoleWriter, type ConnectWriteClient } from '../load/write-client.js';
import type { Topology } from '../topology/topology.js';

/** Where the calibration and the warm-up write (a target may need them prepared: ZooKeeper's slots). */
export const FLOOR_PREFIX = '/pb/floor';
export const WARMUP_PREFIX = '/pb/warmup';

export interface NodeFloor {
  /** How the floor was obtained, in words (shown in the report). */
  readonly method: string;
  /** Mean latency of a write sent to the leader itself, ms; null when not measured. */
  readonly leaderMs: number | null;
  /** Mean latency of a write sent to a follower (which forwards it), ms; null when not measured. */
  readonly followerMs: number | null;
  /** Writes the figures are means of (after the warm-up third). */
  readonly writes: number;
  /**
   * Every calibration taken, in order, the figures above being one of them (`kept`): absent for a
   * floor not calibrated (traced, or not measured) and in files written before.
   */
  readonly readings?: readonly FloorReading[];
  readonly kept?: number;
}

/** One calibration: each kind of write's mean and median, ms (null when none of that kind). */
export interface FloorReading {
  readonly leaderMs: number | null;
  readonly leaderMedianMs: number | null;
  readonly followerMs: number | null;
  readonly followerMedianMs: number | null;
  readonly writes: number;
  /**
   * Whatever else the machine ran while it wrote, % of one core (the CPU sampler's "not ours");
   * null where it could not be read (members on other machines). Absent in older files.
   */
  readonly otherPctOfCore?: number | null;
}

/**
 * How far a calibration's mean may run over its median before the reading counts as held up by
 * the machine (a JVM's pause, a build beside it) rather than the target's cost: max(2 ms, 50 %).
 * ZooKeeper's writes are skewed of themselves: three calibrations of one run here (2026-11-28)
 * ran 0.8-1.4 ms over their medians for the leader's writes and 0.6-2.1 ms for the followers'
 * (medians 3.8-4.6 ms). A pause of a second in the calibration's 3 s runs the mean far past that;
 * load beside the run that lasts the whole calibration moves the median too (FLOOR_OTHER_MAX_PCT).
 */
export const FLOOR_STALL_SLACK_MS = 2;
export const FLOOR_STALL_SHARE = 0.5;

/**
 * Other work beside a calibration, % of one core, past which its figures are the machine's as
 * much as the target's. A build beside a ZooKeeper run here (2026-11-28) took its calibration from
 * the usual 4-5 ms to 11.5 ms for the leader's writes and 12.9 ms for the followers', their
 * medians moving with them (8.0 and 11.0): no gap between mean and median shows that.
 */
export const FLOOR_OTHER_MAX_PCT = 20;

/**
 * What held a calibration up, in words: each kind of write whose mean runs past its median by
 * more than the stall allowance (a pause), and other work beside it past FLOOR_OTHER_MAX_PCT.
 */
export function floorStalls(r: FloorReading): string[] {
  const out: string[] = [];
  if (besideOtherWork(r)) out.push(`${r.otherPctOfCore!.toFixed(0)} % of a core of other work beside it`);
  for (const { kind, meanMs, medianMs } of meansAndMedians(r))
    if (meanMs - medianMs > Math.max(FLOOR_STALL_SLACK_MS, FLOOR_STALL_SHARE * medianMs))
      out.push(`${kind} mean ${meanMs.toFixed(2)} ms over its median ${medianMs.toFixed(2)}`);
  return out;
}

/**
 * How held up a calibration was, to choose the least held up: ∞ beside other work past
 * FLOOR_OTHER_MAX_PCT, else the most any kind of write's mean ran past its median, ms.
 */
export function floorStallMs(r: FloorReading): number {
  if (besideOtherWork(r)) return Infinity;
  // A kind of write not measured counts as 0.
  const gaps = meansAndMedians(r).map((k) => k.meanMs - k.medianMs);
  return gaps.length === 2 ? Math.max(...gaps) : Math.max(0, ...gaps);
}

const besideOtherWork = (r: FloorReading): boolean => (r.otherPctOfCore ?? 0) > FLOOR_OTHER_MAX_PCT;

/** Each kind of write the calibration measured, with its mean and median. */
type MeanAndMedian = { kind: string; meanMs: number; medianMs: number };
function meansAndMedians(r: FloorReading): MeanAndMedian[] {
  return [
    { kind: 'leader', meanMs: r.leaderMs, medianMs: r.leaderMedianMs },
    { kind: 'follower', meanMs: r.followerMs, medianMs: r.followerMedianMs },
  ].filter((k): k is MeanAndMedian => k.meanMs !== null && k.medianMs !== null);
}

/** A data center's floor with `leader` leading and `alive` up: null where nothing was measured. */
export function floorOfDc(
  topology: Topology,
  floor: NodeFloor,
  dc: string,
  leader: NodeId,
  alive?: readonly NodeId[],
): number | null {
  const servers = topology.datacenters
    .find((d) => d.name === dc)
    ?.nodes.filter((n) => alive === undefined || alive.includes(n.id));
  if (!servers || servers.length === 0) return null;
  const leaderShare = servers.some((n) => n.id === leader) ? 1 / servers.length : 0;
  if (leaderShare > 0 && floor.leaderMs === null) return null;
  if (leaderShare < 1 && floor.followerMs === null) return null;
  return (floor.leaderMs ?? 0) * leaderShare + (floor.followerMs ?? 0) * (1 - leaderShare);
}

export interface CalibrateOptions {
  readonly leader: NodeId;
  /** Every node and where its clients connect. */
  readonly nodes: ReadonlyArray<{ readonly id: NodeId; readonly host: string; readonly port: number }>;
  /** Writes per second (the run's rate), bytes per write. */
  readonly rate: number;
  readonly size: number;
  readonly durationMs: number;
  readonly clientId: string;
  /** The target's client (default: the POLE node's). */
  readonly connect?: ConnectWriteClient;
}

type Target = { readonly id: NodeId; readonly host: string; readonly port: number };

/**
 * Writes at `rate` to each of `targets` in turn for `durationMs`, paced from one clock; resolves
 * with each write's latency from its intended send time (like the agents' corrected latency), by
 * target, once every write has settled; rejects with the first failure.
 */
async function paceWrites(
  targets: readonly Target[],
  o: {
    rate: number;
    size: number;
    durationMs: number;
    clientId: string;
    pathPrefix: string;
    connect?: ConnectWriteClient;
  },
): Promise<{ count: number; latencies: Array<{ i: number; id: NodeId; ms: number }> }> {
  const connect = o.connect ?? connectPoleWriter;
  const clients = await Promise.all(
    targets.map(async (n) => ({ id: n.id, client: await connect(n, { requestTimeoutMs: 5_000 }) })),
  );
  try {
    const data = new Uint8Array(o.size);
    const gap = 1000 / Math.max(1, o.rate);
    const count = Math.max(3 * clients.length, Math.round(o.durationMs / gap));
    const latencies: Array<{ i: number; id: NodeId; ms: number }> = [];
    const start = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 1; i <= count; i++) {
      const due = start + i * gap;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const target = clients[i % clients.length]!;
      pending.push(
        target.client
          .write(`${o.pathPrefix}/${i}`, data, { clientId: o.clientId, requestId: i })
          .then(() => void latencies.push({ i, id: target.id, ms: performance.now() - due })),
      );
    }
    // Settle every write before judging: a rejection left pending would surface later unhandled.
    const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return { count, latencies };
  } finally {
    await Promise.allSettled(clients.map((c) => c.client.close()));
  }
}

/** Writes at `rate` to each node in turn for `durationMs`; the first third is warm-up. */
export async function calibrateFloor(o: CalibrateOptions): Promise<{ count: number; reading: FloorReading }> {
  const { count, latencies } = await paceWrites(o.nodes, { ...o, pathPrefix: FLOOR_PREFIX });
  // The first third pays for connections and JIT warm-up: not the steady cost.
  const steady = latencies.filter((l) => l.i > count / 3);
  const leader = steady.filter((l) => l.id === o.leader).map((l) => l.ms);
  const follower = steady.filter((l) => l.id !== o.leader).map((l) => l.ms);
  return {
    count,
    reading: {
      leaderMs: mean(leader),
      leaderMedianMs: medianOrNull(leader),
      followerMs: mean(follower),
      followerMedianMs: medianOrNull(follower),
      writes: steady.length,
    },
  };
}

const mean = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
const medianOrNull = (xs: readonly number[]): number | null => (xs.length === 0 ? null : median(xs));

/**
 * Warm-up before the load: writes at the run's rate straight to the leader, through its real
 * quorum, for `durationMs`, measured by nobody. The nodes' write path is compiled and their
 * connections and buffers are grown before the first measured window (without it, the first
 * seconds of a run measured 5-8 ms more on the e2e fixture at 200 writes/s).
 */
export async function warmUp(leader: Target, o: Omit<CalibrateOptions, 'leader' | 'nodes'>): Promise<void> {
  await paceWrites([leader], { ...o, pathPrefix: WARMUP_PREFIX });
}

/** What the report says when no floor could be measured. */
export function unmeasuredFloor(reason: string): NodeFloor {
  return { method: `not measured: ${reason}`, leaderMs: null, followerMs: null, writes: 0 };
}
