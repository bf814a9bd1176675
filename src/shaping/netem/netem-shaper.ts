// src/shaping/netem/: shaping by the kernel: each node's tc plan (htb, netem leaves, u32 filters),
// applying it, and the probe that says whether this kernel has netem.
//
// The netem plan as a Shaper (docker runtime, where the kernel has netem): tc commands in every
// member's network namespace (netem-plan.ts), run once at install. Members dial each other
// directly; the kernel delays the packets. Partitions cut each pair's filters to a dropping class.
// It cannot change its delays during a run yet, nor measure them apart from a run, and says so
// (the report shows no floor and no measured RTT).
import type { NodeId } from '../../vocabulary/names.js';
import type { Topology } from '../../topology/topology.js';
import { directDial, unmeasuredLinks, type Shaper } from '../shaper.js';
import { applyPlan } from './apply-plan.js';
import { DEFAULT_DEV, planCut, planNetem } from './netem-plan.js';

export function netemShaper(
  t: Topology,
  o: { reason: string; plan?: (addresses: ReadonlyMap<NodeId, string>) => Map<NodeId, string[][]> },
): Shaper {
  let installed: NetemTrees | undefined;
  return {
    kind: 'netem',
    reason: o.reason,
    async install(req) {
      if (!req.addresses || !req.exec)
        throw new Error(
          'netem shaping needs every member in a network namespace of its own (the docker runtime)',
        );
      const exec = req.exec;
      const plan = (o.plan ?? ((a) => planNetem(t, a)))(req.addresses);
      for (const [id, commands] of plan) await applyPlan(commands, (argv) => exec(id, argv));
      installed = { addresses: req.addresses, exec, dev: () => DEFAULT_DEV };
      return directDial(req.members);
    },
    // A member's namespace is its holder's, which a restart keeps: its tree, and its cuts, stay.
    ...netemControls(t, () => installed),
  };
}

/** Where the netem trees are, once installed: each member's address, a tc runner in its namespace, the interface. */
export interface NetemTrees {
  readonly addresses: ReadonlyMap<NodeId, string>;
  readonly exec: (id: NodeId, argv: string[]) => Promise<unknown>;
  readonly dev: (id: NodeId) => string;
}

/** What a run may ask of netem shaping once it is in; `reapply` puts a member's cuts back in a new tree. */
export interface NetemControls extends Omit<Shaper, 'kind' | 'reason' | 'install'> {
  reapplyCuts(id: NodeId): Promise<void>;
}

/**
 * What a run may ask of netem shaping once it is in. Cuts and heals: every pair's filters pointed
 * at a dropping class and back (netem-plan.ts planCut: no netem needed). Not yet: a delay change
 * (a netem change of each class's leaf) nor a measurement apart from the run; the trees go with the
 * members' network namespaces.
 */
export function netemControls(
  t: Topology,
  trees: () => NetemTrees | undefined = () => undefined,
): NetemControls {
  /** Ordered pairs "from→to" whose link is cut now (so a rebuilt tree gets its cuts back). */
  const cuts = new Set<string>();
  const key = (from: NodeId, to: NodeId): string => `${from}\u0000${to}`;
  const run = async (tr: NetemTrees, self: NodeId, peers: readonly NodeId[], cut: boolean): Promise<void> => {
    if (peers.length === 0) return;
    for (const argv of planCut(t, tr.addresses, self, peers, cut, tr.dev(self))) await tr.exec(self, argv);
  };
  return {
    change: () => Promise.resolve(false),
    async cut(a, b, cut, oneWay = false) {
      const tr = trees();
      if (!tr) return false;
      const ends = new Map<NodeId, NodeId[]>();
      // Each member's filters drop what it sends: a one-way cut is the a side's egress alone.
      for (const [from, to] of [
        ...a.flatMap((x) => b.map((y) => [x, y] as const)),
        ...(oneWay ? [] : b.flatMap((y) => a.map((x) => [y, x] as const))),
      ]) {
        if (from === to) continue;
        if (cut) cuts.add(key(from, to));
        else cuts.delete(key(from, to));
        ends.set(from, [...(ends.get(from) ?? []), to]);
      }
      await Promise.all([...ends].map(([self, peers]) => run(tr, self, peers, cut)));
      return true;
    },
    async reapplyCuts(id) {
      const tr = trees();
      if (!tr) return;
      const peers = [...cuts]
        .map((k) => k.split('\u0000'))
        .filter(([f]) => f === id)
        .map(([, to]) => to!);
      await run(tr, id, peers, true);
    },
    setRtt: () => Promise.resolve(false),
    measure: () => Promise.resolve(unmeasuredLinks(t)),
    usage: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  };
}
