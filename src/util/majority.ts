// The one quorum rule every part counts with: the POLE node's core, the model's consensus score,
// the nemesis deciding whether a cut leaves the leader a quorum, ZooKeeper's start order, the
// latency anatomy. Written once, so that a fault, the model and the node never count differently.

/** The smallest majority of `n` members. */
export const majorityOf = (n: number): number => Math.floor(n / 2) + 1;
