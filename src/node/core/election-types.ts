// Messages and outputs of the POLE election (Algorithm 1 of Becker, Junqueira, Serafini 2011).
import type { ElectionEndReason } from '../../vocabulary/node-events.js';
import type { NodeId, Score } from './types.js';

export type { ElectionEndReason };

/** (score, id): what a node proposes as leader. `sid` is the numeric server id used to break ties. */
export interface Proposal {
  readonly score: Score;
  readonly id: NodeId;
  readonly sid: number;
}

/** ⟨P, epoch, proposal⟩ and ⟨V, epoch, leader⟩. */
export type ElectionMessage =
  | { readonly type: 'P'; readonly epoch: number; readonly proposal: Proposal }
  | { readonly type: 'V'; readonly epoch: number; readonly leader: NodeId };

export interface ElectionSend {
  /** A peer, never the node itself: messages to self are handled inside the election. */
  readonly to: NodeId;
  readonly msg: ElectionMessage;
}

/** The outcome of an election instance, as this node learnt it. */
export interface ElectionDecision {
  readonly leader: NodeId;
  readonly epoch: number;
  /** How it was decided: its own election timer fired, or a quorum of votes including the leader's. */
  readonly via: 'timer' | 'votes';
  /** The best proposal this node saw from every server it heard from in this epoch (for the `elected` event). */
  readonly proposals: ReadonlyArray<{ readonly id: NodeId; readonly score: Score }>;
  /**
   * What ended the collection, so a report can say what bounded the election: every member had
   * proposed (or voted), leaving nothing to wait for; every member not known to be down had
   * (waitFor 'live'); the election timer T ran out with a quorum
   * but not everybody heard; or a quorum's votes named an established leader. `via` says 'timer'
   * for the first three alike (each is the paper's election timer firing).
   */
  readonly reason: ElectionEndReason;
  /** T, ms: how long the collection waits once a quorum has proposed. */
  readonly timeoutMs: number;
  /** Proposal rounds this node sent in its current epoch: 1, plus one per retry (back-off) before deciding. */
  readonly rounds: number;
  /** Members heard from neither by proposal nor by vote in this node's current epoch, in member order. */
  readonly unheard: readonly NodeId[];
  /** Members taken as down when it decided, in member order (waited for only with waitFor 'all'). */
  readonly down: readonly NodeId[];
}

export interface ElectionOutput {
  readonly sends: ElectionSend[];
  /** Set when this call settled the election. */
  readonly decided?: ElectionDecision;
}
