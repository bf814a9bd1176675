// What of a turn's output may leave before the turn's persist ops are durable. The driver contract
// is "persist, then send, then reply": a message may promise something about this node's disk (an
// ACK, an ACKEPOCH, a vote, a SYNC). Three kinds promise nothing, and waiting for an unrelated
// group commit only adds its fsync to every write's latency:
//
// - REQUEST: a follower passing a client's write on to the leader. It carries the client's data,
//   nothing this node has stored.
// - PROPOSAL: the leader logs in parallel with its followers, as in Zab. The leader counts itself
//   in a txn's quorum only once the driver reports the txn durable (the `persisted` input), so a
//   PROPOSAL that leaves first promises nothing about the leader's disk.
// - COMMIT and client replies, in a cluster of two or more: a txn commits when a quorum of durable
//   copies acked it (followers ACK after their fsync; the leader counts itself after its own), so
//   what a COMMIT or an ok reply announces is on the disks of a quorum already, whatever this
//   node's own disk is doing. Error replies announce nothing. A single node's own fsync is its
//   quorum: there replies wait.
//
// Order per peer is kept where it matters: an early message waits behind a held message to the same
// peer unless it may overtake it. A COMMIT may overtake a held PROPOSAL (a COMMIT covers only txns
// a quorum acked, and the PROPOSALs of a txn leave together, so a held one is for a later txn); a
// REQUEST may overtake a held ACK (the leader handles the two independently). Nothing overtakes a
// SYNC, a vote or another PROPOSAL.
//
// The simulator drives its nodes with this same rule and a disk that takes time (fsyncMs), so its
// invariants (acknowledged writes survive crashes; one history) are checked against it.
import type { PeerSend, PersistOp } from './core-types.js';
import type { PeerMessage } from './zab-messages.js';
import { compareZxid, type Zxid } from '../../vocabulary/zxid.js';

export function mayPrecedeFsync(msg: PeerMessage, clusterSize: number): boolean {
  switch (msg.type) {
    case 'REQUEST':
    case 'PROPOSAL':
      return true;
    case 'COMMIT':
      return clusterSize > 1;
    default:
      return false;
  }
}

export function replyMayPrecedeFsync(clusterSize: number): boolean {
  return clusterSize > 1;
}

/** Whether `early` may leave before `held`, an earlier message to the same peer still waiting. */
function overtakes(early: PeerMessage['type'], held: PeerMessage['type']): boolean {
  return (early === 'COMMIT' && held === 'PROPOSAL') || (early === 'REQUEST' && held === 'ACK');
}

/**
 * A driver's sends that wait for a disk round, counted per peer and type: both drivers (the
 * server and the simulator) put a turn's sends through split() and the held ones, once durable,
 * through release(), so the rule above lives here only.
 */
export class HeldSends {
  private readonly byPeer = new Map<string, Map<PeerMessage['type'], number>>();

  /**
   * Sends at once (through `send`) every message of a turn that may precede its fsync and
   * overtakes whatever is held for its peer; returns the rest, now counted as held, in order.
   */
  split(sends: readonly PeerSend[], clusterSize: number, send: (s: PeerSend) => void): PeerSend[] {
    const held: PeerSend[] = [];
    for (const s of sends) {
      if (mayPrecedeFsync(s.msg, clusterSize) && this.canOvertake(s.to, s.msg.type)) send(s);
      else {
        held.push(s);
        this.add(s.to, s.msg.type);
      }
    }
    return held;
  }

  /** Sends held messages whose disk round is over, in order, and stops counting them. */
  release(sends: readonly PeerSend[], send: (s: PeerSend) => void): void {
    for (const s of sends) {
      send(s);
      this.sent(s.to, s.msg.type);
    }
  }

  clear(): void {
    this.byPeer.clear();
  }

  private canOvertake(to: string, early: PeerMessage['type']): boolean {
    const held = this.byPeer.get(to);
    if (!held) return true;
    for (const type of held.keys()) if (!overtakes(early, type)) return false;
    return true;
  }

  private add(to: string, type: PeerMessage['type']): void {
    let held = this.byPeer.get(to);
    if (!held) this.byPeer.set(to, (held = new Map()));
    held.set(type, (held.get(type) ?? 0) + 1);
  }

  private sent(to: string, type: PeerMessage['type']): void {
    const held = this.byPeer.get(to);
    if (!held) return;
    const left = (held.get(type) ?? 0) - 1;
    if (left > 0) held.set(type, left);
    else held.delete(type);
    if (held.size === 0) this.byPeer.delete(to);
  }
}

/** The highest zxid appended by a turn's persist ops, if any: what its flush makes durable. */
export function lastAppended(ops: readonly PersistOp[]): Zxid | undefined {
  let last: Zxid | undefined;
  for (const op of ops)
    if (op.op === 'append' && op.txns.length > 0) {
      const z = op.txns[op.txns.length - 1]!.zxid;
      if (!last || compareZxid(z, last) > 0) last = z;
    }
  return last;
}
