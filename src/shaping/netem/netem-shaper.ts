// src/shaping/netem/: shaping by the kernel: each node's tc plan (htb, netem leaves, u32 filters),
// applying it, and the probe that says whether this kernel has netem.
//
// The netem plan as a Shaper (docker runtime, where the kernel has netem): tc commands in every
// member's network namespace (netem-plan.ts), run once at install. Members dial each other
// directly; the kernel delays the packets. It cannot change its delays during a run yet, nor
// measure them apart from a run, and says so (the report shows no floor and no measured RTT).
import type { NodeId } from '../../node/core/types.js';
import type { Topology } from '../../topology/topology.js';
import { directDial, unmeasuredLinks, type Shaper } from '../shaper.js';
import { applyPlan } from './apply-plan.js';
import { planNetem } from './netem-plan.js';

export function netemShaper(
  t: Topology,
  o: { reason: string; plan?: (addresses: ReadonlyMap<NodeId, string>) => Map<NodeId, string[][]> },
): Shaper {
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
      return directDial(req.members);
    },
    ...netemControls(t),
  };
}

/**
 * What a run may ask of netem shaping once it is in: nothing yet. htb cannot be changed in place and
 * the plan is not redone for a change during a run; a cut would be a drop filter per pair, a delay
 * change a netem change (not planned yet); the trees go with the members' network namespaces.
 */
export function netemControls(t: Topology): Omit<Shaper, 'kind' | 'reason' | 'install'> {
  return {
    change: () => Promise.resolve(false),
    cut: () => Promise.resolve(false),
    setRtt: () => Promise.resolve(false),
    measure: () => Promise.resolve(unmeasuredLinks(t)),
    cpuMs: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  };
}
