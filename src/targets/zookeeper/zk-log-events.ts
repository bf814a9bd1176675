// ZooKeeper's own log lines as the events the POLE node emits, so that recovery phases, the
// leader timeline and the report read both targets alike. Lines come in the layout of
// LOG4J_PROPERTIES (zoo-cfg.ts): `2026-11-23T08:28:38.534Z INFO QuorumPeer Peer state changed: following`.
// Every event says where it came from (`src: "zk-log"` and the logger).
//
// What maps to what (ZooKeeper 3.8's QuorumPeer, Leader, Follower, Learner; see docs/zookeeper.md):
//   the first "LOOKING" (QuorumPeer's main loop)  → started (the client port is bound by then)
//   "LOOKING" after another state                → election-started (stepped-down after LEADING)
//   "New election. My id = N, proposed zxid=0xZ"  → candidate {sid, zxid} (its own proposal: FLE's score)
//   "Notification: my state:LOOKING; n.sid:…"     → vote-heard {from, leader, peerEpoch, zxid, round}
//                                                   (only while looking: no other vote decides anything)
//   "Exception when following the leader"         → leader-lost (the follower noticed: detect)
//   "Peer state changed: leading"                → elected {leader: itself} (FLE's decision)
//   "Peer state changed: following"              → elected {} (the leader is named by the next)
//   "LEADING|FOLLOWING - LEADER ELECTION TOOK - N MS" → election-took {tookMs}: ZooKeeper's own
//                                                   figure, logged once the Leader or Follower is
//                                                   built, 100-140 ms after the decision here
//   "Successfully connected to leader, using address: h/ip:p" → following {leader}
//   "Have quorum of supporters, sids: [[…]]; … zxid: 0xE00000000" → quorum {epoch, sids}
//   "Peer state changed: leading - broadcast"    → serving {epoch} (the leader serves writes)
//   "Peer state changed: following - broadcast"  → serving {leader} (a follower serves; its epoch
//                                                   is not in its log, its leader's name is)
//   "Peer state changed: X - Y"                  → phase {role, phase}
//   any ERROR line                               → log-error {message}
import type { ClusterEvent, NodeEventBody } from '../../vocabulary/node-events.js';

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (\S+) (.*)$/;

export interface ZkLogLine {
  readonly t: number;
  readonly level: string;
  readonly logger: string;
  readonly message: string;
}

export function parseZkLogLine(line: string): ZkLogLine | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const t = Date.parse(m[1]!);
  if (Number.isNaN(t)) return undefined;
  return { t, level: m[2]!, logger: m[3]!, message: m[4]! };
}

export interface ZkTranslatorOptions {
  readonly memberId: string;
  /** The member a quorum address ("host:port", as this member dials it) belongs to. */
  readonly memberAtQuorumAddress: (hostPort: string) => string | undefined;
  /** The member with this sid (myid); votes name members by sid. */
  readonly memberOfSid: (sid: number) => string | undefined;
}

const NOTIFICATION =
  /^Notification: my state:(\w+); n\.sid:(\d+), n\.state:(\w+), n\.leader:(\d+), n\.round:0x([0-9a-f]+), n\.peerEpoch:0x([0-9a-f]+), n\.zxid:0x([0-9a-f]+)/;

/**
 * A translator for one member's lines. It keeps the member's last role (to tell a follower that
 * lost its leader from a member starting up) and the epoch of its last quorum, across restarts.
 */
