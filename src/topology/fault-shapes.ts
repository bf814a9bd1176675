// The shapes of the faults that split a cluster by members rather than by data centers: a bridge
// (two halves that each see one member between them), a ring of majorities (each member sees its
// neighbours only, a different majority each), and a minority. Pure and shared: the nemesis cuts
// the links these name, and the report's model takes the same ones out of a leader's quorum.
import type { NodeId } from '../vocabulary/names.js';
import { shuffled, type Random } from '../util/random.js';
import { majorityOf } from '../util/majority.js';

/**
 * The two halves a bridge on `bridge` splits the others into, in the order given (server ids): the first half
 * has the extra member when the others are odd. Each half with the bridge is a majority when the
 * cluster has an odd size.
 */
export function bridgeHalves(members: readonly NodeId[], bridge: NodeId): [NodeId[], NodeId[]] {
  const others = members.filter((m) => m !== bridge);
  const cut = Math.ceil(others.length / 2);
  return [others.slice(0, cut), others.slice(cut)];
}

/**
 * The ring order a topology gets when the file names none: the data centers interleaved (one
 * member of each in turn), so that neighbours sit in different data centers where they can.
 */
export function interleaved(byDc: readonly (readonly NodeId[])[]): NodeId[] {
  const out: NodeId[] = [];
  for (let i = 0; i < Math.max(0, ...byDc.map((d) => d.length)); i++)
    for (const dc of byDc) if (i < dc.length) out.push(dc[i]!);
  return out;
}

/** A minority drawn by `random`: as many members as a majority can do without, at least one. */
export function drawMinority(members: readonly NodeId[], random: Random): NodeId[] {
  const size = Math.max(1, members.length - majorityOf(members.length));
  return shuffled(members, random).slice(0, size);
}
