// Messages between nodes: the election's ⟨P⟩/⟨V⟩ and the Zab-like replication protocol, on one
// link per pair of nodes. Binary payloads travel as Uint8Array (the codec sends them raw).
import type { HeartbeatMessage } from './measure/heartbeat-messages.js';
import type { ElectionMessage } from './election-types.js';
import type { NodeId, Txn } from './types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import type { StateSnapshot } from './state-snapshot.js';

/** A run of consecutive counters of one epoch held in a log: lets two nodes find their common prefix. */
export interface EpochRange {
  readonly epoch: number;
  readonly first: number;
  readonly last: number;
}

/** How to bring a log in line with another one: optional snapshot, optional truncation, then txns. */
export interface SyncPlan {
  /** SNAP: replace everything by this state (its log starts after `zxid`). */
  readonly snapshot?: StateSnapshot;
  /** TRUNC: drop every txn after this zxid. */
  readonly truncateTo?: Zxid;
  /** DIFF: txns to append, in order. */
  readonly txns: readonly Txn[];
}

export type ZabMessage =
  // discovery
  /**
   * `session` numbers the follower's attempts to follow: the leader echoes it in LEADERINFO, and the
   * follower ignores everything from the leader before that echo, since a link that stayed up
   * across an abandoned attempt may still carry that attempt's SYNC and PROPOSALs.
   */
  | {
      readonly type: 'FOLLOWERINFO';
      readonly epoch: number;
      readonly acceptedEpoch: number;
      readonly lastZxid: Zxid;
      readonly session: number;
    }
  /**
   * `established`: the leader already holds a quorum of first acknowledgements of `epoch` (see
   * NodeCore.onLeaderInfo): a follower that acknowledged `epoch` to another server may then join.
   */
  | {
      readonly type: 'LEADERINFO';
      readonly epoch: number;
      readonly session: number;
      readonly established: boolean;
    }
  | {
      readonly type: 'ACKEPOCH';
      readonly epoch: number;
      readonly currentEpoch: number;
      readonly lastZxid: Zxid;
      readonly ranges: readonly EpochRange[];
    }
  /** Refusal: the sender is not leading `epoch`, or has accepted a newer epoch already. */
  | {
      readonly type: 'REJECT';
      readonly epoch: number;
      readonly acceptedEpoch: number;
      readonly reason: string;
    }
  // the new leader catching up from the most up-to-date follower of its quorum
  | {
      readonly type: 'FETCH';
      readonly epoch: number;
      readonly ranges: readonly EpochRange[];
      readonly lastZxid: Zxid;
    }
  | { readonly type: 'FETCHED'; readonly epoch: number; readonly plan: SyncPlan }
  // synchronisation
  | { readonly type: 'SYNC'; readonly epoch: number; readonly plan: SyncPlan }
  | { readonly type: 'NEWLEADER'; readonly epoch: number; readonly lastZxid: Zxid }
  | { readonly type: 'ACKNEWLEADER'; readonly epoch: number }
  | { readonly type: 'UPTODATE'; readonly epoch: number; readonly commitZxid: Zxid }
  // broadcast
  /** With the leader's commit point as it sends them (node-core.ts, announceCommit). */
  | {
      readonly type: 'PROPOSAL';
      readonly epoch: number;
      readonly txns: readonly Txn[];
      readonly commitZxid: Zxid;
    }
  /** Cumulative: the follower has logged everything up to `zxid`. */
  | { readonly type: 'ACK'; readonly epoch: number; readonly zxid: Zxid }
  /** Cumulative: everything up to `zxid` is committed. */
  | { readonly type: 'COMMIT'; readonly epoch: number; readonly zxid: Zxid }
  // forwarded client writes
  | {
      readonly type: 'REQUEST';
      readonly epoch: number;
      readonly clientId: string;
      readonly requestId: number;
      readonly path: string;
      readonly data: Uint8Array;
    }
  // liveness
  | { readonly type: 'PING'; readonly epoch: number; readonly commitZxid: Zxid }
  | { readonly type: 'PONG'; readonly epoch: number };

export type PeerMessage = ElectionMessage | ZabMessage | HeartbeatMessage;

/** Who sent what, for the in-memory network and traces. */
export interface Envelope {
  readonly from: NodeId;
  readonly to: NodeId;
  readonly msg: PeerMessage;
}
