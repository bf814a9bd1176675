// The prediction a run's measurements are held against, per data center and window: the paper's
// model (forwarding RTT to the window's leader + its θc, from the topology alone) and, apart, the
// node floor's mix for that leader. Pure, so it is tested on the paper's set-ups directly.
import type { NodeId } from '../node/core/types.js';
import { floorOfDc, type NodeFloor } from '../measure/node-floor.js';
import { predictLatency } from '../topology/model.js';
import type { Topology } from '../topology/topology.js';
import type { FloorInfo, ModelWindows } from './result.js';

export interface ModelColumns {
  readonly model: Record<string, ModelWindows>;
  readonly floor: FloorInfo;
}

/**
 * `initial` leads before the fault; `elected` after it, with `killed` gone. A window without a
 * leader (no kill, no election) has no prediction.
 */
export function modelColumns(
  t: Topology,
  leaders: { initial: NodeId | null; elected: NodeId | null; killed: NodeId | null },
  floor: NodeFloor,
): ModelColumns {
  const alive = t.nodes.map((n) => n.id).filter((id) => id !== leaders.killed);
  const before = leaders.initial ? predictLatency(t, leaders.initial) : undefined;
  const after = leaders.elected ? predictLatency(t, leaders.elected, alive) : undefined;
  // The kept calibration's medians, mixed the same way: what a window's median is held to (a
  // target's writes are skewed, so its mean floor sits above the typical write's).
  const kept = floor.readings?.[floor.kept ?? -1];
  const medianFloor: NodeFloor | undefined = kept && {
    ...floor,
    leaderMs: kept.leaderMedianMs,
    followerMs: kept.followerMedianMs,
  };
  const model: Record<string, ModelWindows> = {};
  const perDc: Record<string, ModelWindows> = {};
  const perDcMedian: Record<string, ModelWindows> = {};
  const windowsOf = (f: NodeFloor, dc: string): ModelWindows => ({
    before: leaders.initial ? floorOfDc(t, f, dc, leaders.initial) : null,
    after: leaders.elected ? floorOfDc(t, f, dc, leaders.elected, alive) : null,
  });
  for (const dc of t.datacenters) {
    model[dc.name] = { before: before?.[dc.name] ?? null, after: after?.[dc.name] ?? null };
    perDc[dc.name] = windowsOf(floor, dc.name);
    if (medianFloor) perDcMedian[dc.name] = windowsOf(medianFloor, dc.name);
  }
  const source = floor.leaderMs === null && floor.followerMs === null ? 'none' : 'calibrated';
  return { model, floor: { source, ...floor, perDc, ...(medianFloor ? { perDcMedian } : {}) } };
}
