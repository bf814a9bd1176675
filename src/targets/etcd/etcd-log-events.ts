// etcd 3.4's own log lines (--logger=zap: one JSON object per line) as the events the POLE node
// emits, so that recovery phases, the leader timeline and the report read every target alike.
// Every event says where it came from (`src: "etcd-log"` and the logging call site).
//
// What maps to what (etcd 3.4's raft and etcdserver; docs/etcd.md):
//   "starting an etcd server"                        → (a new process: its next "serving" is a start)
//   "ready to serve client requests" / "serving client traffic insecurely…" → started
//   "X is starting a new election at term N"         → election-started (stepped-down if it led)
//   "raft.node: X lost leader Y at term N"           → leader-lost {leader: Y} (the member noticed: detect)
//   "X became leader at term N"                      → elected {leader: itself, epoch: N}, then
//                                                      serving {epoch: N}: a Raft leader takes
//                                                      proposals at once (its first entry, empty,
//                                                      commits with the first of them)
//   "raft.node: X elected leader Y at term N", or "… changed leader from Z to Y at term N" (a
//   member that heard of the new leader before it missed the old one), Y ≠ X
//                                                    → following {leader: Y, epoch: N}, serving {leader: Y}
//   "X became follower at term N" after leading      → stepped-down {epoch}
//   any error or fatal line                          → log-error {message}
import type { NodeId } from '../../vocabulary/names.js';
import type { ClusterEvent, NodeEventBody } from '../../vocabulary/node-events.js';

export interface EtcdLogLine {
  readonly t: number;
  readonly level: string;
  readonly caller: string;
  readonly msg: string;
}

export function parseEtcdLogLine(line: string): EtcdLogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  let o: { level?: unknown; ts?: unknown; caller?: unknown; msg?: unknown };
  try {
    o = JSON.parse(line) as typeof o;
  } catch {
    return undefined;
  }
  if (typeof o.msg !== 'string' || typeof o.ts !== 'string') return undefined;
  const t = Date.parse(o.ts);
  if (Number.isNaN(t)) return undefined;
  return {
    t,
    level: typeof o.level === 'string' ? o.level : 'info',
    caller: typeof o.caller === 'string' ? o.caller : '',
    msg: o.msg,
  };
}

export interface EtcdTranslatorOptions {
  readonly memberId: NodeId;
  /** The topology node whose etcd member id (hex) this is. */
  readonly nodeOf: (etcdId: string) => NodeId | undefined;
}

/** A translator for one member's lines; it keeps the member's role across lines and restarts. */
export function etcdLogTranslator(o: EtcdTranslatorOptions): (line: string) => ClusterEvent[] {
  let leading = false;
  let startedOnce = false;
  let term: number | undefined;
  return (text) => {
    const l = parseEtcdLogLine(text);
    if (!l) return [];
    const ev = (body: NodeEventBody): ClusterEvent => ({
      ...body,
      t: l.t,
      node: o.memberId,
      src: 'etcd-log',
      logger: l.caller,
    });
    const out: ClusterEvent[] = [];
    const msg = l.msg;
    const name = (id: string): NodeId => o.nodeOf(id) ?? `etcd:${id}`;
    let m: RegExpExecArray | null;
    if (msg === 'starting an etcd server') {
      startedOnce = false;
      leading = false;
    } else if (
      msg === 'ready to serve client requests' ||
      msg.startsWith('serving client traffic insecurely')
    ) {
      if (!startedOnce) {
        startedOnce = true;
        out.push(ev({ ev: 'started' }));
      }
    } else if ((m = /^\w+ is starting a new election at term (\d+)$/.exec(msg))) {
      if (leading) out.push(ev({ ev: 'stepped-down', reason: 'etcd:leader→candidate', epoch: term }));
      leading = false;
      out.push(ev({ ev: 'election-started', reason: 'etcd:election timeout' }));
    } else if ((m = /^raft\.node: \w+ lost leader (\w+) at term (\d+)$/.exec(msg))) {
      out.push(
        ev({ ev: 'leader-lost', leader: name(m[1]!), epoch: Number(m[2]), reason: 'etcd:lost leader' }),
      );
    } else if ((m = /^\w+ became leader at term (\d+)$/.exec(msg))) {
      leading = true;
      term = Number(m[1]);
      out.push(ev({ ev: 'elected', leader: o.memberId, epoch: term }));
      out.push(ev({ ev: 'serving', epoch: term }));
    } else if (
      (m = /^raft\.node: (\w+) (?:elected leader|changed leader from \w+ to) (\w+) at term (\d+)$/.exec(msg))
    ) {
      term = Number(m[3]);
      if (m[1] !== m[2]) {
        const leader = name(m[2]!);
        out.push(ev({ ev: 'following', leader, epoch: term }));
        out.push(ev({ ev: 'serving', leader }));
      }
    } else if ((m = /^\w+ became follower at term (\d+)$/.exec(msg))) {
      if (leading) out.push(ev({ ev: 'stepped-down', reason: 'etcd:leader→follower', epoch: term }));
      leading = false;
      term = Number(m[1]);
    }
    if (l.level === 'error' || l.level === 'fatal' || l.level === 'panic')
      out.push(ev({ ev: 'log-error', message: msg }));
    return out;
  };
}
