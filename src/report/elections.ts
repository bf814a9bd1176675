// Every election of a run, not only the one the recovery phases are timed from: for each fault
// that took the serving leader out (killed, paused, cut off, or a link change it resigned over),
// who served next and how long that took; and the elections no fault explains. A soak's "every
// election completed" is read here. Pure: built from the collected events and the faults' marks,
// so it is tested on made-up events.
import type { NodeEvent } from '../vocabulary/node-events.js';
import type { FaultMark } from '../vocabulary/names.js';
import { spread as minMedianMax, type MinMedianMax } from '../util/spread.js';

/** A new leader must serve within this long of the fault that took the old one out. */
export const ELECTION_BOUND_MS = 30_000;

/** A fault that took the serving leader out, as the scenario saw it. */
export interface Deposition {
  /** Wall-clock ms: when the fault struck (for a kill, when the process was gone). */
  readonly at: number;
  readonly mark: FaultMark;
  /** The leader it took out. */
  readonly leader: string;
}

export interface ElectionRecord {
  /** Seconds from the load start to the fault. */
  readonly atS: number;
  /** The fault that took the leader out. */
  readonly cause: FaultMark;
  readonly leader: string;
  /** Who served next; null when nobody did within the bound and before the next such fault. */
  readonly elected: string | null;
  /** From the fault to the new leader's `elected`, and to its `serving`; null: not observed. */
  readonly electedMs: number | null;
  readonly servingMs: number | null;
  /** Leaders elected in between that never served (a failed round); 0 normally. */
  readonly failedRounds: number;
}

export interface ElectionsInfo {
  /** Faults that took the serving leader out. */
  readonly deposed: number;
  /** Of those, the ones after which a new leader served within the bound. */
  readonly completed: number;
  readonly incomplete: number;
  /** Over the completed ones, ms from the fault. */
  readonly electedMs: MinMedianMax | null;
  readonly servingMs: MinMedianMax | null;
  /** Leaders that served without a fault having taken the last one out (seconds from the load start). */
  readonly unprovoked: readonly { readonly atS: number; readonly leader: string }[];
  readonly list: readonly ElectionRecord[];
}

type Ev = Pick<NodeEvent, 't' | 'node' | 'ev'> & { readonly leader?: string; readonly epoch?: number };

/**
 * `events` in time order; `depositions` in time order; `loadStart` and `end` (wall ms) bound the
 * load: elections outside it are not the run's to explain.
 */
export function summariseElections(
  events: readonly Ev[],
  depositions: readonly Deposition[],
  loadStart: number,
  end: number,
  boundMs = ELECTION_BOUND_MS,
): ElectionsInfo {
  // A leader's own `serving` (no leader field) and `elected` (names itself) events, in the load.
  const serving = events.filter(
    (e) => e.ev === 'serving' && e.leader === undefined && e.t >= loadStart && e.t <= end,
  );
  const elected = events.filter(
    (e) => e.ev === 'elected' && e.leader === e.node && e.t >= loadStart && e.t <= end,
  );
  const explained = new Set<Ev>();
  const list: ElectionRecord[] = depositions.map((d, i) => {
    const until = Math.min(depositions[i + 1]?.at ?? end, d.at + boundMs, end);
    // A leader of a newer epoch: another member, or the same one elected again (a leader that
    // stepped down for a lost quorum may win the next election); without epochs, another member.
    const epochBefore = events
      .filter((e) => e.ev === 'serving' && e.leader === undefined && e.t < d.at)
      .at(-1)?.epoch;
    const newer = (e: Ev): boolean =>
      e.epoch !== undefined && epochBefore !== undefined ? e.epoch > epochBefore : e.node !== d.leader;
    const served = serving.find((e) => e.t >= d.at && e.t <= until && newer(e));
    const atS = (d.at - loadStart) / 1000;
    if (!served)
      return {
        atS,
        cause: d.mark,
        leader: d.leader,
        elected: null,
        electedMs: null,
        servingMs: null,
        failedRounds: 0,
      };
    explained.add(served);
    const rounds = elected.filter((e) => e.t >= d.at && e.t <= served.t);
    const own = rounds.filter((e) => e.node === served.node).at(-1);
    return {
      atS,
      cause: d.mark,
      leader: d.leader,
      elected: served.node,
      electedMs: own ? own.t - d.at : null,
      servingMs: served.t - d.at,
      failedRounds: rounds.filter((e) => e.node !== served.node).length,
    };
  });
  // A leader that starts serving with nobody taken out: a resignation, a lost quorum. The leader
  // serving at the load start has no predecessor and is left out, as is a leader re-announcing
  // itself (several `serving` events of one leader in a row).
  const unprovoked: { atS: number; leader: string }[] = [];
  let current = events.filter((e) => e.ev === 'serving' && e.leader === undefined && e.t < loadStart).at(-1);
  for (const e of serving) {
    // A new leader, or the same one at a newer epoch (it stepped down and won again).
    const changed =
      current !== undefined &&
      (e.node !== current.node ||
        (e.epoch !== undefined && current.epoch !== undefined && e.epoch > current.epoch));
    if (changed && !explained.has(e)) unprovoked.push({ atS: (e.t - loadStart) / 1000, leader: e.node });
    current = e;
  }
  const done = list.filter((r) => r.servingMs !== null);
  return {
    deposed: list.length,
    completed: done.length,
    incomplete: list.length - done.length,
    electedMs: spread(done.flatMap((r) => (r.electedMs === null ? [] : [r.electedMs]))),
    servingMs: spread(done.map((r) => r.servingMs as number)),
    unprovoked,
    list,
  };
}

function spread(values: readonly number[]): MinMedianMax | null {
  return values.length === 0 ? null : minMedianMax(values);
}
