// Every snapshot a member sent another during a run (SNAP sync, or a new leader fetching history
// it lacked), paired with its receipt: who sent it, to whom, how big, and how long from the moment
// the sender had it ready to the moment the receiver installed it (one machine, one clock). The
// paper's recovery experiments (Fig. 8) turn on this transfer. Pure.
import { isEvent, type NodeEvent } from '../vocabulary/node-events.js';

export interface SnapshotTransfer {
  /** Seconds from the load start that the sender emitted it (negative: before the load). */
  readonly atS: number;
  readonly from: string;
  readonly to: string;
  readonly bytes: number;
  /** The snapshot's zxid. */
  readonly zxid: string;
  /** Sent until installed; null when the receiver never installed it (it died, or the run ended). */
  readonly transferMs: number | null;
  /** sync: the leader brought a follower in line; fetched: a new leader fetched history it lacked. */
  readonly why: string | null;
}

/** `events` in time order. Each receipt pairs with the earliest unpaired send of the same snapshot between the same two. */
export function snapshotTransfers(events: readonly NodeEvent[], loadStart: number): SnapshotTransfer[] {
  const receipts = events.filter(isEvent('snapshot-received'));
  const used = new Set<NodeEvent>();
  return events.filter(isEvent('snapshot-sent')).map((sent) => {
    const received = receipts.find(
      (r) =>
        r.t >= sent.t && !used.has(r) && r.node === sent.to && r.from === sent.node && r.zxid === sent.zxid,
    );
    if (received) used.add(received);
    return {
      atS: (sent.t - loadStart) / 1000,
      from: sent.node,
      to: sent.to,
      bytes: sent.bytes,
      zxid: sent.zxid,
      transferMs: received ? received.t - sent.t : null,
      why: received ? received.why : null,
    };
  });
}

/** Stalls listed one by one per member, the rest only counted: a soak on a busy machine has many. */
export const MAX_LISTED_STALLS = 2000;

/** A member's event-loop stalls over the run (`loop-stalled` events: at least LOOP_STALL_MS each). */
export interface LoopStalls {
  readonly node: string;
  readonly count: number;
  readonly longestMs: number;
  /** Seconds from the load start when the longest one ended. */
  readonly longestAtS: number;
  /**
   * Each stall, in time order: seconds from the load start when it ended, and how long the loop was
   * held; the first MAX_LISTED_STALLS (added within result@7: absent from older files).
   */
  readonly stalls?: readonly { readonly atS: number; readonly ms: number }[];
}

/** Per member that stalled, in member order; members that never stalled are left out. */
export function loopStalls(events: readonly NodeEvent[], loadStart: number): LoopStalls[] {
  const by = new Map<
    string,
    { count: number; longestMs: number; longestAtS: number; stalls: { atS: number; ms: number }[] }
  >();
  for (const e of events.filter(isEvent('loop-stalled'))) {
    const s = by.get(e.node) ?? { count: 0, longestMs: 0, longestAtS: 0, stalls: [] };
    const atS = (e.t - loadStart) / 1000;
    s.count += 1;
    if (e.ms > s.longestMs) {
      s.longestMs = e.ms;
      s.longestAtS = atS;
    }
    if (s.stalls.length < MAX_LISTED_STALLS) s.stalls.push({ atS, ms: e.ms });
    by.set(e.node, s);
  }
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([node, s]) => ({ node, ...s }));
}
