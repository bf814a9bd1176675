// The schema of a topology file (see topologies/*.yaml): data centers and their nodes, the delay
// of every link between data centers, jitter, the cluster's oracle and timers, the write load and
// the fault scenario. One zod definition gives both the validation and the JSON Schema editors use
// (json-schema.ts). This file checks each field on its own; topology-checks.ts adds the rules that
// span fields (and exports `topologySchema`, the two together).
//
// Defaults, for everything a file may leave out:
// - name: the file's base name (filled in by the loader, which knows the file).
// - links: none (fine for a single data center; every pair of data centers needs a delay).
// - shaping: jitter 0 (delays exactly as configured), distribution pareto (the paper's).
// - cluster.oracle: history (ZooKeeper's own rule); no initial leader, no preference list.
// - cluster.timers: tickMs 100, syncLimit 5, initLimit 10, electionTimeoutMs 200, heartbeatMs 250:
//   roomy enough for WAN round trips up to ~80 ms. retryBaseMs: the node's default (= T).
// - cluster.measure, cluster.resign: whatever is given is passed to the node config, which fills in
//   the rest with its own defaults; resignation stays off unless `resign` is present.
// - workload: rate 1000 writes/s, size 1024 bytes, equal share per data center (a data center left
//   out of a given `share` gets none), constant arrivals.
// - workload.keys: none (every write a new key).
// - scenario: duration 60s, warmup 5s, no faults, settle 10s, no thresholds.
import { BYTE_SIZE_HINT, BYTE_SIZE_PATTERN, parseByteSize } from './byte-size.js';
import { FAULT_ACTIONS, TARGET_NAMES, type FaultAction, type TargetName } from '../vocabulary/names.js';
import { z } from 'zod';
import type { MeasureConfig, ResignConfig, TimersConfig } from '../node/config.js';
import type { NodeId } from '../vocabulary/names.js';
import {
  DURATION_HINT,
  DURATION_PATTERN,
  PERCENT_PATTERN,
  isPercent,
  parseDuration,
  parsePercent,
} from '../util/duration.js';

export const DISTRIBUTIONS = ['pareto', 'paretonormal', 'normal', 'uniform'] as const;
export type Distribution = (typeof DISTRIBUTIONS)[number];

export const ARRIVALS = ['constant', 'poisson'] as const;
export type Arrival = (typeof ARRIVALS)[number];

/** The faults that act on members (the rest act on links between data centers or nodes). */
export const NODE_FAULTS = ['kill', 'restart', 'pause', 'resume', 'roll'] as const;
/** The faults that cut or change links: they need a shaping that can (the relay). */
export const LINK_FAULTS = ['partition', 'heal', 'isolate', 'link', 'oneway', 'bridge', 'ring'] as const;
/** The faults that cut links between members of one data center too (the relay routes those then). */
export const MEMBER_CUTS: readonly FaultAction[] = ['isolate', 'oneway', 'bridge', 'ring'];
/** What `for` undoes: each of these faults, by the fault that undoes it. */
export const UNDONE_BY: Partial<Record<FaultAction, FaultAction>> = {
  kill: 'restart',
  pause: 'resume',
  partition: 'heal',
  isolate: 'heal',
  oneway: 'heal',
  bridge: 'heal',
  ring: 'heal',
};

/**
 * The fault target that means "whoever leads at that moment" (in a partition: the leader's data
 * center). Reserved: no node or data center may be called so.
 */
export const LEADER = 'leader';
/** The restart/resume target that means "the node the latest kill (or pause) took down". Reserved too. */
export const KILLED = 'killed';
/** The kill/pause target that means "a minority of the members, drawn when it strikes". Reserved too. */
export const MINORITY = 'minority';

/** Jitter as written: a fraction of each direction's delay ("2%"), or an absolute duration. */
export type Jitter =
  { readonly kind: 'fraction'; readonly fraction: number } | { readonly kind: 'ms'; readonly ms: number };

