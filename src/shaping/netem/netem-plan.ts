// The tc commands that shape one node's egress by destination data center (shaping "netem"):
//
//   root 1: htb, default class 1:1 ── same data center and anything unmatched, at a high rate
//        ├─ class 1:<10+i> ── remote data center i (its index in the topology) ── leaf <10+i>:
//        │    netem delay D J distribution X limit L [rate R]   (or `pfifo limit L`)
//        └─ u32 filters: `match ip dst <peer>/32 flowid 1:<10+i>`, one per node of that data center
//
// Both ends shape their own egress, so the RTT between a and b is δ(a→b) + δ(b→a). A class id is
// the data center's index everywhere, so 1:12 means the same data center on every node; tc reads
// class minors as hex, which is harmless since the same digits come back in `tc -s class show`.
// A plan is applied once, to an interface with its default qdisc (a fresh holder): the kernel's htb
// has no in-place change, so replacing an htb root with another htb fails; delete the root first
// (`tc qdisc del dev eth0 root`) to shape again. Filters carry explicit u32 handles all the same, so
// a caller re-running the filter commands replaces them instead of stacking copies.
import type { NodeId } from '../../vocabulary/names.js';
import type { Topology } from '../../topology/topology.js';

export type NetemLeaf = 'netem' | 'pfifo';

export interface NetemPlanOptions {
  /** The interface to shape inside each node's namespace (default eth0). */
  readonly dev?: string;
  /** Bandwidth of each link to a remote data center, Mbit/s (default 1000). */
  readonly rateMbit?: number;
  /**
   * The leaf of each remote class: `netem` (the real thing) or `pfifo` with the same limit, which
   * keeps the htb tree and its filters testable on a kernel without sch_netem (delays are not applied).
   */
  readonly leaf?: NetemLeaf;
}

/** Per node, the argv of every tc command to run in that node's network namespace, in order. */
export type NetemPlan = Map<NodeId, string[][]>;

export const DEFAULT_DEV = 'eth0';
export const DEFAULT_RATE_MBIT = 1000;
/** The default class carries same-DC traffic: fast enough never to be the bottleneck. */
export const DEFAULT_CLASS_RATE_MBIT = 10_000;
export const DEFAULT_CLASSID = '1:1';
const MTU_BYTES = 1500;
/** netem's own default limit: a queue never gets shorter than this. */
const MIN_LIMIT_PACKETS = 1000;
/** Head-room over the bandwidth-delay product for bursts that arrive faster than the class drains. */
const LIMIT_HEADROOM = 2;
/** A class may send this much time's worth of its rate at once (htb's computed default is ~1 packet). */
const BURST_MS = 1;
// netem's tables cover normal, pareto and paretonormal; "uniform" is what netem does with no table at
// all (tc has no uniform.dist and fails on `distribution uniform`), so it is rendered as no argument.
const TABLE_DISTRIBUTIONS = new Set(['normal', 'pareto', 'paretonormal']);
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** The htb class a node uses for traffic to data center number `dcIndex` (topology order). */
export function remoteClassId(dcIndex: number): string {
  return `1:${10 + dcIndex}`;
}

