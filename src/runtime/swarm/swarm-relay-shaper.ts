// The relay shaping of the swarm runtime: the relay shaping's routes, cuts and link changes
// (startNodeRelay) on a relay that runs as a service on the run's overlay (relay-service.ts),
// its delays measured by that service on its own machine.
import type { Topology } from '../../topology/topology.js';
import type { Dial, Shaper } from '../../shaping/shaper.js';
import { dcPairDelays, startNodeRelay, type NodeRelay } from '../../shaping/relay/relay-shaping.js';
import { measureRemote, startRemoteRelay } from './relay-service.js';
import type { TaskRpc } from './task-rpc.js';

export function swarmRelayShaper(
  t: Topology,
  o: {
    seed: number;
    reason: string;
    /** The relay task's connection, once it has dialled in. */
    relayTask: () => Promise<TaskRpc>;
    /** The name members reach the relay by on the overlay. */
    relayHost: string;
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
        advertiseHost: o.relayHost,
        withinDc: t.scenario.faults.some((f) => f.action === 'isolate'),
        startRelay: (ro) => startRemoteRelay(rpc, ro),
      });
      return relay.dial;
    },
    async change(mode) {
      if (!relay) return false;
      await relay.setWanDelays(mode);
      return true;
    },
    async cut(a, b, cut) {
      if (!relay) return false;
      await relay.cut(a, b, cut);
      return true;
    },
    async setRtt(dcA, dcB, rttMs) {
      if (!relay) return false;
      await relay.setRtt(dcA, dcB, rttMs);
      return true;
    },
    async measure(samples) {
      const out = new Map(t.datacenters.map((d) => [d.name, new Map([[d.name, 0]])]));
      const rtts = await measureRemote(await o.relayTask(), dcPairDelays(t), o.seed + 1, samples);
      for (const [pair, rtt] of rtts) out.get(pair.split('>')[0]!)?.set(pair.split('>')[1]!, rtt);
      return out;
    },
    // The relay's threads run in its task, not in the harness: the self-check has no share of them.
    cpuMs: () => Promise.resolve(null),
    async close() {
      const r = relay;
      relay = undefined;
      await r?.relay.close();
    },
  };
}
