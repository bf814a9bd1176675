// What a topology predicts before anything runs (pole-algorithm.md, "The request-latency model"):
// with l leading, a write that arrives at server r costs RTT(r, l) for forwarding (0 when r = l)
// plus l's consensus latency θc(l). A data center's clients spread their writes uniformly over its
// servers, so its predicted mean is the plain mean over its (live) servers.
// It also predicts every oracle's choice, by scoring every candidate with the real oracle on the
// configured RTTs and request rates and ordering the proposals with the election's own order, so
// ties are broken exactly as a run would break them (higher sid).
import { compareProposals } from '../node/core/proposal-order.js';
import { roundMicros } from '../node/core/oracles/measured.js';
import { createOracle, oracleOptions } from '../node/core/oracles/registry.js';
import type { ScoreContext } from '../node/core/oracles/oracle.js';
import { consensusScore, measuredScores, viewFromMatrix } from '../node/core/oracles/score-formulas.js';
import type { Score } from '../node/core/types.js';
import type { NodeId } from '../vocabulary/names.js';
import { ZERO_ZXID } from '../vocabulary/zxid.js';
import type { Topology } from './topology.js';

/** Mean predicted write latency per data center, ms. */
export type DcLatency = Record<string, number>;

/** One candidate leader over N': its scores and the latency each data center would see under it. */
export interface CandidateRow {
  readonly id: NodeId;
  readonly sid: number;
  readonly datacenter: string;
  /** θc, θl, θw in ms; null when the candidate cannot reach a quorum in N'. */
  readonly consensusMs: number | null;
  readonly latencyMs: number | null;
  readonly worstCaseMs: number | null;
  /** θr: writes per second this node receives. */
  readonly requestRate: number;
  /** Per data center; empty when the candidate cannot lead. */
  readonly predictedMs: DcLatency;
}

export interface ElectionPrediction {
  readonly oracle: string;
  readonly epoch: number;
  readonly leader: NodeId;
  /** Every candidate's score under the oracle, in sid order. */
  readonly scores: Readonly<Record<NodeId, Score>>;
}

export interface PredictOptions {
  /**
   * The election epoch (only the rotating oracle cares). Default: 1 (the first election) when
   * nobody is excluded, else 2 (the election after the initial leader is lost).
   */
  readonly epoch?: number;
}

/**
 * The predicted mean latency per data center with `leader` leading and only `alive` servers up
 * (default: all), over `matrix` (default: the configured round trips). Data centers without a live server are left out: their clients have nowhere to
 * send writes. Throws when the leader is not alive or cannot reach a quorum of live servers.
 */
export function predictLatency(
  topology: Topology,
  leader: NodeId,
  alive?: readonly NodeId[],
  matrix: ReadonlyMap<NodeId, ReadonlyMap<NodeId, number>> = topology.nodeRttMatrix(),
): DcLatency {
  const live = alive ?? topology.nodes.map((n) => n.id);
  topology.node(leader);
  if (!live.includes(leader)) throw new Error(`the leader ${leader} is not among the live servers`);
  const theta = consensusScore(viewFromMatrix(leader, matrix, live).rttMs, topology.nodes.length);
  if (theta === undefined) throw new Error(`${leader} cannot reach a quorum of the live servers`);
  return latencyUnder(topology, matrix, leader, theta, live);
}

function latencyUnder(
  topology: Topology,
  matrix: ReadonlyMap<NodeId, ReadonlyMap<NodeId, number>>,
  leader: NodeId,
  consensusMs: number,
  live: readonly NodeId[],
): DcLatency {
  const out: DcLatency = {};
  for (const dc of topology.datacenters) {
    const servers = dc.nodes.filter((n) => live.includes(n.id));
    if (servers.length === 0) continue;
    const total = servers.reduce((sum, r) => sum + (matrix.get(r.id)?.get(leader) ?? 0) + consensusMs, 0);
    out[dc.name] = roundMicros(total / servers.length);
  }
  return out;
}

/** N': the nodes minus `excluded`, in sid order. */
function survivors(topology: Topology, excluded: readonly NodeId[]): NodeId[] {
  for (const id of excluded) topology.node(id);
  return topology.nodes.filter((n) => !excluded.includes(n.id)).map((n) => n.id);
}

/** Every candidate in N' (sid order): θc, θl, θw, θr and the latency it would give each data center. */
export function candidateTable(topology: Topology, excluded: readonly NodeId[]): CandidateRow[] {
  const live = survivors(topology, excluded);
  const matrix = topology.nodeRttMatrix();
  const rates = topology.workload.ratePerNode;
  const n = topology.nodes.length;
  return live.map((id) => {
    const node = topology.node(id);
    const s = measuredScores(id, viewFromMatrix(id, matrix, live, rates), n);
    const round = (v: number | undefined): number | null => (v === undefined ? null : roundMicros(v));
    return {
      id,
      sid: node.sid,
      datacenter: node.datacenter,
      consensusMs: round(s.consensus),
      latencyMs: round(s.latency),
      worstCaseMs: round(s.worstCase),
      requestRate: roundMicros(s.request),
      predictedMs: s.consensus === undefined ? {} : latencyUnder(topology, matrix, id, s.consensus, live),
    };
  });
}

