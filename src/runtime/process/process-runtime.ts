// The embedded default runtime: every node a `pole-bench node` child process on loopback, and
// wide-area links emulated by the userspace delay relay (one route per pair of nodes in different
// data centers, in the direction the higher sid dials), all in one worker thread.
import { AgentProcess } from '../../load/agent-process.js';
import type { IntervalMessage } from '../../load/agent-protocol.js';
import type { NodeId } from '../../node/core/types.js';
import { ProcessCluster, type ClusterEvent } from './process-cluster.js';
import type { CpuGroups, CpuProcess } from '../../measure/cpu-sampler.js';
import type { Topology } from '../../topology/topology.js';
import {
  measureRelayLinks,
  setWanDelaysOf,
  startNodeRelay,
  unmeasuredLinks,
  type NodeRelay,
  type WanDelays,
} from '../../shaping/relay/relay-shaping.js';
import type { Address, Runtime, ShapingChoice } from '../runtime.js';

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
  private nodeRelay: NodeRelay | undefined;
  private tornDown = false;
  private readonly agents: { dc: string; agent: AgentProcess }[] = [];

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
      ...(relayed
        ? {
            dialVia: async (nodes) => {
              const r = await startNodeRelay(
                t,
                nodes.map((n) => ({ id: n.id, sid: n.sid, peer: { host: '127.0.0.1', port: n.peerPort } })),
                { seed: this.opts.seed },
              );
              this.nodeRelay = r;
              return r.dial;
            },
          }
        : {}),
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

  /** A `pole-bench agent` child process on this machine, over the Node IPC channel. */
  async spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess> {
    const agent = await AgentProcess.spawn({ onInterval });
    this.agents.push({ dc, agent });
    return agent;
  }

  shapingCpuMs(): Promise<number | null> {
    return this.nodeRelay?.cpuMs() ?? Promise.resolve(null);
  }

  cpuGroups(): CpuGroups {
    const known = (xs: Array<{ pid: number | undefined; label: string }>): CpuProcess[] =>
      xs.flatMap((x) => (x.pid === undefined ? [] : [{ pid: x.pid, label: x.label }]));
    return {
      // pid() is undefined while a node is down.
      nodes: () => known(this.topology.nodes.map((n) => ({ pid: this.c.pid(n.id), label: n.id }))),
      agents: () => known(this.agents.map((a) => ({ pid: a.agent.pid, label: a.dc }))),
    };
  }

  setWanDelays(mode: WanDelays): Promise<boolean> {
    return setWanDelaysOf(this.opts.shaping, this.nodeRelay, mode);
  }

  /** Through relay routes of the same delays (see relay-shaping.ts); NaN when nothing is shaped. */
  measureLinks(samples: number): Promise<Map<string, Map<string, number>>> {
    if (this.opts.shaping.kind !== 'relay') return Promise.resolve(unmeasuredLinks(this.topology));
    return measureRelayLinks(this.topology, this.opts.seed + 1, samples);
  }

  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    await Promise.allSettled([this.cluster?.stop(), this.nodeRelay?.relay.close()]);
  }
}
