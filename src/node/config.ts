// The configuration of one POLE node: who it is, where it listens, whom it dials, its timers.
// Written by the runtime for every node it starts (`pole-bench node --config FILE`), or by hand.
// Loaded with line-numbered errors; every cross-field problem names the field it is about.
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadValidatedFile } from '../util/load-validated.js';
import { createOracle } from './core/oracles/registry.js';
import type { HeartbeatOptions } from './core/measure/heartbeat-monitor.js';
import type { Member, NodeId } from './core/types.js';
import type { CatchUpFrom } from './core/node-core.js';
import type { ElectionWaitFor } from './core/election.js';
import { TRACE_EVERY } from './trace/write-tracer.js';
import { majorityOf } from '../util/majority.js';

export interface ListenConfig {
  readonly host: string;
  /** Election and replication links from other members. 0 = ephemeral (tests). */
  readonly peerPort: number;
  /** The client write API. */
  readonly clientPort: number;
  /** GET /status and /metrics. */
  readonly httpPort: number;
}

/** Another member of the cluster and where to dial it (possibly a delay relay, not the peer itself). */
export interface PeerConfig {
  readonly id: NodeId;
  readonly sid: number;
  readonly host: string;
  readonly port: number;
  readonly datacenter?: string;
}

export interface TimersConfig {
  /** ZooKeeper's tick: the unit of syncLimit and initLimit; the leader pings every tick/2. */
  readonly tickMs: number;
  /** Ticks of silence after which a follower gives up on its leader (and a leader on a follower). */
  readonly syncLimit: number;
  /** Ticks allowed for discovery and sync after an election. */
  readonly initLimit: number;
  /** POLE's T: how long after hearing from a quorum a node waits before deciding. */
  readonly electionTimeoutMs: number;
  /** First retry interval of an undecided election; doubles on every retry. */
  readonly retryBaseMs: number;
  /**
   * Period of the ping-pong heartbeats on election links that measure RTT and carry request
   * rates; 0 turns them off (measured oracles then always fall back to history).
   */
  readonly heartbeatMs: number;
}

/** How heartbeats turn into RTT_i and F_i (see core/measure/heartbeat-monitor.ts). */
export interface MeasureConfig {
  /** Round trips averaged per peer. */
  readonly window: number;
  /** Heartbeat periods of silence before a peer is dropped from RTT_i and F_i. */
  readonly missLimit: number;
  /** Time constant of θr's decaying average, ms. */
  readonly rateWindowMs: number;
  /** Round trips a peer needs before it counts towards being ready to score. */
  readonly minSamples: number;
  /** How long a fresh node waits for RTTs to a quorum before its first election, ms. */
  readonly waitMs: number;
}

/** Resignation (paper, section 5). */
export interface ResignConfig {
  /** A follower must score better by this fraction of the leader's score (0.1 = 10 %). */
  readonly margin: number;
  /** ... for this many heartbeat checks in a row. */
  readonly checks: number;
  /** Least time a leader serves before it may resign, ms. */
  readonly holdMs: number;
}

export interface NodeConfig {
  readonly id: NodeId;
  readonly sid: number;
  readonly datacenter: string;
  readonly listen: ListenConfig;
  /** Every other member; the cluster is this node plus these. */
  readonly peers: readonly PeerConfig[];
  /** Absolute (a relative path in the file is taken relative to the file's directory). */
  readonly dataDir: string;
  readonly fsync: boolean;
  /** Oracle spec for createOracle, e.g. "history" or "latency:10ms,history". */
  readonly oracle: string;
  readonly preference?: readonly NodeId[];
  /** A member that should win the first election (the harness's "initial leader p5"). */
  readonly initialLeader?: NodeId;
  readonly timers: TimersConfig;
  readonly measure: MeasureConfig;
  /** Off unless given. */
  readonly resign?: ResignConfig;
  /** Take a snapshot after this many transactions. */
  readonly snapshotEvery: number;
  /** One write in this many is traced for the latency anatomy (by requestId; trace/write-tracer.ts). */
  readonly traceEvery: number;
  /** A follower further behind than this many txns is synced with a snapshot (default: unlimited). */
  readonly syncDiffLimit?: number;
  /** Applied txns kept in memory for DIFFs, the newest; a follower further behind gets a SNAP. */
  readonly logInMemory: number;
  /** Whom a new leader behind its quorum catches up from among equals (default: the first to answer). */
  readonly catchUpFrom?: CatchUpFrom;
  /** Whom an election's collection waits for before T: every member, or every live one (default). */
  readonly electionWaitFor?: ElectionWaitFor;
  /** Largest client write payload accepted, in bytes. */
  readonly maxWriteBytes: number;
}

const nodeId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'expected a node id of letters, digits, "_", "." or "-"' });
const port = z.int().min(0).max(65535);
const positive = z.number().positive();
const positiveInt = z.int().positive();

