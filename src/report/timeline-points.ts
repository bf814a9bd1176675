// The run's timeline from the load agents' per-second interval messages: one point per second of
// load, all data centers merged. An agent's intervals are whole seconds from its own start, except
// at the edges: the load's last second may be cut short, and the agent's final interval, once it
// stopped sending, holds only the writes still in flight when the load ended. A point's rate is
// over the length its intervals really covered, so a short second never reads as a dip, and what
// was acknowledged after the load is counted apart, not drawn as a last, nearly empty second.
import * as hdr from 'hdr-histogram-js';
import type { IntervalMessage } from '../load/agent-protocol.js';
import type { AfterLoad, TimelinePoint } from './result.js';

/** A point covering less than this is said to be cut short (its `lengthS` is given). */
export const SHORT_SECOND_S = 0.9;

type Interval = Pick<
  IntervalMessage,
  'dc' | 'index' | 'startMs' | 'endMs' | 'histogram' | 'acked' | 'failed'
>;

/**
 * `loadStart`: wall ms of t = 0; `durationMs`: how long each agent sent for (0 or less: until it was
 * stopped, so nothing is after the load).
 */
export function timelineSeconds(
  intervals: readonly Interval[],
  loadStart: number,
  durationMs: number,
): { seconds: TimelinePoint[]; afterLoad: AfterLoad | null } {
  // Each agent sends for durationMs from its own start (it may have started a little after
  // loadStart): its first interval's start, less the whole seconds before it if that one is lost.
  const origin = new Map<string, number>();
  for (const m of intervals)
    origin.set(m.dc, Math.min(origin.get(m.dc) ?? Infinity, m.startMs - m.index * 1000));
  const bySecond = new Map<number, { m: Interval; lengthMs: number }[]>();
  let after: { acked: number; errors: number; from: number; to: number } | null = null;
  for (const m of intervals) {
    const loadEnd = durationMs > 0 ? (origin.get(m.dc) ?? loadStart) + durationMs : Infinity;
    const lengthMs = Math.min(m.endMs, loadEnd) - m.startMs;
    if (lengthMs <= 0) {
      after ??= { acked: 0, errors: 0, from: m.startMs, to: m.endMs };
      after.acked += m.acked;
      after.errors += m.failed;
      after.from = Math.min(after.from, m.startMs);
      after.to = Math.max(after.to, m.endMs);
      continue;
    }
    const list = bySecond.get(m.index) ?? [];
    list.push({ m, lengthMs });
    bySecond.set(m.index, list);
  }
  const seconds = [...bySecond.keys()]
    .sort((a, b) => a - b)
    .map((t): TimelinePoint => {
      const list = bySecond.get(t)!;
      const merged = hdr.build({
        lowestDiscernibleValue: 1,
        highestTrackableValue: 60_000_000,
        numberOfSignificantValueDigits: 3,
      });
      try {
        for (const { m } of list) {
          const h = hdr.decodeFromCompressedBase64(m.histogram);
          merged.add(h);
          h.destroy();
        }
        // The data centers' agents ran side by side: the second's rate is the sum of theirs.
        const writesPerSec = list.reduce((s, { m, lengthMs }) => s + (m.acked * 1000) / lengthMs, 0);
        const lengthS = Math.max(...list.map((x) => x.lengthMs)) / 1000;
        return {
          t,
          writesPerSec: Math.round(writesPerSec * 10) / 10,
          p99Ms: merged.totalCount > 0 ? merged.getValueAtPercentile(99) / 1000 : null,
          errors: list.reduce((s, { m }) => s + m.failed, 0),
          ...(lengthS < SHORT_SECOND_S ? { lengthS: Math.round(lengthS * 1000) / 1000 } : {}),
        };
      } finally {
        merged.destroy();
      }
    });
  return {
    seconds,
    afterLoad: after
      ? { acked: after.acked, errors: after.errors, lengthS: Math.round(after.to - after.from) / 1000 }
      : null,
  };
}
