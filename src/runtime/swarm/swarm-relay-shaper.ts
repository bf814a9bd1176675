// The relay shaping of the swarm runtime: the relay shaping's routes, cuts and link changes
// (startNodeRelay) on a relay that runs as a service on the run's overlay (relay-service.ts),
// its delays measured by that service on its own machine.
import type { Topology } from '../../topology/topology.js';
import { MEMBER_CUTS } from '../../topology/topology-schema.js';
import type { Dial, Shaper } from '../../shaping/shaper.js';
import { relayControls } from '../../shaping/relay/relay-shaper.js';
import {
  dcPairDelays,
  linkReadings,
  startNodeRelay,
  type NodeRelay,
} from '../../shaping/relay/relay-shaping.js';
import { measureRemote, startRemoteRelay } from './relay-service.js';
import type { TaskRpc } from './task-rpc.js';

export function swarmRelayShaper(
  t: Topology,
  o: {
    seed: number;
    reason: string;
    /** The relay task's connection, once it has dialled in. */
    relayTask: () => Promise<TaskRpc>;
    /** The relay task's address on the overlay, where the members reach it, once it has dialled in. */
    relayAddress: () => Promise<string>;
  },
): Shaper {
  let relay: NodeRelay | undefined;
  return {
    kind: 'relay',
    reason: o.reason,
    async install(req): Promise<Dial> {
      if (relay) throw new Error('the relay is installed already');
      const rpc = await o.relayTask();
      relay = await startNodeRelay(t, req.members, {
        seed: o.seed,
        direction: req.plan.direction,
        ...(req.plan.listenAt ? { listenAt: req.plan.listenAt } : {}),
        ...(req.plan.retryConnectMs ? { retryConnectMs: req.plan.retryConnectMs } : {}),
        listenHost: '0.0.0.0',
        advertiseHost: await o.relayAddress(),
        withinDc: t.scenario.faults.some((f) => MEMBER_CUTS.includes(f.action)),
        startRelay: (ro) => startRemoteRelay(rpc, ro),
      });
      return relay.dial;
    },
    ...relayControls(() => relay),
    async measure(samples) {
      return linkReadings(t, await measureRemote(await o.relayTask(), dcPairDelays(t), o.seed + 1, samples));
    },
    // The relay's threads run in its task, not in the harness: the self-check has no share of them.
    usage: () => Promise.resolve(null),
    async close() {
      const r = relay;
      relay = undefined;
      await r?.relay.close();
    },
  };
}
