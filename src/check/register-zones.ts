// Linearizability of one register whose writes all wrote different values, decided without a
// search, in O(n log n): Gibbons and Korach's result for registers with a known write per read,
// in the form of Golab, Li and Shah's zones. Each write and the reads of its value form a
// cluster; the initial value's cluster has a write at the beginning of time. A cluster whose
// earliest completion comes before its latest invoke must hold the register from that completion
// to that invoke: its forward zone. Otherwise it may take effect at any instant between its
// latest invoke and its earliest completion: its backward zone. The history is linearizable
// exactly when every read's write was invoked before the read completed, no two forward zones
// overlap, and no backward zone lies inside a forward zone.
//
// The search (linearizable.ts) decides the same question for any history; on histories both can
// decide, the tests hold them to the same verdict. This one is what makes long histories of
// many concurrent clients cheap: the search's cost grows with how many operations overlap.
import type { RegisterValue } from '../vocabulary/history.js';
import type { Op } from './history-ops.js';
import { withoutUnseenDoubts } from './linearizable.js';

export interface ZoneVerdict {
  readonly verdict: 'linearizable' | 'violated';
  /** Where violated: the operations of the clusters that show it (their defining ones). */
  readonly witness?: readonly Op[];
}

interface Cluster {
  /** undefined: the initial value's. */
  readonly write: Op | undefined;
  readonly reads: Op[];
  /** The operation completing first, and the one invoked last. */
  firstRet: Op | undefined;
  lastCall: Op | undefined;
  lo: number;
  hi: number;
  forward: boolean;
}

/**
 * The zones' verdict, or undefined where they do not apply: a cas among the operations, or two
 * writes of one value (the reads' writes are then not known).
 */
export function zoneVerdict(given: readonly Op[]): ZoneVerdict | undefined {
  const ops = withoutUnseenDoubts(given);
  const writes = new Map<RegisterValue, Op>();
  for (const o of ops) {
    if (o.f === 'cas') return undefined;
    if (o.f !== 'write') continue;
    const v = o.input as RegisterValue;
    if (v === null || writes.has(v)) return undefined;
    writes.set(v, o);
  }
  const initial = newCluster(undefined);
  const clusters = new Map<RegisterValue, Cluster>([[null, initial]]);
  for (const w of writes.values()) clusters.set(w.input as RegisterValue, newCluster(w));
  for (const r of ops) {
    if (r.f !== 'read') continue;
    const c = clusters.get(r.output);
    // A read of a value nobody wrote; a read completed before its write was invoked.
    if (!c) return { verdict: 'violated', witness: [r] };
    if (c.write && !(c.write.call <= r.ret)) return { verdict: 'violated', witness: [c.write, r] };
    c.reads.push(r);
  }
  const zones = [...clusters.values()].map(shape);
  const forward = zones.filter((z) => z.forward).sort((a, b) => a.lo - b.lo);
  for (let i = 1; i < forward.length; i++) {
    const [a, b] = [forward[i - 1]!, forward[i]!];
    if (b.lo < a.hi) return { verdict: 'violated', witness: [...defining(a), ...defining(b)] };
  }
  // A backward zone inside a forward one: the forward zones do not overlap, so only the one
  // starting last before the backward zone can hold it.
  for (const z of zones) {
    if (z.forward) continue;
    const f = lastStartingBefore(forward, z.lo);
    if (f && f.lo < z.lo && z.hi < f.hi)
      return { verdict: 'violated', witness: [...defining(f), ...defining(z)] };
  }
  return { verdict: 'linearizable' };
}

function newCluster(write: Op | undefined): Cluster {
  return { write, reads: [], firstRet: undefined, lastCall: undefined, lo: 0, hi: 0, forward: false };
}

/** Its zone: forward from its first completion to its last invoke, or backward the other way. */
function shape(c: Cluster): Cluster {
  const members = c.write ? [c.write, ...c.reads] : c.reads;
  let minRet = c.write ? Infinity : -Infinity;
  let maxCall = -Infinity;
  for (const o of members) {
    if (o.ret < minRet) {
      minRet = o.ret;
      c.firstRet = o;
    }
    if (o.call > maxCall) {
      maxCall = o.call;
      c.lastCall = o;
    }
  }
  c.forward = minRet < maxCall;
  c.lo = c.forward ? minRet : maxCall;
  c.hi = c.forward ? maxCall : minRet;
  return c;
}

/** The operations that fix a cluster's zone, and its write (without it its reads read nothing). */
function defining(c: Cluster): Op[] {
  return [...new Set([c.write, c.firstRet, c.lastCall].filter((o): o is Op => o !== undefined))];
}

function lastStartingBefore(sorted: readonly Cluster[], at: number): Cluster | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.lo < at) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? sorted[lo - 1] : undefined;
}
