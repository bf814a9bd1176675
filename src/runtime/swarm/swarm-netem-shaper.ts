// The netem shaping of the swarm runtime: the netem plan (shaping/netem/netem-plan.ts) run inside
// every member's task, through its node's fault helper, where the hosts' kernels have netem (real
// clouds do; this machine's does not, and the relay is the swarm's default).
//
// A member dials its peers directly by their names on the run's overlay; each member's egress is
// classed by destination address into its data center's netem class. The addresses are the
// tasks' own, known once the swarm has scheduled them (before their gates open), and a restarted
// member comes back at a new one: then every running member's tree is made again, the filters
// naming the new address (each tree is torn down first: htb cannot be changed in place), a few
// ms during which the links are not delayed. The interface is the one that carries the task's
// overlay address (a task with published ports has a second one, for docker_gwbridge).
import type { NodeId } from '../../vocabulary/names.js';
import { applyPlan } from '../../shaping/netem/apply-plan.js';
import { planNetem, type NetemLeaf } from '../../shaping/netem/netem-plan.js';
import { netemControls, type NetemTrees } from '../../shaping/netem/netem-shaper.js';
import { directDial, type Shaper } from '../../shaping/shaper.js';
import type { Topology } from '../../topology/topology.js';

/** Runs a command in a member's task container; resolves with its stdout, rejects on a non-zero exit. */
export type MemberExec = (id: NodeId, argv: string[]) => Promise<string>;

export interface SwarmNetemShaper extends Shaper {
  /**
   * Puts the plan in the members `ids` (all running, or held at their gates), given every member's
   * address now; a member whose tree is there already gets it anew.
   */
  apply(addresses: ReadonlyMap<NodeId, string>, exec: MemberExec, ids: readonly NodeId[]): Promise<void>;
}

/** The interface carrying `address` in `ip -o -4 addr show` output; null if none does. */
export function devWithAddress(ipAddrText: string, address: string): string | null {
  for (const line of ipAddrText.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+([\d.]+)\//.exec(line);
    if (m && m[2] === address) return m[1]!.replace(/@.*$/, '');
  }
  return null;
}

export function swarmNetemShaper(t: Topology, o: { reason: string; leaf?: NetemLeaf }): SwarmNetemShaper {
  const shaped = new Set<NodeId>();
  /** The interface each member's tree is on, and the latest addresses and exec (for cuts). */
  const devs = new Map<NodeId, string>();
  let trees: NetemTrees | undefined;
  const controls = netemControls(t, () => trees);
  /** Whether a node's kernel has netem, by the first member tried there. */
  const probed = new Set<string>();
  return {
    kind: 'netem',
    reason: o.reason,
    // The members' tasks do not exist yet: they dial each other directly, and `apply` shapes them.
    install: (req) => Promise.resolve(directDial(req.members)),
    async apply(addresses, exec, ids) {
      for (const id of ids) {
        const address = addresses.get(id);
        if (address === undefined) throw new Error(`netem: no address for ${id} on the run's network`);
        const dev = devWithAddress(await exec(id, ['ip', '-o', '-4', 'addr', 'show']), address);
        if (dev === null) throw new Error(`netem: no interface of ${id} carries its address ${address}`);
        if ((o.leaf ?? 'netem') === 'netem' && !probed.has(id)) {
          // Said plainly where the kernel has no netem, rather than as the plan's third command failing.
          await exec(id, ['tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'handle', '9:', 'netem', 'delay', '0ms'])
            .then(() => exec(id, ['tc', 'qdisc', 'del', 'dev', 'lo', 'root']))
            .catch((err: Error) => {
              throw new Error(
                `netem shaping: ${id}'s host kernel has no netem qdisc (sch_netem), so no delay can be added there; use --shaping relay (${err.message.trim()})`,
              );
            });
          probed.add(id);
        }
        if (shaped.has(id)) await exec(id, ['tc', 'qdisc', 'del', 'dev', dev, 'root']).catch(() => '');
        const commands = planNetem(t, addresses, { dev, ...(o.leaf ? { leaf: o.leaf } : {}) }).get(id) ?? [];
        await applyPlan(commands, (argv) => exec(id, argv));
        shaped.add(id);
        devs.set(id, dev);
        trees = { addresses, exec, dev: (m) => devs.get(m) ?? dev };
        // A tree made anew (a restart's new address) lost its cuts: a partition still on stays on.
        await controls.reapplyCuts(id);
      }
    },
    // As the docker runtime's netem: partitions by filters, no delay change yet.
    ...controls,
  };
}
