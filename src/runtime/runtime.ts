// src/runtime/: where a run's members live: the Runtime interface (this file), process/, docker/, swarm/,
// the choice of runtime and shaping (choose-runtime.ts), and the event book both runtimes keep.
//
// What a run needs from the place its members live: local processes, or containers. A runtime
// starts the target's members with the run's shaping between them, reports their events as they
// happen, carries out faults, starts the load agents, and removes everything it made. It does not
// know what the members are (targets/) nor how the delays are made (shaping/).
import type { AgentProcess } from '../load/agent-process.js';
import type { IntervalMessage } from '../load/agent-protocol.js';
import type { ClockReport } from '../measure/clock-offset.js';
import type { CpuGroups, RemoteCpuSource } from '../measure/cpu-sampler.js';
import type { Shaper } from '../shaping/shaper.js';
import type { MemberControl, Target } from '../targets/target.js';
import type { NodeId } from '../vocabulary/names.js';
import type { Address } from '../vocabulary/names.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';

export interface Runtime extends MemberControl {
  readonly name: RuntimeName;
  /** The system under test this runtime runs. */
  readonly target: Target;
  /** How delay gets between the data centers (installed by start(), closed by teardown()). */
  readonly shaping: Shaper;
  /** Start every member; resolves once all have started. */
  start(): Promise<void>;
  /** Starts the load agent of data center `dc`, where this runtime runs agents; resolves once it is ready. */
  spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess>;
  /**
   * Where the load agents reach member `id`, where that differs from the harness's clientAddress
   * (the swarm's agents dial members by name on the run's overlay).
   */
  agentAddress?(id: NodeId): Address;
  /**
   * The processes to sample for the self-check, by group (nodes, agents), as host pids; empty
   * where they are not host processes this harness can read.
   */
  cpuGroups(): CpuGroups;
  /**
   * The run's containers this harness cannot read by pid (a swarm's, on its nodes), read at the
   * load's start and end for the self-check; absent where cpuGroups covers everything.
   */
  remoteCpu?(): RemoteCpuSource;
  /**
   * Where members or agents run on other hosts: their clocks measured again (near the load's end) beside
   * the estimates their stamps were moved onto the harness's clocks by; null when none was.
   */
  clockReport?(): Promise<ClockReport | null>;
  /**
   * What went wrong beneath the members that no fault of the scenario did (a host of the swarm
   * gone mid-run), with when (harness wall ms): each fails the run.
   */
  troubles?(): readonly RuntimeTrouble[];
  /** The id what it makes is labelled with, where it labels (container runtimes): leftovers are found by it. */
  readonly runId?: string;
  /** Its bring-up, step by step (ms from start()'s call), where it keeps them: where the seconds go. */
  readonly startSteps?: ReadonlyArray<{ readonly step: string; readonly ms: number }>;
  /** Stop everything this runtime started and remove its files; safe to call twice. */
  teardown(): Promise<void>;
}

export interface RuntimeTrouble {
  /** Harness wall ms. */
  readonly at: number;
  readonly message: string;
}
