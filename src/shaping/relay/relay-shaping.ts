// The userspace delay relay as a run's shaping, shared by the runtimes and targets: one route per
// pair of members in different data centers and per port the target's members dial each other on
// (a POLE node: its peer port, dialled by the higher sid; a ZooKeeper server: its quorum and
// election ports, dialled both ways), and the probe that measures the RTT between every pair of
// data centers through routes of the same kind.
import type { NodeId } from '../../vocabulary/names.js';
import { DelayRelay, type DelayRelayOptions, type RelayRoute } from './delay-relay.js';
import type { LinkDelay } from './delay-distribution.js';
import { startEchoServer } from './echo-server.js';
import { measureRtt } from './rtt-probe.js';
import type { DirectionStats, RelayStats } from './relay-protocol.js';
import type { Topology } from '../../topology/topology.js';
import type { Address, PairReading, PairReadings, ShapingUsage } from '../../vocabulary/names.js';
import type { DialDirection, LinkReadings, RelayedNode, RouteListen, WanDelays } from '../shaper.js';

/** What a run's shaping asks of the relay: the one in this process's worker, or one elsewhere. */
export type RelayHandle = Pick<DelayRelay, 'port' | 'change' | 'block' | 'stats' | 'close'>;

/** A run's relay, as the runtimes hold it. */
export interface NodeRelay {
  readonly relay: RelayHandle;
  /**
   * Where `from` dials `to`'s `port` ('peer' unless named): the relay between data centers, the
   * member itself inside one.
   */
  readonly dial: (from: NodeId, to: NodeId, port?: string) => Address;
  readonly setWanDelays: (mode: WanDelays) => Promise<void>;
  /**
   * Cuts or restores every route between a member of `a` and one of `b`: both ways, or with
   * `oneWay` only what `a`'s members send to `b`'s.
   */
  readonly cut: (a: readonly NodeId[], b: readonly NodeId[], cut: boolean, oneWay?: boolean) => Promise<void>;
  /** A new RTT between two data centers (jitter as the topology says it), until changed again. */
  readonly setRtt: (dcA: string, dcB: string, rttMs: number) => Promise<void>;
  /** CPU ms of the relay's two threads so far (null where /proc is not available), its chunks and wake-ups. */
  readonly usage: () => Promise<ShapingUsage>;
}

/** One direction between two data centers, as the relay takes it. */
export function dcLinkDelay(t: Topology, fromDc: string, toDc: string): LinkDelay {
  return {
    delayMs: t.oneWayDelayMs(fromDc, toDc),
    jitterMs: t.jitterMs(fromDc, toDc),
    distribution: t.shaping.distribution,
  };
}

/**
 * One direction of a link given a new one-way delay: its jitter keeps the topology's proportion
 * to the delay where the topology's delay is not zero, else the topology's own.
 */
function scaledDelay(t: Topology, fromDc: string, toDc: string, delayMs: number): LinkDelay {
  const d = dcLinkDelay(t, fromDc, toDc);
  const jitterMs = d.delayMs > 0 ? (d.jitterMs * delayMs) / d.delayMs : d.jitterMs;
  return { ...d, delayMs, jitterMs };
}

/**
 * Starts the relay for `nodes`; returns it and the dial table: where `from` dials `to` (the relay
 * between data centers, the peer itself inside one). `listenHost`: where routes listen, as seen by
 * the nodes (`advertise`).
 */