/**
 * Applied txns a node keeps in memory for DIFFs (CoreConfig.logInMemory says why a limit).
 * 10,000 is 10 s of the paper's 1,000 writes/s: a follower back from a restart within that
 * gets a DIFF, one further behind a SNAP. ZooKeeper keeps 500 (commitLogCount).
 */
const LOG_IN_MEMORY = 10_000;
const nonEmpty = z.string().min(1);

const rawSchema = z.strictObject({
  id: nodeId,
  sid: positiveInt.optional(),
  datacenter: nonEmpty.default('dc1'),
  listen: z.strictObject({
    host: nonEmpty.default('127.0.0.1'),
    peerPort: port,
    clientPort: port,
    httpPort: port,
  }),
  peers: z.array(
    z.strictObject({
      id: nodeId,
      sid: positiveInt.optional(),
      host: nonEmpty,
      // Dialled, so it must be a real port.
      port: z.int().min(1).max(65535),
      datacenter: nonEmpty.optional(),
    }),
  ),
  dataDir: nonEmpty,
  fsync: z.boolean().default(true),
  oracle: nonEmpty.default('history'),
  preference: z.array(nodeId).optional(),
  initialLeader: nodeId.optional(),
  timers: z
    .strictObject({
      tickMs: positive.default(50),
      syncLimit: positiveInt.default(5),
      initLimit: positiveInt.default(10),
      electionTimeoutMs: positive.optional(),
      retryBaseMs: positive.optional(),
      heartbeatMs: z.number().min(0).default(1000),
    })
    .prefault({}),
  measure: z
    .strictObject({
      window: positiveInt.max(1000).default(10),
      missLimit: positiveInt.default(3),
      rateWindowMs: positive.default(5000),
      minSamples: positiveInt.default(3),
      waitMs: positive.optional(),
    })
    .prefault({}),
  resign: z
    .strictObject({
      margin: z.number().min(0).max(1).default(0.1),
      checks: positiveInt.default(3),
      holdMs: z.number().min(0).default(10_000),
    })
    .optional(),
  snapshotEvery: positiveInt.default(100_000),
  traceEvery: positiveInt.default(TRACE_EVERY),
  syncDiffLimit: positiveInt.optional(),
  logInMemory: positiveInt.default(LOG_IN_MEMORY),
  catchUpFrom: z.enum(['first-answer', 'highest-id']).optional(),
  electionWaitFor: z.enum(['all', 'live']).optional(),
  maxWriteBytes: positiveInt.default(1024 * 1024),
});

type RawConfig = z.output<typeof rawSchema>;
type Issue = { readonly path: PropertyKey[]; readonly message: string };

/** The schema of a node config file, cross-field checks included. Output paths are as written (dataDir unresolved). */
export const nodeConfigSchema: z.ZodType<NodeConfig> = rawSchema.transform((raw, ctx) => {
  const issues: Issue[] = [];
  const config = resolveConfig(raw, issues);
  for (const issue of issues) ctx.issues.push({ code: 'custom', input: raw, ...issue });
  return issues.length > 0 ? z.NEVER : config;
});

/** Load and check a node config file. Throws InputError (exit code 2) pointing at the bad line. */
export function loadNodeConfig(file: string): NodeConfig {
  const config = loadValidatedFile(file, nodeConfigSchema);
  return { ...config, dataDir: resolve(dirname(file), config.dataDir) };
}

/** This node and its peers as cluster members, sorted by sid. */
export function membersOf(config: NodeConfig): Member[] {
  return [{ id: config.id, sid: config.sid }, ...config.peers.map((p) => ({ id: p.id, sid: p.sid }))].sort(
    (a, b) => a.sid - b.sid,
  );
}

