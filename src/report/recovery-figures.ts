// The recovery from the fault that took the serving leader out (the cause), from the members'
// events: the deciding election (the first `elected` of a leader other than the one taken out),
// then detection, election, serving and first commit, each in ms from the instant the fault was
// carried out, with what bounded each phase (recovery-explain.ts) and what each data center's
// clients saw (client-recovery.ts). Pure: events and the agents' records in, figures out.
import type { DoneMessage } from '../load/agent-protocol.js';
import type { NodeId } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import { clientRecovery, firstAckFrom } from './client-recovery.js';
import { fleVotes, zxidParts } from './fle-votes.js';
import { explainRecovery } from './recovery-explain.js';
import type { RecoveryInfo } from './result.js';

/** What the recovery figures are built from. */
export interface RecoverySource {
  /** The leader the cause took out, and when it was carried out (wall ms; the recovery's zero). */
  readonly killed: NodeId | null;
  readonly killAt: number | null;
  /** When the cause was scheduled (wall ms). */
  readonly causeScheduledAt: number | null;
  readonly loadStart: number;
  readonly nodeEvents: readonly ClusterEvent[];
  readonly dones: ReadonlyMap<string, DoneMessage>;
}

export interface RecoveryFigures {
  /** The deciding election's leader and epoch, and the proposals it saw; null: no election seen. */
  readonly elected: NodeId | null;
  /** Whom leadership was handed to after that election (--etcd-prefer), once it led. */
  readonly transferredTo: NodeId | null;
  readonly epoch: number | null;
  readonly scores: Readonly<Record<string, readonly number[]>>;
  /** ZooKeeper: survivors whose own proposal the leader did not hear before it decided. */
  readonly unheard: Readonly<Record<string, readonly number[]>>;
  readonly recovery: RecoveryInfo;
}

export function recoveryFigures(x: RecoverySource, dcs: readonly string[]): RecoveryFigures {
  const ev = x.nodeEvents;
  const after = (pred: (e: ClusterEvent) => boolean): ClusterEvent | undefined =>
    x.killAt === null ? undefined : ev.find((e) => e.t >= (x.killAt as number) && pred(e));
  const won = (e: ClusterEvent): boolean => e.ev === 'elected' && e.node === e.leader && e.node !== x.killed;
  // The deciding election is the one whose leader went on to serve. A first winner that never had
  // a quorum of followers is not it: a swarm CI run had ZooKeeper's FLE pick p3 on votes that then
  // moved to p4, and p4 served 1.6 s later. Where nobody served, the first winner.
  const servedBy = after((e) => e.ev === 'serving' && e.leader === undefined && e.node !== x.killed);
  const killAt = x.killAt;
  const electedEv =
    (servedBy && killAt !== null
      ? ev.findLast((e) => won(e) && e.node === servedBy.node && e.t >= killAt && e.t <= servedBy.t)
      : undefined) ?? after(won);
  const elected = electedEv?.node ?? null;
  const rel = (e: ClusterEvent | undefined): number | null =>
    e && x.killAt !== null ? e.t - x.killAt : null;
  const detect = after((e) => e.ev === 'leader-lost');
  const serving = after((e) => e.ev === 'serving' && e.leader === undefined && e.node === elected);
  // ZooKeeper names the epoch only once its leader has a quorum: take it from `serving` then.
  const epoch =
    (electedEv?.ev === 'elected' ? electedEv.epoch : undefined) ??
    (serving?.ev === 'serving' ? serving.epoch : undefined) ??
    null;
  const electedMs = rel(electedEv);
  const first = firstCommitAfterKill(x, elected, epoch);
  const firstCommitMs = first?.ms ?? null;
  const handed = handOver(ev, electedEv);
  const proposals = electedEv?.ev === 'elected' ? electedEv.proposals : undefined;
  // ZooKeeper's leader names no proposals: the votes its log says it heard, else each survivor's own.
  const heard =
    proposals === undefined && electedEv !== undefined && x.killAt !== null
      ? fleVotes({ killed: x.killed, killAt: x.killAt, nodeEvents: ev }, electedEv)
      : null;
  return {
    elected,
    transferredTo: handed?.node ?? null,
    epoch,
    scores: proposals ?? heard?.scores ?? candidateScores(x, electedEv),
    unheard: heard?.unheard ?? {},
    recovery: {
      explain: explainRecovery(ev, x.killAt, electedEv?.ev === 'elected' ? electedEv : null),
      detectMs: rel(detect),
      electedMs,
      servingMs: rel(serving),
      firstCommitMs,
      ...(first ? { firstCommitFrom: first.from } : {}),
      paperRecoveryMs: electedMs !== null && firstCommitMs !== null ? firstCommitMs - electedMs : null,
      transferMs: rel(handed),
      faultAtS: x.killAt === null ? null : (x.killAt - x.loadStart) / 1000,
      scheduledAtS: x.causeScheduledAt === null ? null : (x.causeScheduledAt - x.loadStart) / 1000,
      perDc: clientRecovery(dcs, x.dones, x.killAt, epoch),
    },
  };
}