export async function startNodeRelay(
  t: Topology,
  nodes: readonly RelayedNode[],
  opts: {
    seed: number;
    listenHost?: string;
    advertiseHost?: string;
    direction?: DialDirection;
    /**
     * Where the route from `from` to `to`'s `port` listens (default: an ephemeral port on
     * listenHost). A ZooKeeper ensemble needs each route on a host of its own and the target's
     * own port number (zk-members.ts says why).
     */
    listenAt?: (from: NodeId, to: NodeId, port: string, target: Address) => RouteListen;
    /** RelayRoute.retryConnectMs for every route. */
    retryConnectMs?: number;
    /** Routes between members of one data center too, with no delay (so that they can be cut). */
    withinDc?: boolean;
    /** Starts the relay with the routes (default: DelayRelay.start, a worker of this process). */
    startRelay?: (o: DelayRelayOptions) => Promise<RelayHandle>;
  },
): Promise<NodeRelay> {
  const dc = (id: NodeId): string => t.node(id).datacenter;
  const portsOf = (n: RelayedNode): Record<string, Address> => ({ peer: n.peer, ...n.more });
  const routeName = (from: NodeId, to: NodeId, port: string): string =>
    port === 'peer' ? `${from}>${to}` : `${from}>${to}:${port}`;
  const routes: RelayRoute[] = [];
  const ends = new Map<string, { from: NodeId; to: NodeId }>();
  for (const from of nodes)
    for (const to of nodes) {
      if (from.id === to.id || (dc(from.id) === dc(to.id) && !opts.withinDc)) continue;
      if ((opts.direction ?? 'higher-sid') === 'higher-sid' && from.sid <= to.sid) continue;
      for (const [port, target] of Object.entries(portsOf(to))) {
        const at = opts.listenAt?.(from.id, to.id, port, target);
        ends.set(routeName(from.id, to.id, port), { from: from.id, to: to.id });
        routes.push({
          name: routeName(from.id, to.id, port),
          target,
          forward: dcLinkDelay(t, dc(from.id), dc(to.id)),
          backward: dcLinkDelay(t, dc(to.id), dc(from.id)),
          ...(at?.host !== undefined ? { listenHost: at.host } : {}),
          ...(at ? { listenPort: at.port } : {}),
          ...(at?.acceptFrom !== undefined ? { acceptFrom: at.acceptFrom } : {}),
          ...(opts.retryConnectMs ? { retryConnectMs: opts.retryConnectMs } : {}),
        });
      }
    }
  const relay = await (opts.startRelay ?? ((o) => DelayRelay.start(o)))({
    routes,
    seed: opts.seed,
    ...(opts.listenHost ? { host: opts.listenHost } : {}),
  });
  const byName = new Map(routes.map((r) => [r.name, r]));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const host = opts.advertiseHost ?? opts.listenHost ?? '127.0.0.1';
  const none = (d: LinkDelay): LinkDelay => ({ ...d, delayMs: 0, jitterMs: 0 });
  // The delays in force per route: the topology's until a link changes (setRtt).
  const current = new Map(routes.map((r) => [r.name, { forward: r.forward, backward: r.backward }]));
  return {
    relay,
    usage: async () => {
      const { worker: w, routes: rs } = await relay.stats();
      return {
        cpuMs: w.cpuMs === null ? null : w.cpuMs + (w.clockCpuMs ?? 0),
        chunks: rs.reduce((n, r) => n + r.forward.chunks + r.backward.chunks, 0),
        wakes: w.wakes + w.clockWakes,
      };
    },
    setWanDelays: (mode) =>
      relay.change(
        routes.map((r) => {
          const d = current.get(r.name)!;
          return {
            name: r.name,
            forward: mode === 'zero' ? none(d.forward) : d.forward,
            backward: mode === 'zero' ? none(d.backward) : d.backward,
          };
        }),
      ),
    cut: async (a, b, blocked, oneWay = false) => {
      const inA = new Set(a);
      const inB = new Set(b);
      // A route's forward way is what its dialler (from) sends: a's sends are forward where a
      // dials, backward where b does.
      const names = (fromA: boolean): string[] =>
        [...ends]
          .filter(([, e]) => (fromA ? inA.has(e.from) && inB.has(e.to) : inB.has(e.from) && inA.has(e.to)))
          .map(([name]) => name);
      const aDials = names(true);
      const bDials = names(false);
      if (!oneWay) {
        const both = [...aDials, ...bDials];
        if (both.length > 0) await relay.block(both, blocked, 'both');
        return;
      }
      if (aDials.length > 0) await relay.block(aDials, blocked, 'forward');
      if (bDials.length > 0) await relay.block(bDials, blocked, 'backward');
    },
    setRtt: async (dcA, dcB, rttMs) => {
      const changes = [...ends]
        .filter(([, e]) => {
          const pair = [dc(e.from), dc(e.to)];
          return (pair[0] === dcA && pair[1] === dcB) || (pair[0] === dcB && pair[1] === dcA);
        })
        .map(([name, e]) => {
          const forward = scaledDelay(t, dc(e.from), dc(e.to), rttMs / 2);
          const backward = scaledDelay(t, dc(e.to), dc(e.from), rttMs / 2);
          current.set(name, { forward, backward });
          return { name, forward, backward };
        });
      if (changes.length > 0) await relay.change(changes);
    },
    dial: (from, to, port = 'peer') => {
      const name = routeName(from, to, port);
      const route = byName.get(name);
      if (route) return { host: route.listenHost ?? host, port: relay.port(name) };
      const direct = portsOf(byId.get(to) as RelayedNode)[port];
      if (!direct) throw new Error(`${to} has no port named ${port}`);
      return direct;
    },
  };
}

