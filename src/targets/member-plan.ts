// What a target says about its members, once, wherever they run: the member plan. A runtime
// (process, docker, swarm) tells the target where its members are (a Placement: their ports and
// addresses, where their files and data are, how the shaping routes between data centers) and
// runs the plan it gets back; a target has no code per runtime, and a runtime none per target.
import type { NodeId } from '../vocabulary/names.js';
import type { OwnImageRecipe } from '../image/target-images.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import type { Endpoint } from '../load/write-client.js';
import type { RelayedNode } from '../shaping/shaper.js';
import type { DialDirection } from '../shaping/shaper.js';
import type { Dial } from '../shaping/shaper.js';
import type { Topology } from '../topology/topology.js';

/** The program that is this CLI (`pole-bench …`): the node image's entrypoint, or this process's own. */
export const THIS_CLI = 'pole-bench';

/**
 * What a target's members are before any of them is planned: the swarm makes its services (image,
 * published ports) while the relay starts, and every runtime gives out ports from this table.
 */
export interface MemberKind {
  /**
   * The image a member container runs: the node image (a member that is this CLI), or the
   * target's own, built by `image build` from this recipe and named by the target.
   */
  readonly image: 'node' | OwnImageRecipe;
  /**
   * The member's ports by name, at their customary numbers (a container's own namespace): `client`
   * where clients connect, `http` its status page, if any; the rest its peers dial.
   */
  readonly ports: { readonly client: number; readonly http?: number } & Readonly<Record<string, number>>;
  /**
   * The names among `ports` that peers reach on their own numbers (MemberShapePlan.keepPorts):
   * where the relay has one address for all (by-source routes), each member needs numbers of its
   * own for these.
   */
  readonly keptPorts: readonly string[];
  /**
   * How the member stops at the end of a run: `stdin` when the harness closes its stdin (a member
   * whose harness died, however it died, then goes too), `SIGTERM` otherwise.
   */
  readonly stop: 'stdin' | 'SIGTERM';
  /** A member that has not said `started` in this long has failed to start. */
  readonly startTimeoutMs: number;
  /** What must be installed to run the members on this machine, or undefined when it is (processes). */
  readonly missingHere?: () => Promise<string | undefined>;
  /** Whether a member on this machine needs an /etc/hosts of its own (PlannedMember.etcHosts). */
  readonly ownEtcHosts: boolean;
  /**
   * Whether its output is kept in a file of the run beside the events read from it (a JVM's or
   * etcd's log, to look at after a failure; the POLE node's lines are its events, nothing more).
   */
  readonly keepsLog: boolean;
}

/** How a target wants its members' links shaped (the runtime adds where routes listen). */
export interface MemberShapePlan {
  readonly direction: DialDirection;
  /**
   * Whether a peer is reached on its own port numbers (members all given the same peer addresses
   * by name: ZooKeeper's server lines, etcd's initial cluster), each member resolving the names
   * its own way (PlannedMember.etcHosts, or a file of its own). Else the relay picks the ports.
   */
  readonly keepPorts: boolean;
  /** Hold a connecting member while its target refuses, up to this long (relay only). */
  readonly retryConnectMs?: number;
}

/** The run's settings a placement carries whatever the runtime: what the members are planned with. */
export interface RunSettings {
  readonly seed: number;
  /** Default: true. */
  readonly fsync?: boolean;
  readonly oracle?: string;
  readonly targetOption?: string;
}

/** The part of every placement that comes from the run, not from where the members are. */
export function runPlacement(
  t: Topology,
  o: RunSettings,
): Pick<Placement, 'topology' | 'seed' | 'fsync' | 'oracle' | 'targetOption'> {
  return {
    topology: t,
    seed: o.seed,
    fsync: o.fsync ?? true,
    ...(o.oracle !== undefined ? { oracle: o.oracle } : {}),
    ...(o.targetOption !== undefined ? { targetOption: o.targetOption } : {}),
  };
}

/** Where a runtime puts a target's members: what the target plans them from. */
export interface Placement {
  readonly topology: Topology;
  readonly seed: number;
  readonly fsync: boolean;
  /** The oracle spec overriding the topology's (targets with oracles only). */
  readonly oracle?: string;
  /** The value of the target's own run option (Target.option), where the run was given it. */
  readonly targetOption?: string;
  /**
   * Whether the members run on this machine's file system and programs (processes), or in the
   * target's image: where a program and its libraries are differs.
   */
  readonly onThisMachine: boolean;
  /** Each member's port numbers, by the names of MemberKind.ports. */
  portsOf(id: NodeId): Readonly<Record<string, number>>;
  /** The address a member's listeners bind. */
  readonly bindHost: string;
  /** Where a member is reached from its own data center: its address, or its name on the run's network. */
  hostOf(id: NodeId): string;
  /**
   * How the relay reaches a peer in another data center on its own port numbers: `per-pair`, at
   * an address of that ordered pair alone; `by-source`, at the relay's one address, which tells
   * the sources apart (the members then need port numbers of their own: the swarm).
   */
  readonly routes: 'per-pair' | 'by-source';
  /** Installs the run's shaping between the members; resolves with where each dials each. */
  shape(members: readonly RelayedNode[], plan: MemberShapePlan): Promise<Dial>;
  /** The path at which a member reads the plan's file `name` (MemberPlan.files). */
  configPath(name: string): string;
  /** The member's data directory, as it sees it: kept across its restarts. */
  dataDir(id: NodeId): string;
}

export interface PlannedFile {
  readonly name: string;
  readonly text: string;
}

/** One member: what it runs, with what, and how its output lines become events. */
export interface PlannedMember {
  readonly id: NodeId;
  /** THIS_CLI, or a program of the target's image or of this machine (Placement.onThisMachine). */
  readonly program: string;
  readonly args: readonly string[];
  /** Variables set for it, over the runtime's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** Lines its /etc/hosts holds ("address name"); only where MemberKind.ownEtcHosts. */
  readonly etcHosts?: readonly string[];
  /** Files put in its data directory before it starts, unless already there (ZooKeeper's myid). */
  readonly dataFiles?: readonly PlannedFile[];
  /** Turns one line of its stdout into events; keeps its own state across lines and restarts. */
  readonly translate: (line: string) => readonly ClusterEvent[];
}

/** What a plan's afterStart is given: the started members, and the run's event book. */
export interface StartedMembers {
  readonly events: readonly ClusterEvent[];
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since?: number): Promise<ClusterEvent>;
  isRunning(id: NodeId): boolean;
  /** Books an event of the harness's own (etcd: a leadership transfer asked). */
  record(e: ClusterEvent): void;
  clientAddress(id: NodeId): Endpoint;
}

export interface MemberPlan {
  readonly members: readonly PlannedMember[];
  /** Files any member may read (Placement.configPath). */
  readonly files: readonly PlannedFile[];
  /** Members started together first; the rest once `after` (when named) serves. */
  readonly startOrder: {
    readonly first: readonly NodeId[];
    readonly then: readonly NodeId[];
    readonly after?: NodeId;
  };
  /**
   * Done once every member has started, before the load (etcd: leadership handed to the
   * topology's initial leader, and the hand-overs of --etcd-prefer set up).
   */
  readonly afterStart?: (members: StartedMembers) => Promise<void>;
}

/** Every member started at once: targets whose election does not depend on the order. */
export function allAtOnce(t: Topology): MemberPlan['startOrder'] {
  return { first: t.nodes.map((n) => n.id), then: [] };
}
