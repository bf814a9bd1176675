// Members that must all be given the same peer addresses (ZooKeeper's server lines, etcd's
// initial cluster) reach a peer in another data center through the relay by name, resolved per
// member to a loopback address of that ordered pair, where the relay listens on the peer's own
// port numbers. This is that address.
import type { NodeId } from '../vocabulary/names.js';
import type { Topology } from '../topology/topology.js';

/** The loopback address of the relay route from `from` to `to` (one per ordered pair of members). */
export function pairHost(t: Topology, from: NodeId, to: NodeId): string {
  const i = t.nodes.findIndex((n) => n.id === from);
  const j = t.nodes.findIndex((n) => n.id === to);
  if (i < 0 || j < 0 || i > 244 || j > 244) throw new Error(`no relay address for ${from}>${to}`);
  return `127.${10 + i}.${10 + j}.1`;
}