/** The tc commands for every node of the topology; `addresses` gives each node's IPv4 address. */
export function planNetem(
  topology: Topology,
  addresses: ReadonlyMap<NodeId, string>,
  opts: NetemPlanOptions = {},
): NetemPlan {
  const dev = opts.dev ?? DEFAULT_DEV;
  const rateMbit = opts.rateMbit ?? DEFAULT_RATE_MBIT;
  const leaf = opts.leaf ?? 'netem';
  if (!Number.isFinite(rateMbit) || rateMbit <= 0)
    throw new Error(`netem plan: rateMbit must be a positive number, got ${rateMbit}`);
  if (!/^[\w.-]{1,15}$/.test(dev)) throw new Error(`netem plan: bad interface name ${JSON.stringify(dev)}`);
  for (const n of topology.nodes) {
    const a = addresses.get(n.id);
    if (a === undefined) throw new Error(`netem plan: no address for node ${n.id}`);
    if (!IPV4.test(a)) throw new Error(`netem plan: address of ${n.id} is not IPv4: ${JSON.stringify(a)}`);
  }

  const plan: NetemPlan = new Map();
  for (const self of topology.nodes) {
    const tc = (...args: string[]): string[] => ['tc', ...args];
    const cmds: string[][] = [
      tc('qdisc', 'replace', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '1'),
      classCommand(dev, DEFAULT_CLASSID, DEFAULT_CLASS_RATE_MBIT),
    ];
    const filters: string[][] = [];
    const handles = filterHandles(topology, self.id);
    topology.datacenters.forEach((dc, i) => {
      if (dc.name === self.datacenter) return;
      const classid = remoteClassId(i);
      const delayMs = topology.oneWayDelayMs(self.datacenter, dc.name);
      const jitterMs = topology.jitterMs(self.datacenter, dc.name);
      const limit = String(limitPackets(rateMbit, delayMs + jitterMs));
      cmds.push(classCommand(dev, classid, rateMbit));
      const leafArgs =
        leaf === 'pfifo'
          ? ['pfifo', 'limit', limit]
          : netemArgs(delayMs, jitterMs, topology.shaping.distribution, limit, rateMbit);
      cmds.push(tc('qdisc', 'replace', 'dev', dev, 'parent', classid, 'handle', `${10 + i}:`, ...leafArgs));
      for (const peer of dc.nodes)
        filters.push(filterTo(dev, handles.get(peer.id)!, addresses.get(peer.id) ?? '', classid));
    });
    plan.set(self.id, [...cmds, ...filters]);
  }
  return plan;
}

/**
 * Each peer's u32 filter handle in `self`'s tree (hex node ids within the default hash table
 * 800:, 1..fff): the peers abroad numbered from 1 in topology order, as planNetem gives them; the
 * peers at home, which have a filter only while cut, from 0x801 by their index in the topology.
 */
export function filterHandles(topology: Topology, self: NodeId): Map<NodeId, string> {
  const home = topology.node(self).datacenter;
  const out = new Map<NodeId, string>();
  let abroad = 0;
  for (const dc of topology.datacenters)
    if (dc.name !== home) for (const peer of dc.nodes) out.set(peer.id, `800::${(++abroad).toString(16)}`);
  topology.nodes.forEach((n, i) => {
    if (n.datacenter === home && n.id !== self) out.set(n.id, `800::${(0x801 + i).toString(16)}`);
  });
  return out;
}

/** `tc filter VERB` of the u32 filter `handle` on dev's root: what every filter command starts with. */
function filterHead(verb: 'replace' | 'del', dev: string, handle: string): string[] {
  return [
    'tc',
    'filter',
    verb,
    'dev',
    dev,
    'parent',
    '1:',
    'protocol',
    'ip',
    'prio',
    '1',
    'handle',
    handle,
    'u32',
  ];
}

function filterTo(dev: string, handle: string, address: string, classid: string): string[] {
  return [...filterHead('replace', dev, handle), 'match', 'ip', 'dst', `${address}/32`, 'flowid', classid];
}

/** The class every cut peer's packets go to: its leaf, a pfifo of length 0, drops them all. */
export const CUT_CLASSID = '1:2';

/**
 * The tc commands that cut (or heal) `self`'s egress to `peers`: a cut points each peer's filter
 * at CUT_CLASSID, whose `pfifo limit 0` drops every packet (no netem needed: a partition works on
 * any kernel with htb, this machine's too), so connections stall as on a severed link; a heal
 * points it back at its data center's class (a peer abroad) or removes it (a peer at home, which
 * the default class carries). Only self's egress: the caller cuts both ends.
 */
