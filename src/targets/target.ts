// src/targets/: what runs, the system under test: the Target interface (this file), pole/ and zookeeper/,
// the targets by name (registry.ts), and the load's client for each protocol (clients.ts).
//
// The system under test, apart from where it runs (runtime/) and how delay gets between its data
// centers (shaping/). A target knows how to configure and start its members, how their signals
// become the shared events (started, elected, serving, leader-lost, …), how a client writes to it,
// and how the final read checks the acknowledged writes. The scenario (run/run-scenario.ts) only
// talks to this interface and the runtime's, never to a target's own modules.
import type { NodeId } from '../vocabulary/names.js';
import type { AckedWrite, CheckResult, ContainerImage, TargetName } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import type { ClientProtocol, ConnectWriteClient, Endpoint } from '../load/write-client.js';
import type { RelayedNode } from '../shaping/relay/relay-shaping.js';
import type { Dial, ShapePlan } from '../shaping/shaper.js';
import type { Topology } from '../topology/topology.js';

/** What the scenario and the nemesis do with running members, wherever they run. */
export interface MemberControl {
  /** Every member event so far, in arrival order. */
  readonly events: readonly ClusterEvent[];
  /** The first event from index `since` on matching `pred`, waiting up to `timeoutMs`. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since?: number): Promise<ClusterEvent>;
  /** SIGKILL, the way a machine dies; resolves with the wall-clock ms of the kill once it is gone. */
  kill(id: NodeId): Promise<number>;
  restart(id: NodeId): Promise<void>;
  pause(id: NodeId): void;
  resume(id: NodeId): void;
  isRunning(id: NodeId): boolean;
  /** Where clients of `id` connect. */
  clientAddress(id: NodeId): Endpoint;
  /** Where the member's HTTP status page is, if it has one. */
  httpAddress(id: NodeId): Endpoint | undefined;
}

/** A target's members running as processes of this machine, as the process runtime holds them. */
export interface ProcessMembers extends MemberControl {
  pid(id: NodeId): number | undefined;
  stop(): Promise<void>;
}

export interface ProcessStartOptions {
  readonly topology: Topology;
  readonly seed: number;
  readonly fsync: boolean;
  /** The oracle spec overriding the topology's (targets with oracles only). */
  readonly oracle?: string;
  /**
   * etcd only: after every election, hand leadership to this member, or (`oracle`) to the one the
   * topology's oracle would elect among the living (--etcd-prefer).
   */
  readonly prefer?: string;
  /**
   * Installs the run's shaping once the members' ports are known; the target says which ports its
   * members dial each other on and how, and dials peers where the result says.
   */
  readonly shape: (members: readonly RelayedNode[], plan: ShapePlan) => Promise<Dial>;
}

/** What a target is given to plan its members as containers of the docker runtime. */
export interface ContainerStartOptions {
  readonly topology: Topology;
  readonly seed: number;
  readonly fsync: boolean;
  /** The oracle spec overriding the topology's (targets with oracles only). */
  readonly oracle?: string;
  /** etcd only: --etcd-prefer (ProcessStartOptions.prefer). */
  readonly prefer?: string;
  /** Each member's address on the run's network (its holder's: it keeps it across restarts). */
  readonly addresses: ReadonlyMap<NodeId, string>;
  /** A directory of the host the target writes its members' files to; /config (read-only) inside. */
  readonly configDir: string;
  /** Installs the run's shaping once the members' ports are known (as for processes). */
  readonly shape: (members: readonly RelayedNode[], plan: ShapePlan) => Promise<Dial>;
  /**
   * How a relay route to a peer in another data center listens when the target keeps its own
   * port numbers (ZooKeeper's election dials back the address a peer announces):
   * - `per-pair`: on an address of the harness, reachable from the members, of its ordered pair
   *   alone (docker: addresses on the run's bridge); `host` throws for pairs it has none for.
   * - `by-source`: on the relay's one address, the relay telling the sources apart by their
   *   addresses (swarm: the relay is a task with one address; RelayRoute.acceptFrom). The members
   *   then need port numbers of their own, and reach every peer by its name on the run's
   *   network, which their containers resolve to the relay's address for peers in other data
   *   centers (ContainerMember.etcHosts) and by the network's DNS inside their own.
   */
  readonly peerRoutes:
    | { readonly kind: 'per-pair'; readonly host: (from: NodeId, to: NodeId) => string }
    | { readonly kind: 'by-source' };
}