/**
 * Where the leader's election event carries no proposals and its log no votes heard (a ZooKeeper
 * run recorded before `vote-heard` existed), each survivor's own proposal
 * from its log as the deciding election started (its first `candidate` after the kill, before the
 * leader was elected), as FLE ranks them: [zxid's epoch, zxid's counter, sid]. FLE compares the
 * member's current epoch before the zxid; the log line does not give it, and it differs from the
 * zxid's epoch only for a member that took a new epoch and logged nothing in it.
 */
function candidateScores(
  x: RecoverySource,
  electedEv: ClusterEvent | undefined,
): Record<string, readonly number[]> {
  if (x.killAt === null || electedEv === undefined) return {};
  const out: Record<string, number[]> = {};
  for (const e of x.nodeEvents) {
    if (e.t < x.killAt || e.t > electedEv.t || e.ev !== 'candidate' || e.node === x.killed) continue;
    if (out[e.node] !== undefined) continue;
    out[e.node] = [...zxidParts(e.zxid), e.sid];
  }
  return out;
}

/**
 * The hand-over after the deciding election, if the harness asked for one (--etcd-prefer): the
 * election of the member the elected leader was asked to hand the lead to, after the asking.
 */
function handOver(ev: readonly ClusterEvent[], elected: ClusterEvent | undefined): ClusterEvent | undefined {
  if (elected === undefined) return undefined;
  const ask = ev.find((e) => e.t >= elected.t && e.ev === 'transfer-asked' && e.node === elected.node);
  if (ask?.ev !== 'transfer-asked') return undefined;
  return ev.find((e) => e.t >= ask.t && e.ev === 'elected' && e.node === ask.to && e.leader === ask.to);
}

/**
 * The new leader's first commit, ms after the kill: its own `first-commit` event where the target
 * has one (the POLE node), else the first acknowledgement of a write of the new epoch that any
 * load agent saw of the new epoch or a later one, as the outage counts them (ZooKeeper: the
 * clients' view, so it includes the reply's way back).
 */
export function firstCommitAfterKill(
  x: {
    readonly killAt: number | null;
    readonly nodeEvents: readonly ClusterEvent[];
    readonly dones: ReadonlyMap<string, DoneMessage>;
  },
  elected: NodeId | null,
  epoch: number | null,
): { ms: number; from: 'leader' | 'clients' } | null {
  if (x.killAt === null || elected === null) return null;
  const killAt = x.killAt;
  const ev = x.nodeEvents.find((e) => e.t >= killAt && e.ev === 'first-commit' && e.node === elected);
  if (ev) return { ms: ev.t - killAt, from: 'leader' };
  if (epoch === null) return null;
  const acks = [...x.dones.values()].flatMap((d) => {
    const at = firstAckFrom(d.firstAckByEpoch, epoch);
    return at !== undefined && at >= killAt ? [at] : [];
  });
  return acks.length > 0 ? { ms: Math.min(...acks) - killAt, from: 'clients' } : null;
}