export interface NodeSpec {
  readonly id: NodeId;
  readonly sid: number;
}

export interface DatacenterSpec {
  readonly name: string;
  readonly nodes: readonly NodeSpec[];
}

/** One direction of one link between two data centers. */
export interface OneWayDelay {
  readonly from: string;
  readonly to: string;
  readonly delayMs: number;
}

export type TimersSpec = Omit<TimersConfig, 'retryBaseMs'> & { readonly retryBaseMs?: number };

export interface ClusterSpec {
  /** An oracle spec for createOracle, e.g. "worst-case" or "latency:10ms,history". */
  readonly oracle: string;
  readonly initialLeader?: NodeId;
  /** The preference oracle's list, most preferred first. */
  readonly preference?: readonly NodeId[];
  readonly timers: TimersSpec;
  /** Only what the file gives; the node config supplies the rest. */
  readonly measure?: Partial<MeasureConfig>;
  /** Present (possibly empty) when resignation is on; the node config fills in missing fields. */
  readonly resign?: Partial<ResignConfig>;
  /** A follower further behind than this many txns is synced with a snapshot (POLE node only). */
  readonly syncDiffLimit?: number;
  /** Whom a new leader behind its quorum catches up from among equals (POLE node only). */
  readonly catchUpFrom?: 'first-answer' | 'highest-id';
  /** Whom an election waits for before T (POLE node only; a loaded file always says: live by default). */
  readonly electionWaitFor?: 'all' | 'live';
}

export interface WorkloadSpec {
  /** Writes per second, all data centers together. */
  readonly rate: number;
  /** Bytes per write. */
  readonly size: number;
  /** Relative weight of every data center (all present; not normalised). */
  readonly share: Readonly<Record<string, number>>;
  readonly arrival: Arrival;
  /** Distinct keys each data center writes over and over; undefined: every write a new key. */
  readonly keys?: number;
  /** The share of operations that are reads (0: writes only). */
  readonly reads: number;
  /** The target's read path the reads take (Target.readModes). */
  readonly readMode: string;
}

export interface FaultSpec {
  readonly atMs: number;
  readonly action: FaultAction;
  /**
   * What it acts on, as said in reports: a node id or LEADER (kill, restart, pause, resume,
   * isolate), the data centers cut off joined by "," (partition), "all" (heal), "a-b" (link).
   */
  readonly target: NodeId;
  /** partition: the data centers cut off from the rest; link: its two data centers. */
  readonly datacenters?: readonly string[];
  /** link: the new round-trip time. */
  readonly rttMs?: number;
  /** Set on the copies of a fault written with `every`: the period, for the summary. */
  readonly everyMs?: number;
  /** ring: the members in ring order; a minority drawn by the nemesis: its members. */
  readonly nodes?: readonly NodeId[];
  /** This fault's number in the schedule, where a later fault undoes it (`for`). */
  readonly ref?: number;
  /** The fault (by its ref) this one undoes: the same members restarted or resumed, its own cuts healed. */
  readonly undoes?: number;
  /** Drawn by the scenario's nemesis rather than written. */
  readonly drawn?: boolean;
}

/** The kinds of fault a nemesis mix draws from. */
export const NEMESIS_KINDS = [
  'kill-leader',
  'kill',
  'pause-leader',
  'pause-minority',
  'oneway-leader',
  'isolate-leader',
  'partition',
  'bridge',
  'ring',
  'roll',
] as const;
export type NemesisKind = (typeof NEMESIS_KINDS)[number];

/** A fault schedule drawn by a seed from a mix of kinds: one fault every `everyMs`, each undone after `forMs`. */
export interface NemesisSpec {
  readonly mix: readonly NemesisKind[];
  readonly everyMs: number;
  readonly forMs: number;
  readonly seed: number;
}