/**
 * Which server `oracleSpec` elects among N' = nodes minus `excluded`. Every server is taken to be
 * synchronised (equal last zxids, as after a steady run), its RTTs to be the configured ones and
 * its request rate its data center's rate spread over the data center's servers (what it measured
 * before the failure). Throws the registry's OracleSpecError for a bad spec.
 */
export function predictElected(
  topology: Topology,
  oracleSpec: string,
  excluded: readonly NodeId[],
  opts: PredictOptions = {},
): ElectionPrediction {
  const oracle = createOracle(oracleSpec, oracleOptions(topology.cluster));
  const live = survivors(topology, excluded);
  if (live.length === 0) throw new Error('no server is left to elect');
  const epoch = opts.epoch ?? (excluded.length === 0 ? 1 : 2);
  const members = topology.nodes.map((n) => n.id);
  const excludedSet = new Set(excluded);
  const matrix = topology.nodeRttMatrix();
  const proposals = live.map((id) => {
    const node = topology.node(id);
    const rttMs = matrix.get(id);
    const ctx: ScoreContext = {
      self: id,
      selfSid: node.sid,
      epoch,
      members,
      lastZxid: ZERO_ZXID,
      excluded: excludedSet,
      requestRates: topology.workload.ratePerNode,
      measurementsReady: true,
      ...(rttMs ? { rttMs } : {}),
    };
    return { id, sid: node.sid, score: oracle.score(ctx) };
  });
  const cmp = (_epoch: number, a: Score, b: Score): number => oracle.compare(a, b);
  let best = proposals[0];
  for (const p of proposals) {
    if (best === undefined || compareProposals(cmp, epoch, p, epoch, best) > 0) best = p;
  }
  if (best === undefined) throw new Error('no server is left to elect');
  return {
    oracle: oracle.name,
    epoch,
    leader: best.id,
    scores: Object.fromEntries(proposals.map((p) => [p.id, p.score])),
  };
}

/** The oracles the model command compares, besides the topology's own. */
export const MODEL_ORACLES = [
  'history',
  'rotating',
  'consensus',
  'latency',
  'worst-case',
  'request',
] as const;

export interface ModelSummary {
  readonly topology: string;
  /** The oracle the cluster runs (the topology's, or an override). */
  readonly oracle: string;
  /** The configured initial leader, or the one the oracle elects first. */
  readonly initialLeader: NodeId;
  readonly initialLeaderConfigured: boolean;
  readonly ratePerDc: Record<string, number>;
  /** The initial leader over every server: the "before" window. */
  readonly before: CandidateRow;
  /** Who is lost: the initial leader. */
  readonly excluded: readonly NodeId[];
  /** Every candidate after the loss: the "after" window depends on which of them wins. */
  readonly after: readonly CandidateRow[];
  /** Each oracle's choice after the loss, with the latency it would give. */
  readonly elections: readonly (ElectionPrediction & { readonly predictedMs: DcLatency })[];
}

/**
 * Everything `pole-bench model` shows: the initial leader's scores and latency, then every
 * candidate's after that leader is killed, and whom each oracle would elect (MODEL_ORACLES, the
 * preference oracle when the topology has a list, and `oracleSpec`, default the topology's own).
 */
export function modelSummary(topology: Topology, oracleSpec: string = topology.cluster.oracle): ModelSummary {
  const configured = topology.cluster.initialLeader;
  const initialLeader = configured ?? predictElected(topology, oracleSpec, []).leader;
  const all = candidateTable(topology, []);
  const before = all.find((r) => r.id === initialLeader);
  if (before === undefined) throw new Error(`no candidate row for ${initialLeader}`);
  const excluded = [initialLeader];
  const after = candidateTable(topology, excluded);
  const specs: string[] = [...MODEL_ORACLES];
  if (topology.cluster.preference) specs.push('preference');
  if (!specs.includes(oracleSpec)) specs.push(oracleSpec);
  const elections = specs.map((spec) => {
    const e = predictElected(topology, spec, excluded);
    return { ...e, predictedMs: after.find((r) => r.id === e.leader)?.predictedMs ?? {} };
  });
  return {
    topology: topology.name,
    oracle: oracleSpec,
    initialLeader,
    initialLeaderConfigured: configured !== undefined,
    ratePerDc: Object.fromEntries([...topology.workload.ratePerDc].map(([dc, r]) => [dc, roundMicros(r)])),
    before,
    excluded,
    after,
    elections,
  };
}