export function planCut(
  topology: Topology,
  addresses: ReadonlyMap<NodeId, string>,
  self: NodeId,
  peers: readonly NodeId[],
  cut: boolean,
  dev = DEFAULT_DEV,
): string[][] {
  const handles = filterHandles(topology, self);
  const home = topology.node(self).datacenter;
  const cmds: string[][] = cut
    ? [
        classCommand(dev, CUT_CLASSID, DEFAULT_CLASS_RATE_MBIT),
        ['tc', 'qdisc', 'replace', 'dev', dev, 'parent', CUT_CLASSID, 'handle', '2:', 'pfifo', 'limit', '0'],
      ]
    : [];
  for (const peer of peers) {
    if (peer === self) continue;
    const handle = handles.get(peer);
    const address = addresses.get(peer);
    if (handle === undefined || address === undefined || !IPV4.test(address))
      throw new Error(`netem cut: no address for ${peer} in ${self}'s tree`);
    const dc = topology.node(peer).datacenter;
    if (cut) cmds.push(filterTo(dev, handle, address, CUT_CLASSID));
    else if (dc !== home)
      cmds.push(
        filterTo(dev, handle, address, remoteClassId(topology.datacenters.findIndex((d) => d.name === dc))),
      );
    else cmds.push(filterHead('del', dev, handle));
  }
  return cmds;
}

/** The plan as shell lines, node by node (what `--dry-run` prints). */
export function renderPlan(plan: ReadonlyMap<NodeId, readonly (readonly string[])[]>): string {
  const lines: string[] = [];
  for (const [node, cmds] of plan) {
    lines.push(`# ${node}: run in its network namespace`);
    for (const argv of cmds) lines.push(argv.map(shellQuote).join(' '));
  }
  return lines.join('\n') + '\n';
}

function netemArgs(
  delayMs: number,
  jitterMs: number,
  distribution: string,
  limit: string,
  rateMbit: number,
): string[] {
  const args = ['netem', 'delay', ms(delayMs)];
  // A jitter that rounds to 0.000 ms is no jitter: no spread, no table, nothing to reorder.
  const jittered = ms(jitterMs) !== ms(0);
  if (jittered) {
    args.push(ms(jitterMs));
    if (TABLE_DISTRIBUTIONS.has(distribution)) args.push('distribution', distribution);
  }
  args.push('limit', limit);
  // With jitter, every packet draws its own delay and netem's queue releases packets in order of
  // their send times, so a later packet with a shorter draw overtakes: netem reorders whenever
  // jitter is given. With `rate` set, netem instead schedules each packet after the one queued
  // before it, so order is kept (as on a real link, and as TCP between nodes expects).
  if (jittered) args.push('rate', mbit(rateMbit));
  return args;
}

/** Bandwidth-delay product in MTU-sized packets, with head-room and netem's default as a floor. */
function limitPackets(rateMbit: number, delayMs: number): number {
  const bdp = (rateMbit * 1e6 * (delayMs / 1000)) / (MTU_BYTES * 8);
  return Math.max(MIN_LIMIT_PACKETS, Math.ceil(LIMIT_HEADROOM * bdp));
}

/** An htb class under the root at `rateMbit`: the default class, a data center's, the cut class. */
function classCommand(dev: string, classid: string, rateMbit: number): string[] {
  return ['tc', 'class', 'replace', 'dev', dev, 'parent', '1:', 'classid', classid, ...htbRate(rateMbit)];
}

function htbRate(rateMbit: number): string[] {
  const burst = String(Math.max(10 * MTU_BYTES, Math.round((rateMbit * 1e6 * BURST_MS) / 1000 / 8)));
  const r = mbit(rateMbit);
  // quantum only matters when classes borrow from a parent; these are all root classes with
  // ceil = rate, and a fixed one-packet quantum avoids htb's "quantum is big" warning at high rates.
  return ['htb', 'rate', r, 'ceil', r, 'burst', burst, 'cburst', burst, 'quantum', String(MTU_BYTES + 14)];
}

function ms(x: number): string {
  return `${x.toFixed(3)}ms`;
}

function mbit(x: number): string {
  return `${x}mbit`;
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
