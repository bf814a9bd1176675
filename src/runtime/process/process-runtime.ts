// src/runtime/process/: the process runtime: members as child processes of the harness on loopback,
// their events, kills and restarts, and the cluster of `pole-bench node` processes tests and benches use.
//
// The embedded default runtime: every member a child process of the harness on loopback (a
// `pole-bench node`, a ZooKeeper JVM: the target says which), and wide-area links emulated by the
// userspace delay relay in one worker thread of the harness.
import { AgentProcess } from '../../load/agent-process.js';
import { shareWallOffset } from '../../util/wall-clock.js';
import type { IntervalMessage } from '../../load/agent-protocol.js';
import type { NodeId } from '../../vocabulary/names.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import type { CpuGroups, CpuProcess } from '../../measure/cpu-sampler.js';
import type { Topology } from '../../topology/topology.js';
import { createShaper } from '../../shaping/create-shaper.js';
import type { Shaper } from '../../shaping/shaper.js';
import type { Target } from '../../targets/target.js';
import type { ProcessMembers } from './member-processes.js';
import { startPlannedProcesses } from './planned-processes.js';
import { poleTarget } from '../../targets/pole/pole-target.js';
import type { Runtime } from '../runtime.js';
import type { Address, ShapingChoice } from '../../vocabulary/names.js';

export interface ProcessRuntimeOptions {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  /** fsync the members' logs (default true). */
  readonly fsync?: boolean;
  /** Oracle spec overriding the topology's. */
  readonly oracle?: string;
  /** The value of the target's own run option (Target.option). */
  readonly targetOption?: string;
  /** The system under test (default: the POLE node). */
  readonly target?: Target;
}

export class ProcessRuntime implements Runtime {
  readonly name = 'process' as const;
  readonly target: Target;
  readonly shaping: Shaper;
  private members: ProcessMembers | undefined;
  private tornDown = false;
  private readonly agents: { dc: string; agent: AgentProcess }[] = [];

  constructor(
    private readonly topology: Topology,
    private readonly opts: ProcessRuntimeOptions,
  ) {
    if (opts.shaping.kind === 'netem')
      throw new Error('the process runtime cannot apply netem: its members share the host network stack');
    this.target = opts.target ?? poleTarget;
    this.shaping = createShaper(opts.shaping, topology, { seed: opts.seed });
    // Members and agents inherit the harness's environment: one wall-clock axis for all of them.
    shareWallOffset();
  }

  async start(): Promise<void> {
    const t = this.topology;
    this.members = await startPlannedProcesses(this.target, {
      topology: t,
      seed: this.opts.seed,
      fsync: this.opts.fsync ?? true,
      ...(this.opts.oracle !== undefined ? { oracle: this.opts.oracle } : {}),
      ...(this.opts.targetOption !== undefined ? { targetOption: this.opts.targetOption } : {}),
      shape: (members, plan) => this.shaping.install({ members, plan }),
    });
  }

  private get c(): ProcessMembers {
    if (!this.members) throw new Error('the runtime has not started');
    return this.members;
  }

  get events(): readonly ClusterEvent[] {
    return this.members?.events ?? [];
  }

  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.c.waitFor(pred, timeoutMs, since);
  }

  kill(id: NodeId): Promise<number> {
    return this.c.kill(id);
  }

  restart(id: NodeId): Promise<void> {
    return this.c.restart(id);
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

  httpAddress(id: NodeId): Address | undefined {
    return this.c.httpAddress(id);
  }

  /** A `pole-bench agent` child process on this machine, over the Node IPC channel. */
  async spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess> {
    const agent = await AgentProcess.spawn({ onInterval });
    this.agents.push({ dc, agent });
    return agent;
  }

  cpuGroups(): CpuGroups {
    const known = (xs: Array<{ pid: number | undefined; label: string }>): CpuProcess[] =>
      xs.flatMap((x) => (x.pid === undefined ? [] : [{ pid: x.pid, label: x.label }]));
    return {
      // pid() is undefined while a member is down.
      nodes: () => known(this.topology.nodes.map((n) => ({ pid: this.members?.pid(n.id), label: n.id }))),
      agents: () => known(this.agents.map((a) => ({ pid: a.agent.pid, label: a.dc }))),
    };
  }

  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    await Promise.allSettled([this.members?.stop(), this.shaping.close()]);
  }
}
