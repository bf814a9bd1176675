// The delay relay as a swarm service (shaping where the kernel has no netem): the same relay
// (shaping/relay/, its routes in a worker thread) run inside a task on the run's overlay, where
// members dial it by name and it dials them by theirs. The harness drives it over the task's
// dial-back connection: the routes to start, delay changes, cuts, stats, the RTT measurement, close.
// So the routes, cuts and link changes are the relay shaping's own (startNodeRelay), only the
// DelayRelay they act on lives in the task.
import type { Socket } from 'node:net';
import { DelayRelay, type DelayRelayOptions, type RelayStats } from '../../shaping/relay/delay-relay.js';
import type { RouteDelayChange, RouteDirection } from '../../shaping/relay/relay-protocol.js';
import { measurePairDelays, type DcPairDelay, type RelayHandle } from '../../shaping/relay/relay-shaping.js';
import type { PairReadings } from '../../vocabulary/names.js';
import { serveRpc, type TaskRpc } from './task-rpc.js';

/** The task's side: one relay, made by the harness's `start`; ends with the connection. */
export async function serveRelay(socket: Socket): Promise<void> {
  let relay: DelayRelay | undefined;
  const started = (): DelayRelay => {
    if (!relay) throw new Error('the relay has not started');
    return relay;
  };
  await serveRpc(socket, {
    start: async (o: DelayRelayOptions) => {
      if (relay) throw new Error('the relay has started already');
      relay = await DelayRelay.start(o);
      return Object.fromEntries(o.routes.map((r) => [r.name, relay!.port(r.name)]));
    },
    change: async (changes: RouteDelayChange[]) => started().change(changes),
    block: async (a: { names: string[]; blocked: boolean; direction?: RouteDirection }) =>
      started().block(a.names, a.blocked, a.direction),
    stats: async () => started().stats(),
    measure: (a: { pairs: DcPairDelay[]; seed: number; samples: number }) =>
      measurePairDelays(a.pairs, a.seed, a.samples),
    close: async () => {
      await relay?.close();
      relay = undefined;
    },
  });
  await relay?.close();
}

/**
 * The harness's side: starts the task's relay with these routes; the handle startNodeRelay keeps.
 * Routes listen on every address of the task (members reach it by its service name).
 */
export async function startRemoteRelay(rpc: TaskRpc, o: DelayRelayOptions): Promise<RelayHandle> {
  const ports = await rpc.call<Record<string, number>>('start', { ...o, host: '0.0.0.0' });
  let closed: Promise<void> | undefined;
  return {
    port: (name) => {
      const p = ports[name];
      if (p === undefined) throw new Error(`no relay route named '${name}'`);
      return p;
    },
    change: async (changes) => void (await rpc.call('change', changes)),
    block: async (names, blocked, direction) => void (await rpc.call('block', { names, blocked, direction })),
    stats: () => rpc.call<RelayStats>('stats'),
    close: () =>
      (closed ??= rpc
        .call('close', {}, 5_000)
        .then(() => undefined)
        .catch(() => undefined)),
  };
}

/** Median RTT of each ordered pair of data centers, measured by the relay task on its own machine. */
export async function measureRemote(
  rpc: TaskRpc,
  pairs: readonly DcPairDelay[],
  seed: number,
  samples: number,
): Promise<PairReadings> {
  return rpc.call<PairReadings>('measure', { pairs, seed, samples }, 60_000);
}
