// Latency anatomy: where the milliseconds of a write went. The load agent stamps when it sent a
// traced write and when the reply came; every node on the write's way stamps its own steps
// (node/trace/write-tracer.ts); all on CLOCK_MONOTONIC, which the processes of a run share. Joined,
// they give one timeline per write, cut into consecutive parts along its critical path:
//
//   agent → contact → (forward hop) → leader: PROPOSAL → (hop) → the follower whose ACK completed
//   the quorum: log, fsync, ACK → (hop) → leader: commit → (hop) → contact: apply, reply → agent
//
// The leader logs in parallel with its followers (node/core/send-order.ts): when its own fsync is
// what completed the quorum, the path runs through the leader's log and fsync instead of a
// follower. (A leader that logs before proposing, the old order, has both on the path.)
//
// Consecutive stamps make the parts add up to the write's latency as the agent measured it. Each
// hop between data centers is split into the network part (the shaping's configured one-way
// delay, what the paper's model counts) and transport (the rest: relay lateness, sockets, a busy
// receiver). Everything is pure: tested on made-up stamps.
import type { AgentTrace } from '../load/agent-protocol.js';
import type { TraceEventFields } from '../vocabulary/node-events.js';
import { majorityOf } from '../util/majority.js';

export interface AgentTraceSet {
  readonly dc: string;
  readonly clientId: string;
  /** Monotonic ms, as the agent reported them. */
  readonly traces: readonly AgentTrace[];
}

/** A node's `trace` event: its stamps of one write, and which node took them. */
export type NodeTraceEvent = Omit<TraceEventFields, 'zxid'> & { readonly node: string };

export type PartKind = 'client' | 'node' | 'disk' | 'hop';

/** The parts in critical-path order; a write has a subset (no forward hop when it went to the leader). */
export const ANATOMY_PARTS = [
  { name: 'agent → contact', kind: 'client' },
  { name: 'contact: forward to leader', kind: 'node' },
  { name: 'forward hop', kind: 'hop' },
  { name: 'leader: to its log', kind: 'node' },
  { name: 'leader: log write + fsync', kind: 'disk' },
  { name: 'leader: to PROPOSAL', kind: 'node' },
  { name: 'PROPOSAL hop', kind: 'hop' },
  { name: 'follower: to its log', kind: 'node' },
  { name: 'follower: log write + fsync', kind: 'disk' },
  { name: 'follower: to ACK', kind: 'node' },
  { name: 'ACK hop', kind: 'hop' },
  { name: 'leader: quorum to commit', kind: 'node' },
  { name: 'leader: commit to COMMIT/reply', kind: 'node' },
  { name: 'COMMIT hop', kind: 'hop' },
  { name: 'contact: apply and reply', kind: 'node' },
  { name: 'contact → agent', kind: 'client' },
] as const satisfies readonly { name: string; kind: PartKind }[];
export type PartName = (typeof ANATOMY_PARTS)[number]['name'];

export interface WriteAnatomy {
  readonly dc: string;
  readonly phase: string;
  readonly contact: string;
  readonly leader: string;
  readonly follower: string;
  /** reply received − sent, as the agent measured it. */
  readonly latencyMs: number;
  readonly parts: readonly { readonly name: PartName; readonly ms: number; readonly networkMs: number }[];
}

/** Means per write, ms: the buckets add up to `totalMs`. */
export interface AnatomyBreakdown {
  readonly writes: number;
  readonly totalMs: number;
  /**
   * The standard deviation of the traced writes' latencies, ms. The self-check takes the standard
   * error of their mean from every write's spread (LatencyStats.sentSd), and this one only for
   * stored runs without it: a stall that missed the traced writes leaves this one small.
   */
  readonly sdMs?: number;
  /**
   * The least and the most any one of these writes spent beyond its network part, ms: how far one
   * write alone moves their mean (the floor), which the self-check's comparison with every write's
   * mean allows for (a stall that caught one traced write of 25).
   */
  readonly beyondNetworkRangeMs?: { readonly least: number; readonly most: number };
  /** The shaping's configured one-way delays on the hops between data centers. */
  readonly networkMs: number;
  /** Hops beyond their configured delay: relay lateness, sockets, waking the receiver. */
  readonly transportMs: number;
  /** Log write + fsync, at the leader and at the follower that completed the quorum. */
  readonly diskMs: number;
  /** Inside the nodes, the disk aside: processing and waiting (for the CPU, for a group commit). */
  readonly nodesMs: number;
  /** Between the agent and the contact server, both ways, and the agent's own share. */
  readonly clientMs: number;
  /** Per part: the mean over all writes (0 for a write that has no such part). */
  readonly parts: Readonly<Partial<Record<PartName, number>>>;
  /** Largest |sum of parts − measured latency| over the writes, ms. */
  readonly maxSumErrorMs: number;
}

export interface LatencyAnatomy {
  /** One write in this many was traced. */
  readonly sampleEvery: number;
  /** Traced writes the agents reported, and how many had every stamp on their path. */
  readonly traced: number;
  readonly complete: number;
  /** perDc[dc][phase]: only the phases with complete writes. */
  readonly perDc: Readonly<Record<string, Readonly<Record<string, AnatomyBreakdown>>>>;
}

