// Addresses of the harness on a run's bridge, one per ordered pair of members in different data
// centers, for relay routes that must keep the target's own port numbers (ZooKeeper: a peer dials
// back the address a member announces, so each pair needs an address of its own, not a port).
// They sit in the upper half of the run's /24, which Docker never hands out (the network's IP
// range is the lower half), and go away with the bridge when the run's network is removed, so a
// crashed harness leaves none behind that `pole-bench clean` does not take.
import { execa } from 'execa';
import type { NodeId } from '../../vocabulary/names.js';
import type { Topology } from '../../topology/topology.js';

/** The first host number of the upper half, and how many fit (.128 … .253; .254/.255 stay free). */
const FIRST = 128;
const CAPACITY = 126;

export interface PairAddresses {
  /** The address of the route from `from` to `to`. */
  hostOf(from: NodeId, to: NodeId): string;
  /** Every address of the plan. */
  all(): string[];
}

/** Numbers the ordered pairs of members in different data centers, in topology order. */
export function pairAddressPlan(t: Topology, subnet: string): PairAddresses {
  const prefix = subnet.split('.').slice(0, 3).join('.');
  const byPair = new Map<string, string>();
  for (const a of t.nodes)
    for (const b of t.nodes) {
      if (a.id === b.id || a.datacenter === b.datacenter) continue;
      byPair.set(`${a.id}>${b.id}`, `${prefix}.${FIRST + byPair.size}`);
    }
  if (byPair.size > CAPACITY)
    throw new Error(
      `${t.name}: ${byPair.size} ordered pairs of members in different data centers need an address each; ` +
        `a run's network has ${CAPACITY}`,
    );
  return {
    hostOf: (from, to) => {
      const h = byPair.get(`${from}>${to}`);
      if (h === undefined) throw new Error(`no relay address for ${from}>${to} (same data center?)`);
      return h;
    },
    all: () => [...byPair.values()],
  };
}

/** Docker's name for a user-defined bridge network's interface. */
export function bridgeName(networkId: string): string {
  return `br-${networkId.slice(0, 12)}`;
}

/** Adds each address (/32) to the bridge, in one `ip -batch` (root, as Docker itself). */
export async function addBridgeAddresses(bridge: string, addresses: readonly string[]): Promise<void> {
  if (addresses.length === 0) return;
  const r = await execa('ip', ['-batch', '-'], {
    input: addresses.map((a) => `address add ${a}/32 dev ${bridge}`).join('\n') + '\n',
    reject: false,
    timeout: 10_000,
  });
  if (r.failed)
    throw new Error(
      `could not add the relay's addresses to ${bridge} (${r.stderr.trim() || r.shortMessage}); ` +
        `the docker runtime's relay needs root for them`,
    );
}
