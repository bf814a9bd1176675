// src/topology/: topology files: the schema and cross-field checks (line/column errors), the resolved
// topology (this file), durations and sizes, the request-latency model, and their text for people.
//
// A topology resolved for use: the checked file (topology-schema.ts) plus what everything
// downstream asks of it: which data center a node is in, the one-way delay and RTT between data
// centers and between nodes, jitter per direction, and the write rate per data center and per node.
import type { TargetName } from '../vocabulary/names.js';
import { basename, extname } from 'node:path';
import type { Member } from '../node/core/types.js';
import type { NodeId } from '../vocabulary/names.js';
import { parseSource, parseSourceFile, validateParsed } from '../util/load-validated.js';
import { topologySchema } from './topology-checks.js';
import {
  type Arrival,
  type ClusterSpec,
  type Distribution,
  type Jitter,
  type ScenarioSpec,
  type TopologyFile,
} from './topology-schema.js';

export interface TopologyNode {
  readonly id: NodeId;
  readonly sid: number;
  readonly datacenter: string;
}

export interface Datacenter {
  readonly name: string;
  /** In the order the file lists them. */
  readonly nodes: readonly TopologyNode[];
}

/** Keys per data center where a run has reads and its topology names none. */
export const READ_KEYS = 1000;

export interface Workload {
  /** Writes per second, all data centers together. */
  readonly rate: number;
  readonly size: number;
  readonly arrival: Arrival;
  /** Distinct keys each data center writes over and over; undefined: a new key per write. */
  readonly keys?: number;
  /**
   * The share of operations that are reads of other data centers' keys (0: writes only); with
   * reads the rate counts reads and writes together.
   */
  readonly reads: number;
  /** The target's read path the reads take (Target.readModes: checked against the target's when a run is planned). */
  readonly readMode: string;
  /** Each data center's fraction of the writes (sums to 1). */
  readonly share: ReadonlyMap<string, number>;
  /** Writes per second sent from each data center: rate × its share. */
  readonly ratePerDc: ReadonlyMap<string, number>;
  /** Writes per second each node receives: its data center's rate spread evenly over its nodes. */
  readonly ratePerNode: ReadonlyMap<NodeId, number>;
}

export interface Topology {
  /** The file it came from (as given). */
  readonly file: string;
  readonly name: string;
  /** The system under test the file asks for (--target overrides it). */
  readonly target: TargetName;
  readonly datacenters: readonly Datacenter[];
  /** Every node, in sid order (the configuration order the oracles use). */
  readonly nodes: readonly TopologyNode[];
  readonly shaping: { readonly jitter: Jitter; readonly distribution: Distribution };
  readonly cluster: ClusterSpec;
  readonly workload: Workload;
  readonly scenario: ScenarioSpec;
  /** The node, or an Error for an unknown id. */
  node(id: NodeId): TopologyNode;
  /** Cluster members (id, sid) in sid order. */
  members(): Member[];
  /** Added one-way delay from one data center to another; 0 inside a data center. */
  oneWayDelayMs(fromDc: string, toDc: string): number;
  /** Round trip between two data centers: the delay there plus the delay back. */
  rttMs(dcA: string, dcB: string): number;
  /** Jitter of the direction fromDc → toDc in ms (a percentage applies to that direction's delay). */
  jitterMs(fromDc: string, toDc: string): number;
  /** Added one-way delay between two nodes (by their data centers). */
  nodeDelayMs(from: NodeId, to: NodeId): number;
  /** rtt[a][b] for every pair of nodes, 0 on the diagonal and inside a data center. */
  nodeRttMatrix(): Map<NodeId, Map<NodeId, number>>;
}

/** Load and check a topology file. Throws InputError (exit code 2) naming file:line:col and the field. */
export function loadTopology(file: string): Topology {
  return resolveTopology(file, validateParsed(file, parseSourceFile(file), topologySchema));
}

/** Like loadTopology, from text already read (`file` names it in errors and gives the default name). */
export function parseTopology(file: string, text: string): Topology {
  return resolveTopology(file, validateParsed(file, parseSource(file, text), topologySchema));
}

/** A Topology from a checked file. */
export function resolveTopology(file: string, spec: TopologyFile): Topology {
  return new ResolvedTopology(file, spec);
}

