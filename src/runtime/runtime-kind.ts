// What a runtime is to the rest of the house, apart from the runs it makes (runtime.ts): how it
// takes a run when asked for, what this machine lacks for it, how it shapes delay, its own run
// option, and what its runs can leave behind. Each runtime's folder exports one (process/,
// docker/, swarm/), and registry.ts lists them: `run`, `doctor`, `clean` and the benches ask
// these, so that none of them names a runtime.
//
// A kind module is loaded by every command that lists the runtimes: it imports nothing heavy at
// its top (dockerode alone is a third of a command's start-up); its work loads its modules.
import type { Topology } from '../topology/topology.js';
import type { Target } from '../targets/target.js';
import type { ContainerImage, ShapingChoice } from '../vocabulary/names.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';
import type { Runtime } from './runtime.js';

/** What a run asks of a runtime before anything starts. */
export interface RuntimeAsk {
  readonly version: string;
  readonly target: Target;
  /** The topology's data centers, by name. */
  readonly datacenters: readonly string[];
  /** The value of the runtime's own option (RuntimeKind.option), if given. */
  readonly option?: string;
}

/** The runtime a run gets, and why (the report says so). */
export interface RuntimeChoice {
  readonly runtime: RuntimeName;
  readonly reason: string;
  /** The node image (container runtimes). */
  readonly image?: string;
  /** The target's own images (container runtimes), by kind. */
  readonly images?: Partial<Record<ContainerImage, string>>;
}

/** What every runtime is made from; each takes what applies to it. */
export interface RuntimeRequest {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  readonly target: Target;
  /** The node image (container runtimes). */
  readonly image?: string;
  /** The target's own images (container runtimes). */
  readonly images?: Partial<Record<ContainerImage, string>>;
  /** The value of the target's own run option (Target.option). */
  readonly targetOption?: string;
  /** The value of the runtime's own run option (RuntimeKind.option). */
  readonly runtimeOption?: string;
}

/** A run option of the runtime's own (the swarm's --place), declared by it so that `run` names none. */
export interface RuntimeOption {
  /** The flag's name, without its dashes. */
  readonly flag: string;
  readonly description: string;
}

/** How a runtime gets delay between data centers. */
export interface RuntimeShaping {
  /**
   * Where netem is applied when asked for: 'here' (this machine's kernel, probed before the run),
   * a sentence saying where else (each member's host, tried as its members start), or null when
   * this runtime cannot apply it (its members share one network stack).
   */
  readonly netem: 'here' | string | null;
  /**
   * --shaping auto between data centers: netem where this kernel has it, else the relay
   * ('netem-here'), or the relay always, with why.
   */
  readonly auto: 'netem-here' | { readonly relay: string };
}

export interface RuntimeKind {
  readonly name: RuntimeName;
  /** One line for `--runtime`'s help. */
  readonly summary: string;
  readonly shaping: RuntimeShaping;
  readonly option?: RuntimeOption;
  /**
   * Asked for by name: the choice, or an InputError (exit 2) naming what is missing here. The same
   * probes as cannotRun, with the topology's shape.
   */
  choose(ask: RuntimeAsk): Promise<RuntimeChoice>;
  /** Why target cannot run on it here (doctor), in the words a run would refuse it with; undefined when it can. */
  cannotRun(target: Target, version: string): Promise<string | undefined>;
  /** The runtime for topology t (nothing starts until its start()). */
  make(t: Topology, r: RuntimeRequest): Promise<Runtime>;
  /**
   * Removes what its runs left (`pole-bench clean`): all of it, or only what no live harness owns;
   * one line per thing removed. Absent where a run leaves nothing a tear-down can miss.
   */
  reap?(o: { readonly orphansOnly: boolean }): Promise<readonly string[]>;
  /**
   * Reaped before the others: what its runs leave holds theirs (a swarm service's tasks are
   * containers, which another runtime's reaping would remove and the swarm start again).
   */
  readonly reapFirst?: boolean;
  /** What run `runId` left after its tear-down, counted (bench docker); absent as for reap. */
  leftovers?(runId: string): Promise<number>;
}