export interface AnatomyContext {
  readonly dcOf: (node: string) => string;
  /**
   * The shaping's one-way delay between two data centers for a write of `phase`: the links as the
   * faults left them in that window (a link fault changes them mid-run).
   */
  readonly oneWayMs: (fromDc: string, toDc: string, phase: string) => number;
  /** Voters in the cluster (a quorum is a majority of them). */
  readonly members: number;
}

/** A stamp may come out a few µs before the previous one (rounding to µs): tolerated up to this. */
const ORDER_SLACK_MS = 0.01;

/** Joins one traced write's stamps into its parts; null when a stamp is missing or out of order. */
export function anatomyOfWrite(
  agent: { dc: string; phase: string; sent: number; replied: number },
  nodes: readonly NodeTraceEvent[],
  ctx: AnatomyContext,
): WriteAnatomy | null {
  const contact = nodes.find((n) => n.s.clientRecv !== undefined);
  const leader = nodes.find((n) => n.s.proposalSent !== undefined);
  if (!contact || !leader) return null;
  const L = leader.s;
  const C = contact.s;
  if (L.decided === undefined || L.durable === undefined || L.proposalSent === undefined) return null;
  const decided = L.decided;
  const decider = decisiveVote(leader, L.durable, decided, ctx.members);
  if (!decider) return null;
  const { decisive, viaLeader } = decider;
  const sequential = L.proposalSent >= L.durable - ORDER_SLACK_MS;
  const follower = viaLeader ? undefined : nodes.find((n) => n.node === decisive[0]);
  if (!viaLeader && !follower) return null;
  const F = follower?.s ?? {};

  const dc = ctx.dcOf;
  const parts: {
    name: PartName;
    from: number | undefined;
    to: number | undefined;
    hop?: [string, string];
  }[] = [];
  const sameNode = contact.node === leader.node;
  parts.push({ name: 'agent → contact', from: agent.sent, to: C.clientRecv });
  let at: number | undefined = C.clientRecv;
  if (!sameNode) {
    parts.push({ name: 'contact: forward to leader', from: at, to: C.forwardSent });
    parts.push(hop('forward hop', C.forwardSent, L.leaderRecv, contact.node, leader.node));
    at = L.leaderRecv;
  }
  if (sequential || viaLeader) {
    parts.push({ name: 'leader: to its log', from: at, to: L.persistStart });
    parts.push({ name: 'leader: log write + fsync', from: L.persistStart, to: L.durable });
    at = L.durable;
  }
  if (follower) {
    const f = follower.node;
    parts.push({ name: 'leader: to PROPOSAL', from: at, to: L.proposalSent });
    parts.push(hop('PROPOSAL hop', L.proposalSent, F.proposalRecv, leader.node, f));
    parts.push({ name: 'follower: to its log', from: F.proposalRecv, to: F.persistStart });
    parts.push({ name: 'follower: log write + fsync', from: F.persistStart, to: F.durable });
    parts.push({ name: 'follower: to ACK', from: F.durable, to: F.ackSent });
    parts.push(hop('ACK hop', F.ackSent, decisive[1], f, leader.node));
    at = decisive[1];
  }
  parts.push({ name: 'leader: quorum to commit', from: at, to: decided });
  if (!sameNode) {
    parts.push({ name: 'leader: commit to COMMIT/reply', from: decided, to: L.commitSent });
    parts.push(hop('COMMIT hop', L.commitSent, C.commitRecv, leader.node, contact.node));
    parts.push({ name: 'contact: apply and reply', from: C.commitRecv, to: C.replySent });
  } else parts.push({ name: 'leader: commit to COMMIT/reply', from: decided, to: C.replySent });
  parts.push({ name: 'contact → agent', from: C.replySent, to: agent.replied });

  const out = timedParts(parts, (a, b) => ctx.oneWayMs(dc(a), dc(b), agent.phase));
  if (!out) return null;
  return {
    dc: agent.dc,
    phase: agent.phase,
    contact: contact.node,
    leader: leader.node,
    follower: follower?.node ?? leader.node,
    latencyMs: agent.replied - agent.sent,
    parts: out,
  };
}

/**
 * Who completed the quorum: the votes are the leader's own (when its copy became durable) and
 * each follower's ACK; the quorum-th earliest by the decision decided it. When the leader logs
 * before proposing (the old order) its vote always comes first. Undefined without a quorum.
 */
function decisiveVote(
  leader: NodeTraceEvent,
  durable: number,
  decided: number,
  members: number,
): { decisive: [string, number]; viaLeader: boolean } | undefined {
  const quorum = majorityOf(members);
  const votes: [string, number][] = [
    [leader.node, durable],
    ...Object.entries(leader.acks ?? {}).filter(([, t]) => t <= decided + ORDER_SLACK_MS),
  ];
  if (votes.length < quorum) return undefined;
  votes.sort((a, b) => a[1] - b[1]);
  const decisive = votes[quorum - 1]!;
  return { decisive, viaLeader: decisive[0] === leader.node };
}

