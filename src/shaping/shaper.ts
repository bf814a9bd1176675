// src/shaping/: how delay gets between data centers: the Shaper interface (this file), relay/ (the
// userspace delay relay), netem/ (tc plans), no shaping, and making the one a run chose.
//
// How delay gets between data centers, apart from what runs (targets/) and where (runtime/): the
// userspace relay, the netem plan, or nothing. A runtime creates the shaper the run chose, hands it
// the members once their ports and addresses are known, and dials peers where it says; the
// scenario changes, measures and closes it through this interface only.
import type { NodeId } from '../vocabulary/names.js';
import type { Address, PairReadings, ShapingName, ShapingUsage } from '../vocabulary/names.js';
import type { Topology } from '../topology/topology.js';

/** A member as the shaping sees it: the ports its peers dial. */
export interface RelayedNode {
  readonly id: NodeId;
  readonly sid: number;
  /** Where the node's peer port is reachable from the relay. */
  readonly peer: Address;
  /** Further ports members dial each other on, by name (a ZooKeeper server's election port). */
  readonly more?: Readonly<Record<string, Address>>;
}

/**
 * Where a route listens: `host` absent, on the relay's own (dialled at its advertised host);
 * `acceptFrom`, the route takes only that source's connections (RelayRoute.acceptFrom), so that
 * routes of several sources may share the port.
 */
export interface RouteListen {
  readonly host?: string;
  readonly port: number;
  readonly acceptFrom?: string;
}

/** Which members dial which: only the higher sid (a POLE node), or every member every other. */
export type DialDirection = 'higher-sid' | 'both';

/** The topology's delays between data centers, or none at all (a calibration). */
export type WanDelays = 'zero' | 'topology';

/** The links a run keeps, and every reading they came from. */
export interface LinkReadings {
  /** rtts[a][b]: the kept reading's median RTT, ms; every data center to itself 0, NaN where unread. */
  readonly rtts: Map<string, Map<string, number>>;
  /** Every reading of the relay's probe; null where the shaping reads none (netem, none). */
  readonly readings: PairReadings | null;
}

/** How a target wants its members' links shaped: which ports, dialled by whom, listened where. */
export interface ShapePlan {
  readonly direction: DialDirection;
  /** Where the route from `from` to `to`'s `port` listens (relay only; default an ephemeral port). */
  readonly listenAt?: (from: NodeId, to: NodeId, port: string, target: Address) => RouteListen;
  /** Hold a connecting member while its target refuses, up to this long (relay only). */
  readonly retryConnectMs?: number;
}

export interface ShapeRequest {
  /** Every member, with the ports its peers dial ('peer' and any named ones). */
  readonly members: readonly RelayedNode[];
  readonly plan: ShapePlan;
  /** relay only: where the members reach the harness (a bridge's gateway; default 127.0.0.1). */
  readonly listenHost?: string;
  /** netem only: each member's address on the run's network, and a way to run tc in its namespace. */
  readonly addresses?: ReadonlyMap<NodeId, string>;
  readonly exec?: (id: NodeId, argv: string[]) => Promise<string>;
}

/** Where `from` dials `to`'s `port` ('peer' unless named). */
export type Dial = (from: NodeId, to: NodeId, port?: string) => Address;

export interface Shaper {
  readonly kind: ShapingName;
  /** Why this shaping runs (shown in the report). */
  readonly reason: string;
  /** Puts the topology's delays between the members' data centers; resolves with the dial table. */
  install(req: ShapeRequest): Promise<Dial>;
  /**
   * Takes every delay between data centers out (`zero`, for the floor's calibration) or puts the
   * topology's back, open connections included. False where this shaping cannot during a run.
   */
  change(mode: WanDelays): Promise<boolean>;
  /**
   * Cuts (`cut` true: a partition, connections stall) or restores every link between a member of
   * `a` and a member of `b`; with `oneWay`, only what `a`'s members send to `b`'s (b still reaches
   * a). False where this shaping cannot.
   */
  cut(a: readonly NodeId[], b: readonly NodeId[], cut: boolean, oneWay?: boolean): Promise<boolean>;
  /** Sets the round-trip time between two data centers, open connections included; false where it cannot. */
  setRtt(dcA: string, dcB: string, rttMs: number): Promise<boolean>;
  /** Median RTT between every ordered pair of data centers through this shaping; NaN where it cannot. */
  measure(samples: number): Promise<LinkReadings>;
  /** What this shaping's own threads in the harness have done so far; null where it has none. */
  usage(): Promise<ShapingUsage | null>;
  /** Removes whatever it installed; safe to call twice. */
  close(): Promise<void>;
}

/** Straight to the member's own port: no shaping, or shaping that is not in the path (netem). */
export function directDial(members: readonly RelayedNode[]): Dial {
  const byId = new Map(members.map((m) => [m.id, m]));
  return (_from, to, port = 'peer') => {
    const m = byId.get(to);
    const a = m ? (port === 'peer' ? m.peer : m.more?.[port]) : undefined;
    if (!a) throw new Error(`${to} has no port named ${port}`);
    return a;
  };
}

/** The matrix for shaping that was not measured: NaN between data centers. */
export function unmeasuredLinks(t: Topology): LinkReadings {
  const dcs = t.datacenters.map((d) => d.name);
  return {
    rtts: new Map(dcs.map((a) => [a, new Map(dcs.map((b) => [b, a === b ? 0 : NaN]))])),
    readings: null,
  };
}
