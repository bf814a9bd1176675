// What a run needs from the place its members live: local processes, or containers. A runtime
// starts the target's members with the run's shaping between them, reports their events as they
// happen, carries out faults, starts the load agents, and removes everything it made. It does not
// know what the members are (targets/) nor how the delays are made (shaping/).
import type { NodeId } from '../node/core/types.js';
import type { AgentProcess } from '../load/agent-process.js';
import type { IntervalMessage } from '../load/agent-protocol.js';
import type { ClusterEvent } from './process/process-cluster.js';
import type { CpuGroups } from '../measure/cpu-sampler.js';
import type { Shaper } from '../shaping/shaper.js';
import type { Target } from '../targets/target.js';

export type RuntimeName = 'process' | 'docker';
export type ShapingName = 'relay' | 'netem' | 'none';

export interface ShapingChoice {
  readonly kind: ShapingName;
  /** Why this shaping runs (shown in the report). */
  readonly reason: string;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

export interface Runtime {
  readonly name: RuntimeName;
  /** The system under test this runtime runs. */
  readonly target: Target;
  /** How delay gets between the data centers (installed by start(), closed by teardown()). */
  readonly shaping: Shaper;
  /** Start every node; resolves once all have announced `started`. */
  start(): Promise<void>;
  /** Every node event so far, in arrival order (with the harness's wall-clock receive time). */
  readonly events: readonly ClusterEvent[];
  /** The first event from index `since` on matching `pred`, waiting up to `timeoutMs`. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since?: number): Promise<ClusterEvent>;
  /** SIGKILL, the way a machine dies; resolves with the wall-clock ms of the kill once it is gone. */
  kill(id: NodeId): Promise<number>;
  restart(id: NodeId): Promise<void>;
  pause(id: NodeId): void;
  resume(id: NodeId): void;
  isRunning(id: NodeId): boolean;
  /** Where clients of `id` connect (the load agent of its data center). */
  clientAddress(id: NodeId): Address;
  /** The member's HTTP status page, where its target has one. */
  httpAddress(id: NodeId): Address | undefined;
  /** Starts the load agent of data center `dc`, where this runtime runs agents; resolves once it is ready. */
  spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess>;
  /**
   * The processes to sample for the self-check, by group (nodes, agents), as host pids; empty
   * where they are not host processes this harness can read.
   */
  cpuGroups(): CpuGroups;
  /** Stop everything this runtime started and remove its files; safe to call twice. */
  teardown(): Promise<void>;
}
