// The embedded default runtime: every node a `pole-bench node` child process on loopback, and
// wide-area links emulated by the userspace delay relay (one route per pair of nodes in different
// data centers, in the direction the higher sid dials), all in one worker thread.
import type { NodeId } from '../node/core/types.js';
import { ProcessCluster, type ClusterEvent } from '../runtime/process-cluster.js';
import { DelayRelay, type RelayRoute } from '../shaping/relay/delay-relay.js';
import type { LinkDelay } from '../shaping/relay/delay-distribution.js';
import { startEchoServer, type EchoServer } from '../shaping/relay/echo-server.js';
import { measureRtt } from '../shaping/relay/rtt-probe.js';
import type { Topology } from '../topology/topology.js';
import type { Address, Runtime, ShapingChoice } from './runtime.js';

export interface ProcessRuntimeOptions {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  /** fsync the nodes' logs (default true). */
  readonly fsync?: boolean;
  /** Oracle spec overriding the topology's. */
  readonly oracle?: string;
}

export class ProcessRuntime implements Runtime {
  readonly name = 'process' as const;
  private cluster: ProcessCluster | undefined;
  private relay: DelayRelay | undefined;
  private tornDown = false;

  constructor(
    private readonly topology: Topology,
    private readonly opts: ProcessRuntimeOptions,
  ) {
    if (opts.shaping.kind === 'netem')
      throw new Error('the process runtime cannot apply netem: its nodes share the host network stack');
  }

  get shaping(): ShapingChoice {
    return this.opts.shaping;
  }

  /** One-way delay and jitter of the direction from one node's data center to another's. */
  private linkDelay(from: NodeId, to: NodeId): LinkDelay {
    const t = this.topology;
    const a = t.node(from).datacenter;
    const b = t.node(to).datacenter;
    return {
      delayMs: t.oneWayDelayMs(a, b),
      jitterMs: t.jitterMs(a, b),
      distribution: t.shaping.distribution,
    };
  }

  async start(): Promise<void> {
    const t = this.topology;
    const c = t.cluster;
    const relayed = this.opts.shaping.kind === 'relay';
    this.cluster = await ProcessCluster.start({
      nodes: t.nodes.map((n) => ({ id: n.id, sid: n.sid })),
      datacenterOf: (id) => t.node(id).datacenter,
      oracle: this.opts.oracle ?? c.oracle,
      ...(c.initialLeader !== undefined ? { initialLeader: c.initialLeader } : {}),
      ...(c.preference ? { preference: c.preference } : {}),
      fsync: this.opts.fsync ?? true,
      timers: c.timers,
      ...(c.measure ? { measure: c.measure as Record<string, number> } : {}),
      ...(c.resign ? { resign: c.resign } : {}),
      ...(relayed ? { dialVia: (nodes) => this.startRelay(nodes) } : {}),
    });
  }

  private async startRelay(
    nodes: ReadonlyArray<{ id: NodeId; sid: number; peerPort: number }>,
  ): Promise<(from: NodeId, to: NodeId) => Address> {
    const t = this.topology;
    const routes: RelayRoute[] = [];
    for (const from of nodes)
      for (const to of nodes) {
        if (from.sid <= to.sid || t.node(from.id).datacenter === t.node(to.id).datacenter) continue;
        routes.push({
          name: `${from.id}>${to.id}`,
          target: { host: '127.0.0.1', port: to.peerPort },
          forward: this.linkDelay(from.id, to.id),
          backward: this.linkDelay(to.id, from.id),
        });
      }
    this.relay = await DelayRelay.start({ routes, seed: this.opts.seed });
    const relay = this.relay;
    const names = new Set(routes.map((r) => r.name));
    const direct = new Map(nodes.map((n) => [n.id, n.peerPort]));
    return (from, to) => ({
      host: '127.0.0.1',
      port: names.has(`${from}>${to}`) ? relay.port(`${from}>${to}`) : (direct.get(to) as number),
    });
  }

  private get c(): ProcessCluster {
    if (!this.cluster) throw new Error('the runtime has not started');
    return this.cluster;
  }

  get events(): readonly ClusterEvent[] {
    return this.cluster?.events ?? [];
  }

  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.c.waitFor(pred, timeoutMs, since);
  }

  kill(id: NodeId): Promise<number> {
    return this.c.kill(id);
  }

  restart(id: NodeId): Promise<void> {
    return this.c.startNode(id);
  }

  pause(id: NodeId): void {
    this.c.pause(id);
  }

  resume(id: NodeId): void {
    this.c.resume(id);
  }

  isRunning(id: NodeId): boolean {
    return this.c.isRunning(id);
  }

  clientAddress(id: NodeId): Address {
    return this.c.clientAddress(id);
  }

  httpAddress(id: NodeId): Address {
    return this.c.httpAddress(id);
  }

  /**
   * Probes every ordered pair of data centers through routes of the same relay (same worker, same
   * delay samplers) to an echo server: the round trip a node of the first sees to one of the second.
   */
  async measureLinks(samples: number): Promise<Map<string, Map<string, number>>> {
    const t = this.topology;
    const dcs = t.datacenters.map((d) => d.name);
    const out = new Map<string, Map<string, number>>(dcs.map((d) => [d, new Map([[d, 0]])]));
    if (this.opts.shaping.kind !== 'relay' || dcs.length < 2) {
      for (const a of dcs) for (const b of dcs) if (a !== b) out.get(a)?.set(b, NaN);
      return out;
    }
    const echo: EchoServer = await startEchoServer();
    const probe = await DelayRelay.start({
      seed: this.opts.seed + 1,
      routes: dcs.flatMap((a) =>
        dcs
          .filter((b) => b !== a)
          .map((b) => ({
            name: `${a}>${b}`,
            target: { host: '127.0.0.1', port: echo.port },
            forward: {
              delayMs: t.oneWayDelayMs(a, b),
              jitterMs: t.jitterMs(a, b),
              distribution: t.shaping.distribution,
            },
            backward: {
              delayMs: t.oneWayDelayMs(b, a),
              jitterMs: t.jitterMs(b, a),
              distribution: t.shaping.distribution,
            },
          })),
      ),
    });
    try {
      await Promise.all(
        dcs.flatMap((a) =>
          dcs
            .filter((b) => b !== a)
            .map(async (b) => {
              const r = await measureRtt({
                host: '127.0.0.1',
                port: probe.port(`${a}>${b}`),
                samples,
                intervalMs: 5,
              });
              out.get(a)?.set(b, r.meanMs);
            }),
        ),
      );
    } finally {
      await probe.close();
      await echo.close();
    }
    return out;
  }

  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    await Promise.allSettled([this.cluster?.stop(), this.relay?.close()]);
  }
}
