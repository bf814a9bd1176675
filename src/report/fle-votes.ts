// ZooKeeper's deciding election as its leader saw it. FastLeaderElection settles on the best vote a
// member heard in its round (peer epoch, then zxid, then sid), not on the best of every survivor's
// proposal: a survivor that noticed the loss late, or whose vote crossed a slow link, may propose
// the newest history and still not be heard before a quorum has decided (its extra txns are then
// truncated when it syncs). So the scores of a ZooKeeper run are the votes its leader heard in its
// last round before it decided (`vote-heard`, from its own log), and each survivor whose own
// proposal (`candidate`) was not among them is named apart. Pure: events in, scores out.
import type { NodeId } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';

export type ScoreVector = readonly number[];

export interface FleVotes {
  /** Per member voted for, FLE's order of its vote: [peer epoch, zxid epoch, zxid counter, sid]. */
  readonly scores: Record<NodeId, ScoreVector>;
  /** Survivors whose own proposal the leader did not hear: [zxid epoch, zxid counter, sid]. */
  readonly unheard: Record<NodeId, ScoreVector>;
}

export interface FleWindow {
  readonly killed: NodeId | null;
  readonly killAt: number;
  readonly nodeEvents: readonly ClusterEvent[];
}

/** A zxid ("0x…") as FLE ranks it: its epoch, then its counter. */
export function zxidParts(zxid: string): [number, number] {
  const z = BigInt(zxid);
  return [Number(z >> 32n), Number(z & 0xffffffffn)];
}

/**
 * The leader's heard votes between the kill and its election, in the latest round it heard (FLE
 * drops what it heard in a round once a later round reaches it). Null where its log had none (a
 * run recorded before these events existed): the caller falls back to the proposals alone.
 */
export function fleVotes(x: FleWindow, elected: ClusterEvent): FleVotes | null {
  const heard = x.nodeEvents.filter(
    (e): e is Extract<ClusterEvent, { ev: 'vote-heard' }> =>
      e.ev === 'vote-heard' && e.node === elected.node && e.t >= x.killAt && e.t <= elected.t,
  );
  if (heard.length === 0) return null;
  const round = Math.max(...heard.map((v) => v.round));
  const scores: Record<NodeId, ScoreVector> = {};
  for (const v of heard) {
    if (v.round !== round) continue;
    scores[v.leader] ??= [v.peerEpoch, ...zxidParts(v.zxid), v.leaderSid];
  }
  const unheard: Record<NodeId, ScoreVector> = {};
  for (const e of x.nodeEvents) {
    if (e.t < x.killAt || e.t > elected.t || e.ev !== 'candidate' || e.node === x.killed) continue;
    if (scores[e.node] !== undefined || unheard[e.node] !== undefined) continue;
    unheard[e.node] = [...zxidParts(e.zxid), e.sid];
  }
  return { scores, unheard };
}

/** a before b in FLE's (and the history oracle's) order: lexicographic, the greater wins. */
export function compareScores(a: ScoreVector, b: ScoreVector): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -Infinity) - (b[i] ?? -Infinity);
    if (d !== 0) return d;
  }
  return 0;
}

/** The members with the greatest score, in id order (more than one only on a tie). */
export function bestScored(scores: Readonly<Record<string, ScoreVector>>): string[] {
  const entries = Object.entries(scores);
  const best = entries.reduce<ScoreVector | undefined>(
    (m, [, s]) => (m === undefined || compareScores(s, m) > 0 ? s : m),
    undefined,
  );
  return entries
    .filter(([, s]) => best !== undefined && compareScores(s, best) === 0)
    .map(([id]) => id)
    .sort();
}
