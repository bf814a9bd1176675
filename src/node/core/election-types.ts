// Messages and outputs of the POLE election (Algorithm 1 of Becker, Junqueira, Serafini 2011).
import type { NodeId, Score } from './types.js';

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
}

export interface ElectionOutput {
  readonly sends: ElectionSend[];
  /** Set when this call settled the election. */
  readonly decided?: ElectionDecision;
}
