// The paper's measured scores (section 2.2, computed as in 3.3) from round-trip times and request
// rates, as plain functions. The oracles call them with what a node measured (RTT_i, F_i); the
// topology model calls them with the RTT matrix a topology file configures, so a report can set
// what the oracles elected beside what the configuration predicts.
//
// Conventions (see shared/design/pole-algorithm.md, "Oracles"):
// - `rttMs` holds the candidate's RTT to every server in N' (itself included, at 0). Servers not in
//   the map are suspected crashed or excluded (the failed or current leader); callers remove them.
// - `clusterSize` is |N|, the configured membership: a quorum is ⌊|N|/2⌋ + 1 of *all* servers,
//   however many are alive.
import type { NodeId } from '../types.js';
import { majorityOf } from '../../../util/majority.js';

/** One candidate's view: RTT to every server it counts (N'), and every server's θr (F_i). */
export interface ScoreView {
  readonly rttMs: ReadonlyMap<NodeId, number>;
  readonly requestRates?: ReadonlyMap<NodeId, number>;
}

/** All four measured scores of one candidate; undefined where the candidate cannot have one. */
export interface MeasuredScores {
  /** θc: the quorum-th smallest RTT; undefined when fewer than a quorum is reachable. */
  readonly consensus: number | undefined;
  /** θl = θc + (1/λT) Σ θr(r)·RTT(i,r); undefined without θc. With λT = 0 it equals θc. */
  readonly latency: number | undefined;
  /** θw = θc + max RTT_i; undefined without θc. */
  readonly worstCase: number | undefined;
  /** θr of the candidate itself (0 when unknown). */
  readonly request: number;
}

export function quorumSize(clusterSize: number): number {
  return majorityOf(clusterSize);
}

/**
 * θc: the (⌊|N|/2⌋+1)-th smallest value of RTT_i, self (0) included: the round trip to the slowest
 * member of the fastest quorum the candidate could lead.
 */
export function consensusScore(rttMs: ReadonlyMap<NodeId, number>, clusterSize: number): number | undefined {
  const sorted = [...rttMs.values()].sort((a, b) => a - b);
  return sorted[quorumSize(clusterSize) - 1];
}

/**
 * θl: θc plus the mean forwarding round trip of a request, weighting each server r in N' by the
 * share θr(r)/λT of the requests it receives. λT is the sum of θr over N', so rates of servers left
 * out (the failed leader) do not dilute the mean.
 */
export function latencyScore(view: ScoreView, clusterSize: number): number | undefined {
  const c = consensusScore(view.rttMs, clusterSize);
  if (c === undefined) return undefined;
  let total = 0;
  let weighted = 0;
  for (const [r, rtt] of view.rttMs) {
    const rate = view.requestRates?.get(r) ?? 0;
    total += rate;
    weighted += rate * rtt;
  }
  return total > 0 ? c + weighted / total : c;
}

/** θw: θc plus the largest RTT in RTT_i (the farthest server's round trip to this leader). */
export function worstCaseScore(rttMs: ReadonlyMap<NodeId, number>, clusterSize: number): number | undefined {
  const c = consensusScore(rttMs, clusterSize);
  if (c === undefined) return undefined;
  return c + Math.max(0, ...rttMs.values());
}

export function measuredScores(self: NodeId, view: ScoreView, clusterSize: number): MeasuredScores {
  return {
    consensus: consensusScore(view.rttMs, clusterSize),
    latency: latencyScore(view, clusterSize),
    worstCase: worstCaseScore(view.rttMs, clusterSize),
    request: view.requestRates?.get(self) ?? 0,
  };
}

/** A copy of `m` without the given keys (the N' of the paper: suspected or excluded servers out). */
export function without<V>(m: ReadonlyMap<NodeId, V>, excluded: ReadonlySet<NodeId>): Map<NodeId, V> {
  const out = new Map<NodeId, V>();
  for (const [k, v] of m) if (!excluded.has(k)) out.set(k, v);
  return out;
}

/**
 * From a full RTT matrix (rtt[a][b], symmetric or not: the candidate's row is used), the view of
 * `candidate` over the servers in `alive`, for predicting scores from a configuration.
 */
export function viewFromMatrix(
  candidate: NodeId,
  rttMatrix: ReadonlyMap<NodeId, ReadonlyMap<NodeId, number>>,
  alive: readonly NodeId[],
  requestRates?: ReadonlyMap<NodeId, number>,
): ScoreView {
  const row = rttMatrix.get(candidate);
  const rttMs = new Map<NodeId, number>();
  for (const id of alive) {
    if (id === candidate) rttMs.set(id, 0);
    else {
      const v = row?.get(id);
      if (v === undefined) throw new Error(`RTT matrix has no entry ${candidate} → ${id}`);
      rttMs.set(id, v);
    }
  }
  const rates = requestRates ? new Map([...requestRates].filter(([id]) => alive.includes(id))) : undefined;
  return rates ? { rttMs, requestRates: rates } : { rttMs };
}