export interface ScenarioSpec {
  readonly durationMs: number;
  readonly warmupMs: number;
  /** The "after" window starts this long after the new leader is elected. */
  readonly settleMs: number;
  /**
   * In time order: each fault written, with `every` expanded into its copies and `for` into the
   * fault that undoes it, and those the nemesis drew.
   */
  readonly faults: readonly FaultSpec[];
  /** The nemesis the drawn faults came from, as written (with its defaults). */
  readonly nemesis?: NemesisSpec;
  /** Pass/fail conditions on the result, as written (parsed by report/thresholds.ts). */
  readonly thresholds: readonly string[];
  /** Bytes of state written before the load (new znodes), so that snapshots have that size. */
  readonly preloadBytes?: number;
}

/** A checked topology file, before it becomes a Topology (topology.ts). */
export interface TopologyFile {
  /** Undefined when the file leaves it out (the loader uses the file name). */
  readonly name?: string;
  /** The system under test (default pole). */
  readonly target: TargetName;
  readonly datacenters: readonly DatacenterSpec[];
  /** Exactly one entry for every ordered pair of distinct data centers. */
  readonly delays: readonly OneWayDelay[];
  readonly shaping: { readonly jitter: Jitter; readonly distribution: Distribution };
  readonly cluster: ClusterSpec;
  readonly workload: WorkloadSpec;
  readonly scenario: ScenarioSpec;
}

// ------------------------------------------------------------------------------------ field types

