// The prediction a run's measurements are held against, per data center and window: the paper's
// model (forwarding RTT to the window's leader + its θc) and, apart, the node floor's mix for that
// leader, each over the cluster as it stood in that window (cluster-as-it-stands.ts): the members
// the faults left up and on the leader's side, the links as the faults left them. A window the
// faults split (a member restarted inside it) is the time-weighted mean of its parts, as a mean of
// writes sent at a steady rate is. Where the paper's formula has nothing to say (the leader is
// down, it reaches no quorum, a data center has no server it can reach) the window has no model,
// and says why. Pure, so it is tested on the paper's set-ups directly.
import type { NodeId } from '../vocabulary/names.js';
import { floorOfDc, type NodeFloor } from '../measure/node-floor.js';
import { predictLatency, type DcLatency } from '../topology/model.js';
import type { Topology } from '../topology/topology.js';
import type { FaultMark } from '../vocabulary/names.js';
import {
  describeState,
  membersWith,
  rttMatrixIn,
  statesOver,
  type StateSpan,
} from './cluster-as-it-stands.js';
import type { FloorInfo, ModelBasis, ModelWindows, WindowBasis } from './result.js';

/** A window of the load: s from the load start, and the leader that served it. */
export interface ModelSpan {
  readonly fromS: number;
  readonly toS: number;
  /** The leader at the window's start. */
  readonly leader: NodeId | null;
  /**
   * Leaders that took over inside the window, in time order (a leader that resigned for a better
   * placed member, then that one for another): the window's model follows each from its take-over.
   */
  readonly handovers?: readonly { readonly atS: number; readonly leader: NodeId }[];
}

/** The windows a model is made for; null: the run had no such window (or no leader for it). */
export interface ModelSpans {
  readonly before: ModelSpan | null;
  readonly degraded?: ModelSpan | null;
  readonly after: ModelSpan | null;
}

export interface ModelColumns {
  readonly model: Record<string, ModelWindows>;
  readonly floor: FloorInfo;
  readonly basis: ModelBasis;
}

const NAMES = ['before', 'degraded', 'after'] as const;
type WindowName = (typeof NAMES)[number];

/** One part of a window in one state: what the model and the floor predict per data center. */
interface Part {
  readonly lengthS: number;
  readonly model: DcLatency | null;
  readonly floor: (f: NodeFloor, dc: string) => number | null;
}

export function modelColumns(
  t: Topology,
  spans: ModelSpans,
  faults: readonly FaultMark[],
  floor: NodeFloor,
): ModelColumns {
  // The kept calibration's medians, mixed the same way: what a window's median is held to (a
  // target's writes are skewed, so its mean floor sits above the typical write's).
  const kept = floor.readings?.[floor.kept ?? -1];
  const medianFloor: NodeFloor | undefined = kept && {
    ...floor,
    leaderMs: kept.leaderMedianMs,
    followerMs: kept.followerMedianMs,
  };
  const parts = new Map<WindowName, Part[]>();
  const basis: Record<string, WindowBasis> = {};
  for (const w of NAMES) {
    const span = spans[w];
    if (!span) continue;
    const { parts: p, basis: b } = windowParts(t, span, faults);
    parts.set(w, p);
    basis[w] = b;
  }
  const mean = (w: WindowName, value: (p: Part) => number | null | undefined): number | null => {
    const ps = parts.get(w);
    if (!ps || ps.length === 0) return null;
    let sum = 0;
    let length = 0;
    for (const p of ps) {
      const v = value(p);
      if (v === null || v === undefined) return null;
      sum += v * p.lengthS;
      length += p.lengthS;
    }
    return length > 0 ? Math.round((sum / length) * 1e6) / 1e6 : null;
  };
  const windowsOf = (f: (p: Part) => number | null | undefined): ModelWindows => {
    const degraded = spans.degraded ? { degraded: mean('degraded', f) } : {};
    return { before: mean('before', f), ...degraded, after: mean('after', f) };
  };
  const model: Record<string, ModelWindows> = {};
  const perDc: Record<string, ModelWindows> = {};
  const perDcMedian: Record<string, ModelWindows> = {};
  for (const { name: dc } of t.datacenters) {
    model[dc] = windowsOf((p) => p.model?.[dc]);
    perDc[dc] = windowsOf((p) => p.floor(floor, dc));
    if (medianFloor) perDcMedian[dc] = windowsOf((p) => p.floor(medianFloor, dc));
  }
  const source = floor.leaderMs === null && floor.followerMs === null ? 'none' : 'calibrated';
  return {
    model,
    floor: { source, ...floor, perDc, ...(medianFloor ? { perDcMedian } : {}) },
    basis,
  };
}

/** A window split at the faults inside it, each part with its members, links and prediction. */
function windowParts(
  t: Topology,
  span: ModelSpan,
  faults: readonly FaultMark[],
): { parts: Part[]; basis: WindowBasis } {
  const parts: Part[] = [];
  const segments: WindowBasis['segments'][number][] = [];
  for (const s of leaderSpans(span, statesOver(t, faults, span.fromS, Math.max(span.fromS, span.toS)))) {
    const leader = s.leader;
    const lengthS = s.toS - s.fromS;
    const members = leader === null ? [] : membersWith(t, s.state, leader);
    let model: DcLatency | null = null;
    let noModel: string | null = null;
    if (leader === null) noModel = 'no leader served it';
    else if (!members.includes(leader))
      noModel = `its leader ${leader} was ${s.state.down.get(leader) ?? 'cut off'}`;
    else
      try {
        model = predictLatency(t, leader, members, rttMatrixIn(t, s.state));
      } catch (err) {
        noModel = `no quorum: ${leader} reaches ${members.length} of ${t.nodes.length} members (${(err as Error).message})`;
      }
    const unreached = t.datacenters
      .filter((d) => model !== null && model[d.name] === undefined)
      .map((d) => d.name);
    parts.push({
      lengthS,
      model,
      floor: (f, dc) =>
        model !== null && leader !== null && model[dc] !== undefined
          ? floorOfDc(t, f, dc, leader, members)
          : null,
    });
    segments.push({
      fromS: round3(s.fromS),
      toS: round3(s.toS),
      leader,
      members,
      state: describeState(s.state),
      noModel:
        noModel ??
        (unreached.length > 0
          ? `${unreached.join(', ')}: no server up on ${leader}'s side, so no model there`
          : null),
    });
  }
  return {
    parts,
    basis: { leader: span.leader, fromS: round3(span.fromS), toS: round3(span.toS), segments },
  };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** The states of a window split again at each leader's take-over, each part with its leader. */
function leaderSpans(
  span: ModelSpan,
  states: readonly StateSpan[],
): (StateSpan & { leader: NodeId | null })[] {
  const handovers = (span.handovers ?? []).filter((h) => h.atS > span.fromS && h.atS < span.toS);
  const leaderAt = (atS: number): NodeId | null =>
    handovers.filter((h) => h.atS <= atS).at(-1)?.leader ?? span.leader;
  const out: (StateSpan & { leader: NodeId | null })[] = [];
  for (const s of states) {
    const cuts = [s.fromS, ...handovers.map((h) => h.atS).filter((a) => a > s.fromS && a < s.toS), s.toS];
    for (let i = 1; i < cuts.length; i++)
      out.push({ ...s, fromS: cuts[i - 1]!, toS: cuts[i]!, leader: leaderAt(cuts[i - 1]!) });
  }
  return out;
}
