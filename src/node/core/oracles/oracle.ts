// src/node/core/oracles/: the score oracles (history, rotating, preference, the measured ones), the
// registry that reads a spec such as `latency:10ms,history`, and the score formulas (score-formulas.ts).
//
// The score-oracle plug-in interface (POLE's getScore(epoch) and ≺θ). An oracle scores only the
// node it runs on; the election compares the scores carried in proposals.
import type { NodeId, Score } from '../types.js';
import type { Zxid } from '../../../vocabulary/zxid.js';

/** What a node knows when it scores itself for an election. Measured oracles use the optional parts. */
export interface ScoreContext {
  readonly self: NodeId;
  readonly selfSid: number;
  /** The election instance being scored. */
  readonly epoch: number;
  /** Every member's id, in configuration order. */
  readonly members: readonly NodeId[];
  /** This node's last accepted zxid (the history oracle's score). */
  readonly lastZxid: Zxid;
  /** Servers left out of the score: the failed (or, for resignation, the current) leader. */
  readonly excluded: ReadonlySet<NodeId>;
  /** Mean RTT in ms from this node to every live node it measures (itself = 0). */
  readonly rttMs?: ReadonlyMap<NodeId, number>;
  /** θr of every node: client requests per second each one received (F_i). */
  readonly requestRates?: ReadonlyMap<NodeId, number>;
  /**
   * False while the node has too few RTT samples to judge itself (just started): measured oracles
   * then score it as "not measured". Undefined means whatever rttMs holds is to be trusted.
   */
  readonly measurementsReady?: boolean;
}

export interface Oracle {
  /** The name as written in configuration, e.g. "history" or "latency:10ms,history". */
  readonly name: string;
  score(ctx: ScoreContext): Score;
  /** ≺θ: positive when `a` is the better score, negative when `b` is, zero when equivalent. */
  compare(a: Score, b: Score): number;
  /** Whether scores need RTT measurements (the first election waits for them, up to a bound). */
  readonly measured?: boolean;
  /**
   * How much better `a` is than `b`, as a fraction of `b` (0 when it is not better): resignation's
   * margin. Oracles without a scale leave it out, and any strictly better score counts as enough.
   */
  gain?(a: Score, b: Score): number;
}

/** gain() of an oracle, with the fallback for oracles that have no scale. */
export function scoreGain(oracle: Oracle, a: Score, b: Score): number {
  if (oracle.gain) return oracle.gain(a, b);
  return oracle.compare(a, b) > 0 ? Infinity : 0;
}
