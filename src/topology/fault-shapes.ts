// The shapes of the faults that split a cluster by members rather than by data centers: a bridge
// (two halves that each see one member between them), a ring of majorities (each member sees its
// neighbours only, a different majority each), and a minority. Pure and shared: the nemesis cuts
// the links these name, and the report's model takes the same ones out of a leader's quorum.
import type { NodeId } from '../vocabulary/names.js';
import type { Random } from '../util/random.js';
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
 * The pairs a ring of majorities cuts, for the members in ring order: each keeps its links to the
 * neighbours within `reach` places either way, where `reach` is the least that gives it a majority
 * with itself, and loses the rest. Empty where every member is within reach of every other (fewer
 * than four members), so no ring of different majorities exists.
 */
export function ringCuts(order: readonly NodeId[]): [NodeId, NodeId][] {
  const n = order.length;
  const reach = Math.ceil((majorityOf(n) - 1) / 2);
  const pairs: [NodeId, NodeId][] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const apart = Math.min(j - i, n - (j - i));
      if (apart > reach) pairs.push([order[i]!, order[j]!]);
    }
  return pairs;
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

/** The members in an order drawn by `random` (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
