// src/shaping/relay/: the userspace delay relay: routes in a worker thread with per-direction delay
// queues, delay distributions, cuts and RTT changes, the RTT probe, and the relay as a Shaper.
//
// The userspace delay relay as a Shaper: routes between members of different data centers (see
// relay-shaping.ts), changed in place for the floor's calibration, measured through routes of the
// same delays to an echo server, and its threads' CPU in the self-check.
import type { Topology } from '../../topology/topology.js';
import { MEMBER_CUTS } from '../../topology/topology-schema.js';
import type { Dial, Shaper } from '../shaper.js';
import { measureRelayLinks, startNodeRelay, type NodeRelay } from './relay-shaping.js';

export function relayShaper(t: Topology, o: { seed: number; reason: string }): Shaper {
  let relay: NodeRelay | undefined;
  return {
    kind: 'relay',
    reason: o.reason,
    async install(req): Promise<Dial> {
      if (relay) throw new Error('the relay is installed already');
      relay = await startNodeRelay(t, req.members, {
        seed: o.seed,
        direction: req.plan.direction,
        ...(req.plan.listenAt ? { listenAt: req.plan.listenAt } : {}),
        ...(req.plan.retryConnectMs ? { retryConnectMs: req.plan.retryConnectMs } : {}),
        ...(req.listenHost ? { listenHost: req.listenHost } : {}),
        // Isolating a node (or a one-way cut, a bridge, a ring) cuts links inside a data center
        // too: those go through the relay (with no delay) only when the scenario has such a fault.
        withinDc: t.scenario.faults.some((f) => MEMBER_CUTS.includes(f.action)),
      });
      return relay.dial;
    },
    ...relayControls(() => relay),
    measure: (samples) => measureRelayLinks(t, o.seed + 1, samples),
    usage: () => relay?.usage() ?? Promise.resolve(null),
    async close() {
      const r = relay;
      relay = undefined;
      await r?.relay.close();
    },
  };
}

/**
 * A Shaper's link faults on a node relay, wherever the relay runs (in this process, or as the
 * swarm's relay service): false while none is installed.
 */
export function relayControls(
  current: () => NodeRelay | undefined,
): Pick<Shaper, 'change' | 'cut' | 'setRtt'> {
  return {
    async change(mode) {
      const relay = current();
      if (!relay) return false;
      await relay.setWanDelays(mode);
      return true;
    },
    async cut(a, b, cut, oneWay) {
      const relay = current();
      if (!relay) return false;
      await relay.cut(a, b, cut, oneWay);
      return true;
    },
    async setRtt(dcA, dcB, rttMs) {
      const relay = current();
      if (!relay) return false;
      await relay.setRtt(dcA, dcB, rttMs);
      return true;
    },
  };
}
