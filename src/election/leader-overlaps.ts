// The election's safety check, from the participants' own timestamped events (one machine, one
// clock): turn each participant's `lead`, `lead-lost` and `crashed` events into the intervals in
// which it believed it led, and report every instant two participants believed so at once. Also
// the liveness figure: from a kill to the first participant that believes it leads. Pure.
import type { ElectionEvent } from './participant.js';

export interface LeadInterval {
  readonly participant: string;
  readonly from: number;
  /** Exclusive; the run's end when nothing ended it earlier. */
  readonly to: number;
}

export interface LeaderOverlap {
  readonly a: string;
  readonly b: string;
  readonly from: number;
  readonly to: number;
}

/**
 * A `lead` at t with lease end u means "I lead from t until u" (until a later `lead-lost` or
 * `crashed` if u is null); a `lead` before the current interval ends renews it.
 */
export function leadIntervals(events: readonly ElectionEvent[], end: number): LeadInterval[] {
  const out: LeadInterval[] = [];
  const open = new Map<string, { from: number; to: number }>();
  const sorted = [...events].sort((x, y) => x.t - y.t);
  const close = (who: string, at: number): void => {
    const cur = open.get(who);
    if (!cur) return;
    open.delete(who);
    const to = Math.min(cur.to, at);
    if (to > cur.from) out.push({ participant: who, from: cur.from, to });
  };
  for (const e of sorted) {
    const cur = open.get(e.participant);
    if (e.ev === 'lead') {
      const until = e.until ?? Infinity;
      if (cur && e.t < cur.to) cur.to = Math.max(cur.to, until);
      else {
        if (cur) close(e.participant, cur.to);
        open.set(e.participant, { from: e.t, to: until });
      }
    } else if (e.ev === 'lead-lost' || e.ev === 'crashed') close(e.participant, e.t);
  }
  for (const who of [...open.keys()]) close(who, end);
  return out.sort((x, y) => x.from - y.from);
}

/** Every pair of intervals of different participants that share an instant. */
export function leaderOverlaps(intervals: readonly LeadInterval[]): LeaderOverlap[] {
  const out: LeaderOverlap[] = [];
  const byStart = [...intervals].sort((x, y) => x.from - y.from);
  for (let i = 0; i < byStart.length; i++)
    for (let j = i + 1; j < byStart.length && byStart[j]!.from < byStart[i]!.to; j++) {
      const x = byStart[i]!;
      const y = byStart[j]!;
      if (x.participant === y.participant) continue;
      out.push({ a: x.participant, b: y.participant, from: y.from, to: Math.min(x.to, y.to) });
    }
  return out;
}

/** From `killAt` to the first interval, of anybody but `killed`, that starts at or after it; null: none. */
export function failoverMs(
  intervals: readonly LeadInterval[],
  killed: string,
  killAt: number,
): number | null {
  const next = intervals.find((i) => i.participant !== killed && i.from >= killAt);
  return next ? next.from - killAt : null;
}