/** An error message for a field: "expected X, got Y", or "required (X)" when it is missing. */
function expecting(what: string, numberHint = ''): (issue: { readonly input?: unknown }) => string {
  return ({ input }) => {
    if (input === undefined) return `required (${what})`;
    const got =
      typeof input === 'string'
        ? JSON.stringify(input)
        : typeof input === 'number'
          ? `${input}${numberHint}`
          : Array.isArray(input)
            ? 'a list'
            : input === null
              ? 'nothing'
              : typeof input === 'object'
                ? 'a mapping'
                : String(input);
    return `expected ${what}, got ${got}`;
  };
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const NAME_HINT = 'a name of letters, digits, "_", "." or "-"';
const name = z.string({ error: expecting(NAME_HINT) }).regex(NAME_PATTERN, { error: expecting(NAME_HINT) });
const positive = z.number().positive();
const positiveInt = z.int().positive();

const NEEDS_UNIT = ' (a number: give it a unit)';
const duration = z
  .string({ error: expecting(DURATION_HINT, NEEDS_UNIT) })
  .regex(new RegExp(DURATION_PATTERN), { error: expecting(DURATION_HINT, NEEDS_UNIT) })
  .transform(parseDuration);

const JITTER_HINT = `a percentage of the delay like "2%", or ${DURATION_HINT}`;
const jitter = z
  .string({ error: expecting(JITTER_HINT, NEEDS_UNIT) })
  .regex(new RegExp(`${PERCENT_PATTERN}|${DURATION_PATTERN}`), { error: expecting(JITTER_HINT, NEEDS_UNIT) })
  .transform((text): Jitter =>
    isPercent(text)
      ? { kind: 'fraction', fraction: parsePercent(text) }
      : { kind: 'ms', ms: parseDuration(text) },
  );

const nodeEntry = z.union(
  [
    name.describe('the node name; its sid is the trailing number (p3 → 3)'),
    z.strictObject({
      name,
      sid: positiveInt.optional().describe('defaults to the trailing number of the name'),
    }),
  ],
  { error: 'expected a node name like "p3", or {name, sid}' },
);

// A link has two forms. One object type with every field optional, rather than a union, so that a
// problem inside a link (a duration without a unit) is reported at its field, not as "matches no
// form"; the form itself is checked below, and `oneOf` tells editors about it.
const link = z
  .strictObject({
    between: z.tuple([name, name]).optional().describe('symmetric link: the two data centers'),
    rtt: duration.optional().describe('symmetric link: round-trip time; each direction gets rtt/2'),
    from: name.optional().describe('one-way link: the sending data center'),
    to: name.optional().describe('one-way link: the receiving data center'),
    delay: duration.optional().describe('one-way link: the delay of this direction'),
  })
  .meta({ oneOf: [{ required: ['between', 'rtt'] }, { required: ['from', 'to', 'delay'] }] });

const faultTarget = name.describe(
  `"${LEADER}" (whoever leads at that moment), "${KILLED}" (restart/resume: the node the latest kill or pause took down), "${MINORITY}" (kill/pause, with for: a minority drawn by the run's seed) or a node name`,
);
const fault = z
  .strictObject({
    at: duration.describe('from the start of the run'),
    kill: faultTarget.optional(),
    restart: faultTarget.optional(),
    pause: faultTarget.optional(),
    resume: faultTarget.optional(),
    partition: z
      .array(name)
      .min(1)
      .optional()
      .describe(`data centers cut off from all the others ("${LEADER}": the leader's data center then)`),
    heal: z.literal('all').optional().describe('restores every cut link'),
    isolate: faultTarget.optional().describe('cuts one node off from every other node; it keeps running'),
    link: z.tuple([name, name]).optional().describe('the link between two data centers, with rtt'),
    rtt: duration.optional().describe('link: its new round-trip time'),
    oneway: faultTarget
      .optional()
      .describe(
        'cuts what every other member sends to it; it still sends (a leader that talks but cannot hear)',
      ),
    bridge: faultTarget
      .optional()
      .describe(
        'splits the other members into two halves (by server id) cut from each other; it alone sees both',
      ),
    ring: z
      .union([z.literal('auto'), z.array(name).min(1)])
      .optional()
      .describe(
        'a ring of majorities over the members in this order (auto: the data centers interleaved): each keeps only its nearest neighbours, a different majority each',
      ),
    roll: z
      .literal('all')
      .optional()
      .describe('restarts every member one by one (by server id), each once the one before is back'),
    for: duration
      .optional()
      .describe(
        'undoes the fault this long after it: restarts what it killed, resumes what it paused, heals its cuts',
      ),
    every: duration
      .optional()
      .describe('repeats the fault at at, at + every, … while inside the run (a soak)'),
  })
  .meta({ oneOf: FAULT_ACTIONS.map((a) => ({ required: ['at', a] })) });

/** The file as written, field by field, with defaults applied and durations in ms. */
export const rawTopologySchema = z
  .strictObject({
    name: name.optional().describe('defaults to the file name'),
    target: z
      .enum(TARGET_NAMES)
      .default('pole')
      .describe('the system under test: pole (our node) or zookeeper (stock Apache ZooKeeper 3.8)'),
    datacenters: z
      .array(
        z.strictObject({
          name,
          nodes: z.array(nodeEntry).min(1),
        }),
      )
      .min(1),
    links: z
      .array(link)
      .default([])
      .describe('delays between data centers; inside one data center there is none'),
    shaping: z
      .strictObject({
        jitter: jitter.prefault('0%'),
        distribution: z.enum(DISTRIBUTIONS).default('pareto'),
      })
      .prefault({}),
    cluster: z
      .strictObject({
        oracle: z.string().min(1).default('history').describe('e.g. "worst-case" or "latency:10ms,history"'),
        initialLeader: name.optional(),
        preference: z
          .array(name)
          .min(1)
          .optional()
          .describe('for the preference oracle, most preferred first'),
        timers: z
          .strictObject({
            tickMs: positive.default(100),
            syncLimit: positiveInt.default(5),
            initLimit: positiveInt.default(10),
            electionTimeoutMs: positive.default(200),
            retryBaseMs: positive.optional(),
            heartbeatMs: z.number().min(0).default(250),
          })
          .prefault({}),
        measure: z
          .strictObject({
            window: positiveInt.max(1000).optional(),
            missLimit: positiveInt.optional(),
            rateWindowMs: positive.optional(),
            minSamples: positiveInt.optional(),
            waitMs: positive.optional(),
          })
          .optional(),
        resign: z
          .strictObject({
            margin: z.number().min(0).max(1).optional(),
            checks: positiveInt.optional(),
          })
          .optional(),
        syncDiffLimit: positiveInt
          .optional()
          .describe(
            'a follower further behind than this many txns is synced with a snapshot, as ZooKeeper 3.4 did past its 500 in-memory proposals (default: only when its history is gone)',
          ),
        catchUpFrom: z
          .enum(['first-answer', 'highest-id'])
          .optional()
          .describe(
            "a new leader behind its quorum fetches from its most up-to-date member; among equals, first-answer (default) takes the first to acknowledge (the nearest), highest-id the highest server id (the order of ZooKeeper's election; the paper's Fig. 8a)",
          ),
        election: z
          .strictObject({
            waitFor: z
              .enum(['all', 'live'])
              .default('live')
              .describe(
                'whom the collection waits for before the election timeout: every member (the paper) or every member not known to be down (its connection closed, or the lost leader)',
              ),
          })
          .prefault({}),
      })
      .prefault({}),
    workload: z
      .strictObject({
        rate: positive.default(1000).describe('writes per second, all data centers together'),
        size: positiveInt.default(1024).describe('bytes per write'),
        share: z
          .record(z.string(), z.number().min(0))
          .optional()
          .describe('relative weight per data center; default equal'),
        arrival: z.enum(ARRIVALS).default('constant'),
        keys: positiveInt
          .optional()
          .describe(
            'distinct keys each data center writes over and over (state stays bounded, as in a soak); default: a new key per write',
          ),
        reads: z
          .number()
          .min(0)
          .max(1)
          .default(0)
          .describe(
            "the share of operations that are reads of other data centers' keys, into the run's history and its linearizability check (keys default to 1000 with reads)",
          ),
        readMode: z
          .string()
          .min(1)
          .default('default')
          .describe(
            "the target's read path the reads take: default, or another the target names (`pole-bench run --help` lists them)",
          ),
      })
      .prefault({}),
    scenario: z
      .strictObject({
        duration: duration.prefault('60s'),
        warmup: duration.prefault('5s'),
        faults: z.array(fault).default([]),
        nemesis: z
          .strictObject({
            mix: z
              .array(z.enum(NEMESIS_KINDS))
              .min(1)
              .describe('the kinds of fault drawn from, each as likely'),
            every: duration.describe('one fault drawn every so often, from the warmup on'),
            for: duration
              .optional()
              .describe('how long each lasts before it is undone (default: half of every)'),
            seed: z
              .number()
              .int()
              .min(0)
              .default(1)
              .describe('draws the schedule: the same seed, the same faults'),
          })
          .optional()
          .describe(
            'faults drawn by a seed from a mix of kinds, printed in the report so that a run can be replayed',
          ),
        settle: duration
          .prefault('10s')
          .describe('the "after" window starts this long after the new leader is elected'),
        thresholds: z
          .array(z.string())
          .default([])
          .describe('pass/fail conditions on result.json, like "writes.lost == 0" (added to --threshold)'),
        preload: z
          .string({ error: `expected ${BYTE_SIZE_HINT}` })
          .regex(new RegExp(BYTE_SIZE_PATTERN), { error: `expected ${BYTE_SIZE_HINT}` })
          .transform(parseByteSize)
          .optional()
          .describe(
            'state written before the load (new znodes of the workload size), so that snapshots have about this size (POLE node only)',
          ),
      })
      .prefault({}),
  })
  .describe('A pole-bench topology: data centers, links, cluster, workload and fault scenario');

/** The file as written, once its fields are valid one by one (input to the cross-field checks). */
export type RawTopology = z.output<typeof rawTopologySchema>;
