// What the nemesis is handed by the scenario: the runtime, the topology, the load's clock and
// phases, and the scenario's own note, progress and abortable sleep (a module of its own, so that
// the schedule and the election watch can both name it without importing each other).
import type { Runtime } from '../runtime/runtime.js';
import type { Topology } from '../topology/topology.js';

/** The load's recording phases: a fault that takes the leader out starts the clients' gap. */
export interface LoadPhases {
  /** The phase the agents record in now. */
  readonly current: string;
  /** Every agent records in `name` from wall ms `atMs` on. */
  switchTo(name: string, atMs: number): void;
}

export interface ChaosContext {
  readonly rt: Runtime;
  readonly topology: Topology;
  /** The run's seed: what a fault leaves to chance at the moment it strikes is drawn from it. */
  readonly seed: number;
  /** Wall ms of the load's t = 0: the schedule's times count from it. */
  readonly loadStart: number;
  readonly phases: LoadPhases;
  /** Resolves at a wall-clock instant; rejects when the run is aborted. */
  readonly sleepUntil: (wall: number) => Promise<void>;
  /** Adds an event of the harness's own to the run's events. */
  readonly note: (ev: string, fields: Record<string, unknown>) => void;
  readonly progress: (phase: string, extra: { readonly leader: string }) => void;
}
