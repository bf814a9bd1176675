// What of a turn's output may leave before the turn's persist ops are durable. The driver contract
// is "persist, then send, then reply": a message may promise something about this node's disk (an
// ACK, an ACKEPOCH, a vote, a PROPOSAL the leader counts itself in on). Two kinds promise nothing,
// and waiting for an unrelated group commit only adds its fsync to every write's latency:
//
// - REQUEST: a follower passing a client's write on to the leader. It carries the client's data,
//   nothing this node has stored.
// - COMMIT and client replies, in a cluster of two or more: a txn commits when a quorum acked it,
//   the leader counting itself once its copy is durable. PROPOSALs leave only after the leader's
//   fsync, so a follower's ACK, and therefore any quorum with a follower in it, implies that the
//   leader's copy is durable. With more than one member a quorum always has a follower in it, so
//   what a COMMIT or an ok reply announces is on the disks of a quorum already, whatever this
//   node's own disk is doing. Error replies announce nothing. A single node has no follower: its
//   own fsync is the quorum, so there everything waits.
//
// Per peer, order is kept where it matters: a message that may go early still waits while an
// earlier message to the same peer is held, unless that message is a PROPOSAL or an ACK. A COMMIT
// may overtake a held PROPOSAL: a COMMIT covers only txns a quorum acked, and a leader sends a
// txn's PROPOSALs to all its followers in one go, so any PROPOSAL still held is for a later txn. A
// REQUEST may overtake a held ACK: the leader handles the two independently. Anything else held
// (SYNC, FOLLOWERINFO, a vote...) keeps everything behind it. The
// simulator drives its nodes with this same rule and a disk that takes time, so its invariants
// (acknowledged writes survive crashes; one history) check it.
import type { PeerMessage } from './zab-messages.js';

export function mayPrecedeFsync(msg: PeerMessage, clusterSize: number): boolean {
  return msg.type === 'REQUEST' || (msg.type === 'COMMIT' && clusterSize > 1);
}

export function replyMayPrecedeFsync(clusterSize: number): boolean {
  return clusterSize > 1;
}

/** Whether a held message to a peer keeps the early ones to that peer behind it. */
export function holdsBack(held: PeerMessage): boolean {
  return held.type !== 'PROPOSAL' && held.type !== 'ACK';
}