/** One member container: its command, and how its output lines become events. */
export interface ContainerMember {
  readonly id: NodeId;
  readonly cmd: readonly string[];
  /** Variables set in the member's container ("NAME=value"). */
  readonly env?: readonly string[];
  readonly translate: (line: string) => readonly ClusterEvent[];
  /** Lines for the container's /etc/hosts ("address name"), where the runtime sets them (swarm). */
  readonly etcHosts?: readonly string[];
}

/** What a container plan's afterStart is given: the started members, and the run's event book. */
export interface StartedMembers {
  readonly events: readonly ClusterEvent[];
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since?: number): Promise<ClusterEvent>;
  isRunning(id: NodeId): boolean;
  /** Books an event of the harness's own (etcd: a leadership transfer asked). */
  record(e: ClusterEvent): void;
  clientAddress(id: NodeId): Endpoint;
}

/** How the docker runtime runs a target's members: one container each, in its holder's namespace. */
export interface ContainerPlan {
  /** Which image the member containers run. */
  readonly image: ContainerImage;
  readonly members: readonly ContainerMember[];
  /** The member's client and HTTP status ports inside its namespace. */
  readonly clientPort: number;
  readonly httpPort?: number;
  /** Members started first; the rest start once `then.after` names a serving member. */
  readonly startOrder: {
    readonly first: readonly NodeId[];
    readonly then: readonly NodeId[];
    readonly after?: NodeId;
  };
  /** How long a member may take to announce `started`. */
  readonly startTimeoutMs: number;
  /**
   * Done once every member has started, before the load (etcd: leadership handed to the
   * topology's initial leader, and the hand-overs of --etcd-prefer set up).
   */
  readonly afterStart?: (members: StartedMembers) => Promise<void>;
}

export interface Target {
  readonly name: TargetName;
  /** Whether the target elects by POLE's oracles (--oracle applies). */
  readonly hasOracles: boolean;
  /** The rule it elects by where it has no oracles, as result.json names it (leaders.oracle). */
  readonly electionRule: string;
  /**
   * Whether its members stamp the traced writes (the latency anatomy): the node floor is then each
   * window's traced writes less their network part; else it is calibrated after the load.
   */
  readonly tracesWrites: boolean;
  /**
   * How long the harness writes to the leader before the load, unmeasured: long enough for the
   * members' code to be compiled and their buffers grown (a JVM's JIT needs longer than Node's).
   */
  readonly warmUpMs: number;
  /** What the load agents speak to it. */
  readonly protocol: ClientProtocol;
  /** Opens a write connection to one member. */
  readonly connect: ConnectWriteClient;
  /** Done once per directory of logical paths before the first write to it (ZooKeeper's slots). */
  prepareWrites(ep: Endpoint, dir: string): Promise<void>;
  /** Starts every member as a local process; resolves once all have started. */
  startProcesses(o: ProcessStartOptions): Promise<ProcessMembers>;
  /**
   * Why its members cannot run as local processes for this user on this machine (what is missing
   * and what works instead), or undefined when they can: asked before a run starts anything, so
   * that it is refused as bad input (exit 2) rather than failing at bring-up. Absent: always can.
   */
  readonly cannotRunAsProcesses?: () => Promise<string | undefined>;
  /** Plans its members as containers (docker runtime); absent where the target has no image. */
  readonly planContainers?: (o: ContainerStartOptions) => Promise<ContainerPlan>;
  /**
   * What planContainers' members run and publish, known before the plan (which waits for the
   * shaping): the swarm runtime makes its members' services while its relay starts, and gives
   * each its command and files when it opens its gate. The plan must say the same.
   */
  readonly containers?: {
    readonly image: ContainerImage;
    readonly clientPort: number;
    readonly httpPort?: number;
  };
  /** The final read: every acknowledged write on every live member. */
  checkAckedWrites(o: {
    readonly leader: Endpoint;
    readonly nodes: ReadonlyArray<{ readonly id: string; readonly address: Endpoint }>;
    readonly acked: readonly AckedWrite[];
    readonly runId: string;
  }): Promise<CheckResult>;
}
