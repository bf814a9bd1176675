// Port numbers for members that share one relay address (the swarm's by-source routes): the relay's
// listener for a peer's port then stands for that peer alone, so no two members share a peer port
// number. Each keeps the target's customary numbers, its peer ports moved up by its place in the
// topology; client and status ports stay as they are (each member has an address of its own).
import type { NodeId } from '../vocabulary/names.js';
import type { MemberKind } from '../targets/member-plan.js';
import type { Topology } from '../topology/topology.js';

/** Members this far apart in the topology would take each other's ports. */
const MAX_MEMBERS = 1000;

export function byIndexPorts(
  t: Topology,
  kind: MemberKind,
): (id: NodeId) => Readonly<Record<string, number>> {
  if (t.nodes.length > MAX_MEMBERS) throw new Error(`no port numbers for ${t.nodes.length} members`);
  const index = new Map(t.nodes.map((n, i) => [n.id, i]));
  const peer = new Set(kind.keptPorts);
  const taken = new Set(
    Object.entries(kind.ports)
      .filter(([name]) => !peer.has(name))
      .map(([, port]) => port),
  );
  const ports = new Map(
    t.nodes.map((n) => {
      const i = index.get(n.id)!;
      return [
        n.id,
        Object.fromEntries(
          Object.entries(kind.ports).map(([name, port]) => [name, peer.has(name) ? port + i : port]),
        ),
      ] as const;
    }),
  );
  // A peer port moved onto a client or status port would be bound twice in one member.
  for (const [id, p] of ports)
    for (const name of kind.keptPorts)
      if (taken.has(p[name]!))
        throw new Error(`${id}'s ${name} port ${p[name]} is its client or status port`);
  return (id) => {
    const p = ports.get(id);
    if (!p) throw new Error(`no member ${id}`);
    return p;
  };
}
