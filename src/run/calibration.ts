// Calibration of the node floor, for a target whose members trace no writes (a target that does
// gets its floor from them: report/traced-floor.ts). It comes after the load, so that the
// calibration's delay-free round trips can never reach the RTTs that a measured oracle elects by.
import {
  FLOOR_OTHER_MAX_PCT,
  FLOOR_PREFIX,
  FLOOR_STALL_SHARE,
  FLOOR_STALL_SLACK_MS,
  calibrateFloor,
  floorStallMs,
  floorStalls,
  unmeasuredFloor,
  type FloorReading,
  type NodeFloor,
} from '../measure/node-floor.js';
import { CpuSampler } from '../measure/cpu-sampler.js';
import type { NodeId } from '../vocabulary/names.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Topology } from '../topology/topology.js';
import type { RunContext } from './run-context.js';

/** How long a calibration writes, with the delays taken out. */
const CALIBRATION_MS = 3_000;
/**
 * Calibrations at most: another is taken while the last one looks held up (floorStalls: its mean
 * far past its median, or other work beside it), the least held up kept, every one in the result.
 */
const MAX_CALIBRATIONS = 3;

export async function calibrate(run: RunContext, leader: NodeId): Promise<void> {
  if (run.rt.target.tracesWrites) return;
  run.progress('calibrating the node floor', { leader });
  run.state.floor = await measureFloor(run.rt, run.t, leader, `run${run.o.seed}-floor`);
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
    const nodes = t.nodes
      .filter((n) => rt.isRunning(n.id))
      .map((n) => ({ id: n.id, ...rt.clientAddress(n.id) }));
    const readings: FloorReading[] = [];
    let count = 0;
    do {
      const other = await otherWork(rt);
      const c = await calibrateFloor({
        connect: rt.target.connect,
        leader,
        nodes,
        rate: t.workload.rate,
        size: t.workload.size,
        durationMs: CALIBRATION_MS,
        // Each calibration numbers its writes from 1: a client id of its own, so that a target
        // that deduplicates by client and request id takes none of them for a retry.
        clientId: `${clientId}-${readings.length + 1}`,
      });
      count = c.count;
      readings.push({ ...c.reading, otherPctOfCore: await other() });
    } while (floorStalls(readings.at(-1)!).length > 0 && readings.length < MAX_CALIBRATIONS);
    const kept = readings.reduce(
      (best, r, i) => (floorStallMs(r) < floorStallMs(readings[best]!) ? i : best),
      0,
    );
    const k = readings[kept]!;
    const again =
      readings.length === 1
        ? ''
        : `; ${readings.length} calibrations, the ${ordinal(kept + 1)} kept: a calibration whose mean ran past its median by more than max(${FLOOR_STALL_SLACK_MS} ms, ${FLOOR_STALL_SHARE * 100} %), or beside more than ${FLOOR_OTHER_MAX_PCT} % of a core of other work, was taken again`;
    return {
      method:
        `calibrated after the load on the run's live members with every delay between data centers ` +
        `set to zero (the relay still in the path): ${count} writes of ${t.workload.size} bytes at ${t.workload.rate}/s, ` +
        `to each node in turn, by the harness's client${again}`,
      leaderMs: k.leaderMs,
      followerMs: k.followerMs,
      writes: k.writes,
      readings,
      kept,
    };
  } catch (err) {
    return unmeasuredFloor(`the calibration failed: ${(err as Error).message}`);
  } finally {
    await rt.shaping.change('topology');
  }
}

/**
 * Starts reading the CPU of whatever is not the run's (the harness, its members and agents) on
 * this machine; the function returned ends it with that share, % of one core. Null where members
 * run elsewhere (their CPU is not this machine's) or /proc cannot be read.
 */
async function otherWork(rt: Runtime): Promise<() => Promise<number | null>> {
  if (rt.remoteCpu) return () => Promise.resolve(null);
  // One sample at the start and one at the end: nothing in between to wake the harness.
  const sampler = new CpuSampler(
    { harness: () => [{ pid: process.pid, label: 'harness' }], ...rt.cpuGroups() },
    undefined,
    24 * 3600_000,
  );
  await sampler.start();
  return async () => (await sampler.stop()).otherPctOfCore;
}

const ordinal = (n: number): string => ['first', 'second', 'third'][n - 1] ?? `${n}th`;