/** One ordered pair of data centers and the delays of its two directions, to measure. */
export interface DcPairDelay {
  readonly a: string;
  readonly b: string;
  readonly forward: LinkDelay;
  readonly backward: LinkDelay;
}

/** Every ordered pair of the topology's data centers, with its delays. */
export function dcPairDelays(t: Topology): DcPairDelay[] {
  const dcs = t.datacenters.map((d) => d.name);
  return dcs.flatMap((a) =>
    dcs
      .filter((b) => b !== a)
      .map((b) => ({ a, b, forward: dcLinkDelay(t, a, b), backward: dcLinkDelay(t, b, a) })),
  );
}

/**
 * Median RTT between every ordered pair of data centers through relay routes of the same delays to
 * an echo server (its own thread), at least `samples` round trips each, all pairs at once.
 */
export async function measureRelayLinks(t: Topology, seed: number, samples: number): Promise<LinkReadings> {
  return linkReadings(t, await measurePairDelays(dcPairDelays(t), seed, samples));
}

/** The kept reading's pair RTTs ("a>b" → ms) as the matrix a run keeps: every data center to itself 0. */
export function linkReadings(t: Topology, r: PairReadings): LinkReadings {
  const rtts = new Map<string, Map<string, number>>(
    t.datacenters.map((d) => [d.name, new Map([[d.name, 0]])]),
  );
  for (const [pair, rtt] of Object.entries(r.readings[r.kept]?.rtts ?? {}))
    rtts.get(pair.split('>')[0]!)?.set(pair.split('>')[1]!, rtt);
  return { rtts, readings: r.kept < 0 ? null : r };
}

/** A pair's round trips take up to about this long (ms) when `samples` would take less. */
const MEASURE_BUDGET_MS = 1000;
const MAX_SAMPLES = 100;
const PROBE_INTERVAL_MS = 5;

/**
 * Round trips to take through a pair: at least `samples`, and as many more as fit in about a
 * second (at most 100). On a busy 2-core VM one round trip in 20 held up by 20 ms moved the mean
 * of a 10 ms link by a whole ms (a docker run read 11.6 ms); 66 dilute it threefold, at no cost
 * on long links (a 172 ms link keeps its 20).
 */
export function pairSamples(p: DcPairDelay, samples: number): number {
  const rtt = p.forward.delayMs + p.backward.delayMs;
  const fit = Math.floor(MEASURE_BUDGET_MS / (rtt + PROBE_INTERVAL_MS));
  return Math.max(samples, Math.min(MAX_SAMPLES, fit));
}

/**
 * The undelayed route's median round trip up to which a reading counts as taken on a quiet
 * machine. On this project's 2-core VM it read 0.47-0.77 ms in the runs and tests of 2026-11-28
 * (process, swarm and alone). A CI run's one-node swarm once read a 20.75 ms link as 32.62 ms: the
 * machine held most of that second's probes, which only its own round trip, read beside them, can
 * tell from a slow link.
 */
export const QUIET_UNDELAYED_MS = 2;
/**
 * A pair's release lateness (both directions, by the relay's own clock) up to which a reading counts
 * as quiet. The relay's accuracy bar is 0.5 ms a release; e2e-2dc's 10 ms link read 12.5-13.0 ms
 * beyond an undelayed route of 1.5-1.7 ms in 2 of 24 runs of 2026-11-28 (back to back, the machine
 * 76-81 % busy by those runs' own CPU figures).
 */
export const QUIET_LATENESS_MS = 1;
/** Readings at most; and the pause before another, for whatever held the machine to pass. */
const MAX_READINGS = 3;
const PAUSE_BEFORE_REREAD_MS = 500;

