// src/targets/: what runs, the system under test: the Target interface (this file), pole/ and zookeeper/,
// the targets by name (registry.ts), and the load's client for each protocol (clients.ts).
//
// The system under test, apart from where it runs (runtime/) and how delay gets between its data
// centers (shaping/). A target knows how to configure and start its members, how their signals
// become the shared events (started, elected, serving, leader-lost, …), how a client writes to it,
// and how the final read checks the acknowledged writes. The scenario (run/run-scenario.ts) only
// talks to this interface and the runtime's, never to a target's own modules.
import type { NodeId } from '../vocabulary/names.js';
import type { AckedWrite, CheckResult, TargetName } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';
import type { ClientProtocol, ConnectWriteClient, Endpoint } from '../load/write-client.js';
import type { MemberKind, MemberPlan, Placement } from './member-plan.js';
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

/**
 * A run option of the target's own (etcd's --etcd-prefer): the flag `run` takes for it and the
 * key a suite's runs give it under, declared here so that no command names the target.
 */
export interface TargetOption {
  /** The flag's name, without its dashes. */
  readonly flag: string;
  /** The key in a suite's `runs` (suites.md). */
  readonly suiteKey: string;
  readonly description: string;
  /** How the report says a hand-over it caused (result.leaders.transferredTo). */
  readonly handOver: string;
  /** Why `value` does not suit topology `t`, or undefined when it does. */
  check(t: Topology, value: string): string | undefined;
}

export interface ReadMode {
  readonly describe: string;
  readonly promises: 'linearizable' | 'session';
}

export interface Target {
  readonly name: TargetName;
  /** What it is, for the report's set-up (markdown). */
  readonly title: string;
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
  /**
   * The read paths the load's reads may take (WriteClient.read), by name (`default`: what its
   * clients get without asking for more; --read-mode names another), each with what the target
   * promises of it: `linearizable` (a read sees every write acknowledged before it began), or
   * `session` (a client's reads never go back in time on its own connection, but may lag the
   * leader).
   */
  readonly readModes: { readonly default: ReadMode } & Readonly<Record<string, ReadMode>>;
  /** What the load agents speak to it. */
  readonly protocol: ClientProtocol;
  /** Opens a write connection to one member. */
  readonly connect: ConnectWriteClient;
  /** Done once per directory of logical paths before the first write to it (ZooKeeper's slots). */
  prepareWrites(ep: Endpoint, dir: string): Promise<void>;
  /** Its own run option, if it has one. */
  readonly option?: TargetOption;
  /** What its members are, before any is planned. */
  readonly members: MemberKind;
  /** Its members where the runtime places them (member-plan.ts). */
  planMembers(p: Placement): Promise<MemberPlan>;
  /** The final read: every acknowledged write on every live member. */
  checkAckedWrites(o: {
    readonly leader: Endpoint;
    readonly nodes: ReadonlyArray<{ readonly id: string; readonly address: Endpoint }>;
    readonly acked: readonly AckedWrite[];
    readonly runId: string;
  }): Promise<CheckResult>;
}
