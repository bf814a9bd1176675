// The node core's contract with whatever drives it (the TCP server or the simulator), in the style
// of etcd's raft "Ready": inputs go in one at a time; the driver then drains the accumulated
// effects and must apply them in this order:
//   1. `persist` (append/truncate/epochs/snapshot), made durable (one fsync for the whole batch);
//   2. `sends` to peers;
//   3. `replies` to clients;
//   4. `events` to the event stream.
// The core never touches a clock, socket, disk or random source itself.
import type { StateSnapshot } from './state-snapshot.js';
import type { NodeEventBody } from '../../vocabulary/node-events.js';
import type { ElectionMessage } from './election-types.js';
import type { NodeId, Txn, WallMs } from './types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import type { PeerMessage } from './zab-messages.js';

export type { PeerMessage };

/** Why a client write failed. Codes are part of the wire protocol (see net/client-protocol.ts). */
export type WriteErrorCode =
  | 'NOT_LEADER_YET' // no serving leader known yet (election or sync in progress): retry
  | 'NO_QUORUM' // the leader lost its quorum before the write could commit: retry
  | 'LEADER_LOST' // forwarded, then the leader went away: outcome unknown, a retry with the same ids is safe
  | 'TOO_LARGE'
  | 'BAD_FRAME';

export type CoreInput =
  | { readonly type: 'tick'; readonly now: number }
  | { readonly type: 'message'; readonly now: number; readonly from: NodeId; readonly msg: PeerMessage }
  /** The link to `peer` came up (both ends can talk). */
  | { readonly type: 'connected'; readonly now: number; readonly peer: NodeId }
  /**
   * Part of a message from `peer` arrived (a chunk of a snapshot, which can take seconds across a
   * wide link): `peer` is alive, though no message is complete yet.
   */
  | { readonly type: 'heard'; readonly now: number; readonly peer: NodeId }
  /** The link to `peer` broke (connection closed or reset). */
  | { readonly type: 'disconnected'; readonly now: number; readonly peer: NodeId }
  /** Every txn appended up to `zxid` is durable (the driver's flush completed). */
  | { readonly type: 'persisted'; readonly now: number; readonly zxid: Zxid }
  | {
      readonly type: 'write';
      readonly now: number;
      /** The driver's handle for the waiting client request; echoed in the reply. */
      readonly handle: number;
      readonly clientId: string;
      readonly requestId: number;
      readonly path: string;
      readonly data: Uint8Array;
    };

export interface PeerSend {
  readonly to: NodeId;
  readonly msg: PeerMessage;
}

export type ClientReply =
  | { readonly handle: number; readonly ok: true; readonly zxid: Zxid }
  | { readonly handle: number; readonly ok: false; readonly code: WriteErrorCode };

/** What the core asks the driver to make durable. */
export type PersistOp =
  | { readonly op: 'append'; readonly txns: readonly Txn[] }
  /** Remove every logged txn after `zxid` (TRUNC during sync, or adopting a fetched history). */
  | { readonly op: 'truncate'; readonly after: Zxid }
  | {
      readonly op: 'epochs';
      readonly acceptedEpoch: number;
      readonly currentEpoch: number;
      /** Who the accepted epoch came from: a node that crashed after ACKEPOCH may rejoin that same leader. */
      readonly acceptedLeader?: NodeId;
    }
  /** Replace the whole state by a snapshot (SNAP sync) or record a local snapshot. */
  | {
      readonly op: 'snapshot';
      readonly snapshot: StateSnapshot;
      readonly replacesLog: boolean;
    };

/** A protocol event; the driver adds the timestamp and node name and writes it as one JSON line. */
/** What the core reports happened (vocabulary/node-events.ts: one union for every emitter and reader). */
export type CoreEvent = NodeEventBody;

export interface Ready {
  readonly persist: PersistOp[];
  readonly sends: PeerSend[];
  /**
   * Heartbeats and their answers: they depend on nothing persisted, so the driver sends them at
   * once instead of after this batch's fsync (which would add the disk's latency to every RTT).
   */
  readonly heartbeats: PeerSend[];
  readonly replies: ClientReply[];
  readonly events: CoreEvent[];
}

/** What a node recovers from its disk at start. */
export interface RecoveredState {
  readonly acceptedEpoch: number;
  readonly currentEpoch: number;
  readonly acceptedLeader?: NodeId;
  readonly snapshot?: StateSnapshot;
  /** Txns logged after the snapshot, in zxid order. */
  readonly txns: readonly Txn[];
}

export type { ElectionMessage, WallMs };