/** Each part's duration and network share; null when a stamp is missing or out of order. */
function timedParts(
  parts: ReadonlyArray<{
    name: PartName;
    from: number | undefined;
    to: number | undefined;
    hop?: [string, string];
  }>,
  oneWayMs: (from: string, to: string) => number,
): WriteAnatomy['parts'][number][] | null {
  const out: WriteAnatomy['parts'][number][] = [];
  for (const p of parts) {
    if (p.from === undefined || p.to === undefined) return null;
    const ms = p.to - p.from;
    if (ms < -ORDER_SLACK_MS) return null;
    out.push({ name: p.name, ms, networkMs: p.hop ? oneWayMs(p.hop[0], p.hop[1]) : 0 });
  }
  return out;
}

/** A part between two nodes: its network share is the configured delay between their data centers. */
function hop(
  name: PartName,
  from: number | undefined,
  to: number | undefined,
  a: string,
  b: string,
): { name: PartName; from: number | undefined; to: number | undefined; hop: [string, string] } {
  return { name, from, to, hop: [a, b] };
}

const KIND = new Map<string, PartKind>(ANATOMY_PARTS.map((p) => [p.name, p.kind]));

/** Means over writes of one data center and phase. */
export function breakdown(writes: readonly WriteAnatomy[]): AnatomyBreakdown {
  const n = writes.length;
  const sums = new Map<PartName, number>();
  let network = 0;
  let transport = 0;
  let disk = 0;
  let nodes = 0;
  let client = 0;
  let total = 0;
  let totalSq = 0;
  let maxErr = 0;
  let leastBeyond = Infinity;
  let mostBeyond = -Infinity;
  for (const w of writes) {
    let sum = 0;
    let writeNetwork = 0;
    for (const p of w.parts) {
      sum += p.ms;
      sums.set(p.name, (sums.get(p.name) ?? 0) + p.ms);
      switch (KIND.get(p.name)) {
        case 'hop':
          network += p.networkMs;
          writeNetwork += p.networkMs;
          transport += p.ms - p.networkMs;
          break;
        case 'disk':
          disk += p.ms;
          break;
        case 'client':
          client += p.ms;
          break;
        default:
          nodes += p.ms;
      }
    }
    total += w.latencyMs;
    totalSq += w.latencyMs * w.latencyMs;
    maxErr = Math.max(maxErr, Math.abs(sum - w.latencyMs));
    leastBeyond = Math.min(leastBeyond, w.latencyMs - writeNetwork);
    mostBeyond = Math.max(mostBeyond, w.latencyMs - writeNetwork);
  }
  const mean = (x: number): number => (n === 0 ? 0 : x / n);
  const parts: Partial<Record<PartName, number>> = {};
  for (const p of ANATOMY_PARTS) {
    const s = sums.get(p.name);
    if (s !== undefined) parts[p.name] = mean(s);
  }
  return {
    writes: n,
    totalMs: mean(total),
    sdMs: n < 2 ? 0 : Math.sqrt(Math.max(0, (totalSq - (total * total) / n) / (n - 1))),
    ...(n > 0 ? { beyondNetworkRangeMs: { least: leastBeyond, most: mostBeyond } } : {}),
    networkMs: mean(network),
    transportMs: mean(transport),
    diskMs: mean(disk),
    nodesMs: mean(nodes),
    clientMs: mean(client),
    parts,
    maxSumErrorMs: maxErr,
  };
}

/** Joins the agents' traced writes with the nodes' trace events; keeps the phases asked for. */
export function latencyAnatomy(
  agents: readonly AgentTraceSet[],
  nodeEvents: readonly NodeTraceEvent[],
  ctx: AnatomyContext,
  sampleEvery: number,
  phases: readonly string[] = ['before', 'after'],
): LatencyAnatomy {
  const byWrite = new Map<string, NodeTraceEvent[]>();
  for (const e of nodeEvents) {
    const k = `${e.client}/${e.req}`;
    const list = byWrite.get(k);
    if (list) list.push(e);
    else byWrite.set(k, [e]);
  }
  const grouped = new Map<string, WriteAnatomy[]>();
  let traced = 0;
  let complete = 0;
  for (const a of agents)
    for (const [req, phase, , sent, replied] of a.traces) {
      traced++;
      const w = anatomyOfWrite(
        { dc: a.dc, phase, sent, replied },
        byWrite.get(`${a.clientId}/${req}`) ?? [],
        ctx,
      );
      if (!w) continue;
      complete++;
      if (!phases.includes(phase)) continue;
      const k = `${a.dc}\u0000${phase}`;
      const list = grouped.get(k);
      if (list) list.push(w);
      else grouped.set(k, [w]);
    }
  const perDc: Record<string, Record<string, AnatomyBreakdown>> = {};
  for (const [k, ws] of grouped) {
    const [dc, phase] = k.split('\u0000') as [string, string];
    (perDc[dc] ??= {})[phase] = breakdown(ws);
  }
  return { sampleEvery, traced, complete, perDc };
}
