// Calibration of the node floor, for a target whose members trace no writes (a target that does
// gets its floor from them: report/traced-floor.ts). It comes after the load, so that the
// calibration's delay-free round trips can never reach the RTTs that a measured oracle elects by.
import { FLOOR_PREFIX, calibrateFloor, unmeasuredFloor, type NodeFloor } from '../measure/node-floor.js';
import type { NodeId } from '../node/core/types.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Topology } from '../topology/topology.js';
import type { RunContext } from './run-context.js';

/** How long the calibration writes, with the delays taken out. */
const CALIBRATION_MS = 3_000;

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
    return await calibrateFloor({
      connect: rt.target.connect,
      leader,
      nodes: t.nodes.filter((n) => rt.isRunning(n.id)).map((n) => ({ id: n.id, ...rt.clientAddress(n.id) })),
      rate: t.workload.rate,
      size: t.workload.size,
      durationMs: CALIBRATION_MS,
      clientId,
    });
  } catch (err) {
    return unmeasuredFloor(`the calibration failed: ${(err as Error).message}`);
  } finally {
    await rt.shaping.change('topology');
  }
}