/** The sid an id implies by its trailing number: p3 → 3. */
function sidFromId(id: string): number | undefined {
  const m = /(\d+)$/.exec(id);
  const n = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function resolveConfig(raw: RawConfig, issues: Issue[]): NodeConfig {
  const noSid = (id: string): string =>
    `required: the id ${JSON.stringify(id)} has no positive trailing number to take the sid from`;
  const sid = raw.sid ?? sidFromId(raw.id);
  if (sid === undefined) issues.push({ path: ['sid'], message: noSid(raw.id) });

  const peers: PeerConfig[] = raw.peers.map((p, i) => {
    const peerSid = p.sid ?? sidFromId(p.id);
    if (peerSid === undefined) issues.push({ path: ['peers', i, 'sid'], message: noSid(p.id) });
    const peer: PeerConfig = { id: p.id, sid: peerSid ?? 0, host: p.host, port: p.port };
    return p.datacenter === undefined ? peer : { ...peer, datacenter: p.datacenter };
  });

  checkMembers(raw, sid, peers, issues);

  const memberIds = new Set([raw.id, ...peers.map((p) => p.id)]);
  if (raw.initialLeader !== undefined && !memberIds.has(raw.initialLeader)) {
    issues.push({
      path: ['initialLeader'],
      message: `${JSON.stringify(raw.initialLeader)} is not a member (members: ${[...memberIds].join(', ')})`,
    });
  }
  raw.preference?.forEach((id, i) => {
    if (!memberIds.has(id))
      issues.push({ path: ['preference', i], message: `${JSON.stringify(id)} is not a member` });
    else if (raw.preference?.indexOf(id) !== i)
      issues.push({ path: ['preference', i], message: `${id} is listed twice` });
  });
  // Only worth asking the registry once the inputs it may need are sound.
  if (issues.length === 0) {
    try {
      createOracle(raw.oracle, raw.preference ? { preference: raw.preference } : {});
    } catch (err) {
      issues.push({ path: ['oracle'], message: (err as Error).message });
    }
  }

  const tickMs = raw.timers.tickMs;
  const electionTimeoutMs = raw.timers.electionTimeoutMs ?? 2 * tickMs;
  const timers: TimersConfig = {
    tickMs,
    syncLimit: raw.timers.syncLimit,
    initLimit: raw.timers.initLimit,
    electionTimeoutMs,
    retryBaseMs: raw.timers.retryBaseMs ?? electionTimeoutMs,
    heartbeatMs: raw.timers.heartbeatMs,
  };

  const config: NodeConfig = {
    id: raw.id,
    sid: sid ?? 0,
    datacenter: raw.datacenter,
    listen: raw.listen,
    peers,
    dataDir: raw.dataDir,
    fsync: raw.fsync,
    oracle: raw.oracle,
    timers,
    measure: {
      window: raw.measure.window,
      missLimit: raw.measure.missLimit,
      rateWindowMs: raw.measure.rateWindowMs,
      minSamples: raw.measure.minSamples,
      waitMs: raw.measure.waitMs ?? 10 * (raw.timers.heartbeatMs || 1000),
    },
    snapshotEvery: raw.snapshotEvery,
    traceEvery: raw.traceEvery,
    ...(raw.syncDiffLimit !== undefined ? { syncDiffLimit: raw.syncDiffLimit } : {}),
    logInMemory: raw.logInMemory,
    ...(raw.catchUpFrom !== undefined ? { catchUpFrom: raw.catchUpFrom } : {}),
    ...(raw.electionWaitFor !== undefined ? { electionWaitFor: raw.electionWaitFor } : {}),
    maxWriteBytes: raw.maxWriteBytes,
  };
  return {
    ...config,
    ...(raw.preference ? { preference: raw.preference } : {}),
    ...(raw.initialLeader !== undefined ? { initialLeader: raw.initialLeader } : {}),
    ...(raw.resign ? { resign: raw.resign } : {}),
  };
}

/** The core's heartbeat options for a node config; undefined when heartbeats are off. */
export function heartbeatOptionsOf(config: NodeConfig): HeartbeatOptions | undefined {
  if (config.timers.heartbeatMs <= 0) return undefined;
  return {
    periodMs: config.timers.heartbeatMs,
    window: config.measure.window,
    missLimit: config.measure.missLimit,
    rateWindowMs: config.measure.rateWindowMs,
    minSamples: config.measure.minSamples,
  };
}

/** Self not among peers, ids and sids unique, enough servers for a quorum to outlive its leader. */
function checkMembers(
  raw: RawConfig,
  sid: number | undefined,
  peers: readonly PeerConfig[],
  issues: Issue[],
): void {
  const idOwner = new Map<string, string>([[raw.id, 'this node']]);
  const sidOwner = new Map<number, string>();
  if (sid !== undefined) sidOwner.set(sid, `this node (${raw.id})`);
  peers.forEach((p, i) => {
    const where = `peers[${i}]`;
    if (p.id === raw.id) {
      issues.push({
        path: ['peers', i, 'id'],
        message: `is this node itself (${raw.id}); list only the OTHER members`,
      });
    } else {
      const other = idOwner.get(p.id);
      if (other !== undefined)
        issues.push({ path: ['peers', i, 'id'], message: `duplicate id ${p.id} (also ${other})` });
      else idOwner.set(p.id, where);
    }
    if (p.sid === 0 || p.id === raw.id) return; // sid missing (already reported) or self (reported)
    const other = sidOwner.get(p.sid);
    // The sid may be implied by the id; then point at the id, which is what the user wrote.
    const field = raw.peers[i]?.sid !== undefined ? 'sid' : 'id';
    if (other !== undefined) {
      issues.push({
        path: ['peers', i, field],
        message: `duplicate sid ${p.sid}${field === 'id' ? ' (implied by the id)' : ''}, also used by ${other}`,
      });
    } else sidOwner.set(p.sid, `${where} (${p.id})`);
  });
  if (raw.peers.length < 2) {
    const n = raw.peers.length + 1;
    issues.push({
      path: ['peers'],
      message:
        `a cluster of ${n} server${n === 1 ? '' : 's'} cannot survive losing its leader ` +
        `(a quorum of ${majorityOf(n)} needs every server): list at least 2 peers`,
    });
  }
}
