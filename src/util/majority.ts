// The one quorum rule every part counts with: the POLE node's core, the model's consensus score,
// the nemesis deciding whether a cut leaves the leader a quorum, ZooKeeper's start order, the
// latency anatomy; and the ring of majorities the nemesis and the simulator cut. Written once, so
// that a fault, the model and the node never count differently.

/** The smallest majority of `n` members. */
export const majorityOf = (n: number): number => Math.floor(n / 2) + 1;

/**
 * The pairs a ring of majorities cuts, for the members in ring order: each keeps its links to the
 * neighbours within `reach` places either way, where `reach` is the least that gives it a majority
 * with itself, and loses the rest. Empty where every member is within reach of every other (fewer
 * than four members), so no ring of different majorities exists.
 */
export function ringCuts<Id>(order: readonly Id[]): [Id, Id][] {
  const n = order.length;
  const reach = Math.ceil((majorityOf(n) - 1) / 2);
  const pairs: [Id, Id][] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const apart = Math.min(j - i, n - (j - i));
      if (apart > reach) pairs.push([order[i]!, order[j]!]);
    }
  return pairs;
}