/**
 * The median RTT of each pair through a relay of its delays to an echo server, in this process
 * (the swarm's relay service runs it where its routes run), with a route of no delay read beside
 * them. The median, not the mean: the probe shares the machine with a starting cluster, and a few
 * round trips held up by the host (a docker run in CI read a 10 ms link as 12.04 ms on average,
 * then 10 ms in two runs alone) say nothing of the link's delay, which is what this reading checks.
 * A reading whose undelayed route took more than `quietUndelayedMs` (QUIET_UNDELAYED_MS), or
 * whose pairs the relay released more than `quietLatenessMs` late (QUIET_LATENESS_MS, its own
 * account), was held up: it is read again, up to MAX_READINGS in all, and every reading is
 * returned; the one held up least is kept.
 */
export async function measurePairDelays(
  pairs: readonly DcPairDelay[],
  seed: number,
  samples: number,
  quietUndelayedMs = QUIET_UNDELAYED_MS,
  quietLatenessMs = QUIET_LATENESS_MS,
): Promise<PairReadings> {
  const readings: PairReading[] = [];
  if (pairs.length === 0) return { readings, kept: -1 };
  const echo = await startEchoServer({ inWorker: true });
  const none: LinkDelay = { delayMs: 0, jitterMs: 0, distribution: 'normal' };
  const probe = await DelayRelay.start({
    seed,
    routes: [
      ...pairs.map((p) => ({
        name: `${p.a}>${p.b}`,
        target: { host: '127.0.0.1', port: echo.port },
        forward: p.forward,
        backward: p.backward,
      })),
      { name: UNDELAYED, target: { host: '127.0.0.1', port: echo.port }, forward: none, backward: none },
    ],
  });
  const read = (name: string, n: number, until?: Promise<unknown>) =>
    measureRtt({
      host: '127.0.0.1',
      port: probe.port(name),
      samples: n,
      intervalMs: PROBE_INTERVAL_MS,
      ...(until ? { until } : {}),
    });
  try {
    for (;;) {
      const before = await probe.stats();
      const paired = Promise.all(pairs.map((p) => read(`${p.a}>${p.b}`, pairSamples(p, samples))));
      const [rtts, undelayed] = await Promise.all([paired, read(UNDELAYED, samples, paired)]);
      const lateness = releaseLateness(before, await probe.stats());
      const reading: PairReading = {
        rtts: Object.fromEntries(pairs.map((p, i) => [`${p.a}>${p.b}`, rtts[i]!.p50Ms])),
        undelayedMs: undelayed.p50Ms,
        latenessMs: Object.fromEntries(
          pairs.map((p) => [`${p.a}>${p.b}`, lateness.get(`${p.a}>${p.b}`) ?? 0]),
        ),
        meanRtts: Object.fromEntries(pairs.map((p, i) => [`${p.a}>${p.b}`, rtts[i]!.meanMs])),
        undelayedMeanMs: undelayed.meanMs,
      };
      readings.push(reading);
      const quiet = undelayed.p50Ms <= quietUndelayedMs && latestRelease(reading) <= quietLatenessMs;
      if (quiet || readings.length >= MAX_READINGS) break;
      await new Promise((r) => setTimeout(r, PAUSE_BEFORE_REREAD_MS));
    }
  } finally {
    await probe.close();
    await echo.close();
  }
  const kept = readings.reduce((best, r, i) => (heldUpBy(r) < heldUpBy(readings[best]!) ? i : best), 0);
  return { readings, kept };
}

/** The pair the relay released latest in a reading: its lateness, ms. */
function latestRelease(r: PairReading): number {
  return Math.max(0, ...Object.values(r.latenessMs ?? {}));
}

/** What the machine added to a reading at most: the undelayed route, and the latest pair's release. */
export function heldUpBy(r: PairReading): number {
  return r.undelayedMs + latestRelease(r);
}

/** Per route, the mean release lateness of each direction between two snapshots, added, ms. */
function releaseLateness(before: RelayStats, after: RelayStats): Map<string, number> {
  const was = new Map(before.routes.map((r) => [r.name, r]));
  const out = new Map<string, number>();
  for (const r of after.routes) {
    const b = was.get(r.name);
    const mean = (now: DirectionStats, then: DirectionStats | undefined): number => {
      const chunks = now.chunks - (then?.chunks ?? 0);
      const sum = now.latenessMeanMs * now.chunks - (then ? then.latenessMeanMs * then.chunks : 0);
      return chunks > 0 ? Math.max(0, sum / chunks) : 0;
    };
    out.set(r.name, mean(r.forward, b?.forward) + mean(r.backward, b?.backward));
  }
  return out;
}

const UNDELAYED = 'undelayed';