class ResolvedTopology implements Topology {
  readonly name: string;
  readonly target: TargetName;
  readonly datacenters: readonly Datacenter[];
  readonly nodes: readonly TopologyNode[];
  readonly shaping: Topology['shaping'];
  readonly cluster: ClusterSpec;
  readonly workload: Workload;
  readonly scenario: ScenarioSpec;
  private readonly byId = new Map<NodeId, TopologyNode>();
  private readonly delays = new Map<string, number>();

  constructor(
    readonly file: string,
    spec: TopologyFile,
  ) {
    this.name = spec.name ?? basename(file, extname(file));
    this.target = spec.target;
    this.datacenters = spec.datacenters.map((dc) => ({
      name: dc.name,
      nodes: dc.nodes.map((n) => ({ id: n.id, sid: n.sid, datacenter: dc.name })),
    }));
    this.nodes = this.datacenters.flatMap((dc) => dc.nodes).sort((a, b) => a.sid - b.sid);
    for (const n of this.nodes) this.byId.set(n.id, n);
    for (const d of spec.delays) this.delays.set(pairKey(d.from, d.to), d.delayMs);
    this.shaping = spec.shaping;
    this.cluster = spec.cluster;
    this.scenario = spec.scenario;
    this.workload = resolveWorkload(spec, this.datacenters);
  }

  node(id: NodeId): TopologyNode {
    const n = this.byId.get(id);
    if (n === undefined) throw new Error(`topology ${this.name} has no node ${JSON.stringify(id)}`);
    return n;
  }

  members(): Member[] {
    return this.nodes.map((n) => ({ id: n.id, sid: n.sid }));
  }

  oneWayDelayMs(fromDc: string, toDc: string): number {
    this.checkDc(fromDc);
    this.checkDc(toDc);
    if (fromDc === toDc) return 0;
    const d = this.delays.get(pairKey(fromDc, toDc));
    // The schema guarantees every ordered pair; a miss here is a bug, not bad input.
    if (d === undefined) throw new Error(`topology ${this.name}: no delay ${fromDc} → ${toDc}`);
    return d;
  }

  rttMs(dcA: string, dcB: string): number {
    return this.oneWayDelayMs(dcA, dcB) + this.oneWayDelayMs(dcB, dcA);
  }

  jitterMs(fromDc: string, toDc: string): number {
    const delay = this.oneWayDelayMs(fromDc, toDc);
    if (fromDc === toDc) return 0;
    const j = this.shaping.jitter;
    return j.kind === 'fraction' ? delay * j.fraction : j.ms;
  }

  nodeDelayMs(from: NodeId, to: NodeId): number {
    return this.oneWayDelayMs(this.node(from).datacenter, this.node(to).datacenter);
  }

  nodeRttMatrix(): Map<NodeId, Map<NodeId, number>> {
    const m = new Map<NodeId, Map<NodeId, number>>();
    for (const a of this.nodes) {
      const row = new Map<NodeId, number>();
      for (const b of this.nodes) row.set(b.id, this.rttMs(a.datacenter, b.datacenter));
      m.set(a.id, row);
    }
    return m;
  }

  private checkDc(dc: string): void {
    if (!this.datacenters.some((d) => d.name === dc))
      throw new Error(`topology ${this.name} has no data center ${JSON.stringify(dc)}`);
  }
}

function pairKey(from: string, to: string): string {
  return JSON.stringify([from, to]);
}

function resolveWorkload(spec: TopologyFile, datacenters: readonly Datacenter[]): Workload {
  const w = spec.workload;
  const total = datacenters.reduce((sum, dc) => sum + (w.share[dc.name] ?? 0), 0);
  const share = new Map<string, number>();
  const ratePerDc = new Map<string, number>();
  const ratePerNode = new Map<NodeId, number>();
  for (const dc of datacenters) {
    const fraction = total > 0 ? (w.share[dc.name] ?? 0) / total : 0;
    share.set(dc.name, fraction);
    ratePerDc.set(dc.name, w.rate * fraction);
    for (const n of dc.nodes) ratePerNode.set(n.id, (w.rate * fraction) / dc.nodes.length);
  }
  return {
    rate: w.rate,
    size: w.size,
    arrival: w.arrival,
    // Reads read keys written over and over: without keys of its own, a run with reads gets 1,000.
    ...(w.keys !== undefined ? { keys: w.keys } : w.reads > 0 ? { keys: READ_KEYS } : {}),
    reads: w.reads,
    readMode: w.readMode,
    share,
    ratePerDc,
    ratePerNode,
  };
}