export function zkLogTranslator(o: ZkTranslatorOptions): (line: string) => ClusterEvent[] {
  let role: string | undefined;
  let epoch: number | undefined;
  let startedOnce = false;
  let following: string | undefined;
  return (text) => {
    const l = parseZkLogLine(text);
    if (!l) return [];
    const ev = (body: NodeEventBody): ClusterEvent => ({
      ...body,
      t: l.t,
      node: o.memberId,
      src: 'zk-log',
      logger: l.logger,
    });
    const out: ClusterEvent[] = [];
    const msg = l.message;
    let m: RegExpExecArray | null;
    if (/^Reading configuration from: /.test(msg)) {
      // A new JVM (a start or a restart): its first LOOKING is a start again.
      startedOnce = false;
      role = undefined;
    } else if (l.logger === 'QuorumPeer' && /^(LOOKING|FOLLOWING|LEADING|OBSERVING)$/.test(msg)) {
      const newRole = msg.toLowerCase();
      if (newRole === 'looking') {
        if (!startedOnce) {
          startedOnce = true;
          out.push(ev({ ev: 'started' }));
        }
        if (role === 'leading') out.push(ev({ ev: 'stepped-down', reason: 'zk:leading→looking', epoch }));
        out.push(ev({ ev: 'election-started', reason: role ? `zk:${role}→looking` : 'start' }));
      }
      role = newRole;
    } else if ((m = /^New election\. My id = (\d+), proposed zxid=0x([0-9a-f]+)/.exec(msg))) {
      out.push(ev({ ev: 'candidate', sid: Number(m[1]), zxid: `0x${m[2]}` }));
    } else if ((m = NOTIFICATION.exec(msg))) {
      const [from, leader] = [Number(m[2]), Number(m[4])];
      if (m[1] === 'LOOKING')
        out.push(
          ev({
            ev: 'vote-heard',
            from: o.memberOfSid(from) ?? `sid ${from}`,
            fromState: m[3]!.toLowerCase(),
            leader: o.memberOfSid(leader) ?? `sid ${leader}`,
            leaderSid: leader,
            peerEpoch: parseInt(m[6]!, 16),
            zxid: `0x${m[7]}`,
            round: parseInt(m[5]!, 16),
          }),
        );
    } else if (/^Exception when following the leader/.test(msg)) {
      out.push(ev({ ev: 'leader-lost', reason: 'zk:exception when following the leader' }));
    } else if ((m = /^Peer state changed: (leading|following)$/.exec(msg))) {
      // FLE has decided (setPeerState): the member knows whom it follows or that it leads.
      out.push(m[1] === 'leading' ? ev({ ev: 'elected', leader: o.memberId }) : ev({ ev: 'elected' }));
    } else if ((m = /^Peer state changed: (\w+) - (\w+)/.exec(msg))) {
      out.push(ev({ ev: 'phase', role: m[1], phase: m[2] }));
      if (m[1] === 'leading' && m[2] === 'broadcast')
        out.push(ev({ ev: 'serving', ...(epoch !== undefined ? { epoch } : {}) }));
      if (m[1] === 'following' && m[2] === 'broadcast')
        out.push(ev({ ev: 'serving', leader: following ?? 'unknown' }));
    } else if ((m = /^(LEADING|FOLLOWING) - LEADER ELECTION TOOK - (\d+) MS/.exec(msg))) {
      out.push(ev({ ev: 'election-took', tookMs: Number(m[2]) }));
    } else if ((m = /^Successfully connected to leader, using address: \S*\/([^/\s]+:\d+)/.exec(msg))) {
      const leader = o.memberAtQuorumAddress(m[1]!);
      following = leader;
      out.push(ev({ ev: 'following', ...(leader !== undefined ? { leader } : {}), address: m[1] }));
    } else if ((m = /^Have quorum of supporters, sids: \[\[([\d, ]*)\]\].*zxid: 0x([0-9a-f]+)/.exec(msg))) {
      epoch = Number(BigInt(`0x${m[2]}`) >> 32n);
      const sids = m[1]!
        .split(',')
        .map((s) => Number(s.trim()))
        .filter((n) => Number.isInteger(n));
      out.push(ev({ ev: 'quorum', epoch, sids }));
    }
    if (l.level === 'ERROR' || l.level === 'FATAL') out.push(ev({ ev: 'log-error', message: msg }));
    return out;
  };
}
