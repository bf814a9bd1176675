// The messages between the harness and a load agent (`pole-bench agent`), carried over the Node
// IPC channel of the agent's child process (JSON serialisation). Every message carries the
// protocol version `v`; a receiver rejects a version it does not speak, so a harness and an agent
// from different builds fail loudly instead of misreading each other.
//
// Conversation:
//   agent → ready            (the process is up and listening)
//   harness → start          (what to send where; the schedule begins at startAtMs or at once)
//   agent → started          (the wall time of the schedule's origin)
//   agent → interval         (every intervalMs, 1 s by default, aligned to the origin)
//   harness → phase          (any number of times: the recording phase from now, or from atMs)
//   harness → stop           (optional: the agent also ends by itself after durationMs)
//   agent → interval         (the last, partial one) then done, then it exits 0
//   agent → error            (instead, when something went wrong; it then exits 1)
//   harness → clock, agent → clock   (any time from ready to done: the agent's wall clock, for the
//                            harness's clock-offset probes, measure/clock-probe.ts)
//
// Times named *Ms that are instants are wall-clock ms (util/wall-clock.ts wallNowMs),
// comparable with the node events' `t`. Latencies are ms. Histograms hold microseconds.
//
// Write accounting: attempted = acked + failed once `done` is sent. `failed` counts every write
// that was not acknowledged, for whatever reason; `timedOut` is the part of `failed` that reached
// its deadline and `overflow` the part never sent because maxInFlight writes were in flight.
// A retried write (same clientId and requestId) counts once; `retries` counts the extra attempts.
import { TARGET_NAMES } from '../vocabulary/names.js';
import { z } from 'zod';
import { ARRIVALS } from './open-loop-schedule.js';

export const AGENT_PROTOCOL_VERSION = 1;

/** The agent's default CPU priority: as raised as the delay relay's threads (-10), not above. */
export const DEFAULT_AGENT_NICE = -10;

const v = z.literal(AGENT_PROTOCOL_VERSION);
const ms = z.number().finite();
const nonNegative = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();
const phaseName = z.string().min(1).max(64);

// --- harness → agent ---------------------------------------------------------------------------

export const endpointSchema = z.object({
  node: z.string().min(1),
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535),
});

export const startMessageSchema = z.object({
  v,
  type: z.literal('start'),
  /** The data center this agent loads; part of every path it writes. */
  dc: z.string().min(1),
  /** The data center's servers; each write goes to one of them, uniformly at random. */
  endpoints: z.array(endpointSchema).min(1),
  /** Writes per second from this agent. */
  rate: z.number().finite().positive(),
  /** Bytes per write. */
  size: z.number().int().min(0),
  arrival: z.enum(ARRIVALS),
  /** Seeds the Poisson gaps, the server choice and the written bytes. */
  seed: z.number().int(),
  /** How long the schedule runs; 0: until `stop`. */
  durationMs: nonNegative,
  /** Deadline of one attempt on one connection. */
  requestTimeoutMs: z.number().finite().positive(),
  /** A write not acknowledged this long after its intended send time counts as timed out. */
  writeDeadlineMs: z.number().finite().positive(),
  /** clientId = `${clientIdPrefix}-${dc}`; must be unique per run (the nodes deduplicate on it). */
  clientIdPrefix: z.string().min(1),
  /** Paths are `${pathPrefix}/${dc}/${seq}`, seq = 1, 2, … (also the requestId). */
  pathPrefix: z.string().startsWith('/'),
  /** With keys: `${pathPrefix}/${dc}/${seq mod keys}`, the same keys written over and over (a soak's bounded state). */
  keys: z.number().int().positive().optional(),
  /** The phase recorded until the first `phase` message. Default 'warmup'. */
  phase: phaseName.optional(),
  /** Wall-clock ms at which the schedule begins (several agents in step); default: at once. */
  startAtMs: ms.optional(),
  /** Writes in flight beyond this are not sent and count as failed (overflow). Default 10000. */
  maxInFlight: z.number().int().positive().optional(),
  /** Length of an `interval` message's interval. Default 1000. */
  intervalMs: z.number().finite().positive().optional(),
  /**
   * CPU priority (nice, -20..19) the agent process asks for, DEFAULT_AGENT_NICE unless given; null
   * leaves it alone. Where the system refuses, the agent runs anyway and `started` says so.
   */
  nice: z.number().int().min(-20).max(19).nullable().optional(),
  /** How the send loop sleeps (see load-agent.ts wakeModeFor); default: chosen by the rate. */
  wake: z.enum(['thread', 'timeout']).optional(),
  /** Writes traced for the anatomy: requestId a multiple of this (default TRACE_EVERY; the nodes' own). */
  traceEvery: z.number().int().positive().optional(),
  /** The client protocol of the target under load (default: the POLE node's). */
  protocol: z.enum(TARGET_NAMES).optional(),
  /**
   * The share of operations that are reads (default 0: writes only). With reads, every operation
   * goes into the history (`done.history`) and each write's bytes begin with its tag, the value a
   * read of it returns; `keys` must be given.
   */
  reads: z.number().min(0).max(1).optional(),
  /** The target's read path the reads take (Target.readModes; default: `default`). */
  readMode: z.string().min(1).optional(),
  /** The data centers whose keys the reads read (default: this one's). */
  readFrom: z.array(z.string().min(1)).optional(),
});

export const phaseMessageSchema = z.object({
  v,
  type: z.literal('phase'),
  name: phaseName,
  /** Wall-clock ms from which the phase applies (default: when the agent receives the message). */
  atMs: ms.optional(),
});

export const stopMessageSchema = z.object({ v, type: z.literal('stop') });

/** Asks for the agent's wall clock; `id` comes back with the answer. */
export const clockQuestionSchema = z.object({ v, type: z.literal('clock'), id: count });

export const harnessMessageSchema = z.discriminatedUnion('type', [
  startMessageSchema,
  phaseMessageSchema,
  stopMessageSchema,
  clockQuestionSchema,
]);

// --- agent → harness ---------------------------------------------------------------------------

/** A latency distribution, ms; all zero when count is 0. */
export const latencySummarySchema = z.object({
  count,
  mean: nonNegative,
  /** The population standard deviation of every write's latency (the histogram's). */
  sd: nonNegative,
  p50: nonNegative,
  p90: nonNegative,
  p99: nonNegative,
  p999: nonNegative,
  max: nonNegative,
});

export const readyMessageSchema = z.object({ v, type: z.literal('ready'), pid: count });

export const startedMessageSchema = z.object({
  v,
  type: z.literal('started'),
  dc: z.string(),
  /** Wall-clock ms of the schedule's origin. */
  startMs: ms,
  /** How the send loop sleeps: a clock thread (~0.1 ms) or setTimeout (~1 ms). */
  wake: z.enum(['thread', 'timeout']),
  /** The nice value the agent process runs at, when it set one; null otherwise. */
  nice: z.number().int().nullable(),
});

export const intervalMessageSchema = z.object({
  v,
  type: z.literal('interval'),
  dc: z.string(),
  /** 0, 1, 2, … from the schedule's origin. */
  index: count,
  startMs: ms,
  endMs: ms,
  /** The phase in effect at startMs. */
  phase: phaseName,
  /**
   * Corrected latency (µs, ack − intended send time) of the writes acknowledged in the interval:
   * an HdrHistogram from hdr-histogram-js's encodeIntoCompressedBase64.
   */
  histogram: z.string(),
  /** Writes sent, acknowledged, failed (timed out included) and timed out in the interval. */
  sent: count,
  acked: count,
  failed: count,
  timedOut: count,
  /** p99 of send lateness (actual − intended send time) of the writes sent in the interval. */
  latenessP99Ms: nonNegative,
});

export const phaseSummarySchema = z.object({
  /** From the intended send time: what a user of an open system would see. */
  corrected: latencySummarySchema,
  /** From the actual send time (the first attempt). */
  uncorrected: latencySummarySchema,
  /** Send lateness (actual − intended send time) of the writes sent for this phase. */
  lateness: latencySummarySchema,
  /** Writes intended in this phase that were not acknowledged. */
  failed: count,
});

export const doneMessageSchema = z.object({
  v,
  type: z.literal('done'),
  dc: z.string(),
  /** The schedule's origin and the moment sending stopped (wall ms). */
  startMs: ms,
  sendEndMs: ms,
  totals: z.object({
    attempted: count,
    acked: count,
    failed: count,
    timedOut: count,
    overflow: count,
    retries: count,
    /** The failed writes by their last error's code (TIMEOUT, DEADLINE, ETCD_…, OVERFLOW). */
    failedCodes: z.record(z.string(), count).optional(),
  }),
  /** By the phase in effect at each write's intended send time. */
  phases: z.record(z.string(), phaseSummarySchema),
  /** Send lateness, actual − intended send time, of every sent write. */
  lateness: latencySummarySchema,
  targetRate: nonNegative,
  /** acked / the sending window (startMs .. sendEndMs), writes/s. */
  achievedRate: nonNegative,
  /** attempted / the sending window, writes/s: how well the schedule was kept. */
  sentRate: nonNegative,
  /** Phase → wall ms of the first acknowledgement of a write intended in that phase. */
  firstAckAfter: z.record(z.string(), ms),
  /**
   * zxid epoch → wall ms of the first acknowledgement of a write committed in that epoch: the
   * client's view of a new leader's first commit (all a target without such an event gives).
   */
  firstAckByEpoch: z.record(z.string(), ms).default({}),
  /**
   * Phase → the longest time between two consecutive acknowledgements (of any writes) whose later
   * one came in that phase, by completion time, with its two ends (wall ms): for the fault's phase,
   * the longest the clients went without hearing anything.
   */
  longestAckGap: z.record(z.string(), z.object({ ms: nonNegative, fromMs: ms, toMs: ms })).default({}),
  /** Every acknowledged write: [path, zxid epoch, zxid counter], in acknowledgement order. */
  acked: z.array(z.tuple([z.string(), count, count])),
  /** The client id the writes carried (the nodes' trace events name it). */
  clientId: z.string().default(''),
  /**
   * The traced writes (requestId a multiple of TRACE_EVERY) acknowledged at the first attempt:
   * [requestId, phase, intended, sent, reply received], monotonic ms (CLOCK_MONOTONIC, which the
   * nodes' trace stamps share).
   */
  traces: z.array(z.tuple([count, z.string(), z.number(), z.number(), z.number()])).default([]),
  /**
   * With reads (LoadSpec.reads), every operation: [id, f (r, w), key, invoked, completed or
   * null (in doubt), value, session], wall ms; a write's value is its tag, a read's what it
   * returned (null: nothing written there); a read's session names the connection it went over.
   */
  history: z
    .array(
      z.union([
        z.tuple([z.string(), z.enum(['r', 'w']), z.string(), ms, ms.nullable(), z.string().nullable()]),
        z.tuple([
          z.string(),
          z.enum(['r', 'w']),
          z.string(),
          ms,
          ms.nullable(),
          z.string().nullable(),
          z.string(),
        ]),
      ]),
    )
    .optional(),
});

export const errorMessageSchema = z.object({ v, type: z.literal('error'), message: z.string() });

/**
 * The answer to `clock`: the agent's clocks when the question was read: wall (its instants) and
 * monotonic (its traces), ms.
 */
export const clockAnswerSchema = z.object({ v, type: z.literal('clock'), id: count, wallMs: ms, monoMs: ms });

export const agentMessageSchema = z.discriminatedUnion('type', [
  readyMessageSchema,
  startedMessageSchema,
  intervalMessageSchema,
  doneMessageSchema,
  errorMessageSchema,
  clockAnswerSchema,
]);

export type Endpoint = z.infer<typeof endpointSchema>;
export type StartMessage = z.infer<typeof startMessageSchema>;
export type PhaseMessage = z.infer<typeof phaseMessageSchema>;
export type StopMessage = z.infer<typeof stopMessageSchema>;
export type ClockQuestion = z.infer<typeof clockQuestionSchema>;
export type ClockAnswer = z.infer<typeof clockAnswerSchema>;
export type HarnessMessage = z.infer<typeof harnessMessageSchema>;
export type LatencySummary = z.infer<typeof latencySummarySchema>;
export type PhaseSummary = z.infer<typeof phaseSummarySchema>;
export type ReadyMessage = z.infer<typeof readyMessageSchema>;
export type StartedMessage = z.infer<typeof startedMessageSchema>;
export type IntervalMessage = z.infer<typeof intervalMessageSchema>;
export type DoneMessage = z.infer<typeof doneMessageSchema>;
/** One traced write as the agent reports it: [requestId, phase, intended, sent, reply received]. */
export type AgentTrace = DoneMessage['traces'][number];
export type ErrorMessage = z.infer<typeof errorMessageSchema>;
export type AgentMessage = z.infer<typeof agentMessageSchema>;

/** What a `start` message asks for, without the envelope: also the in-process agent's options. */
export type LoadSpec = Omit<StartMessage, 'v' | 'type'>;

/** Parses a message from the harness; throws an Error saying what is wrong. */
export function parseHarnessMessage(raw: unknown): HarnessMessage {
  return parseWith(harnessMessageSchema, raw, 'harness');
}

/** Parses a message from an agent; throws an Error saying what is wrong. */
export function parseAgentMessage(raw: unknown): AgentMessage {
  return parseWith(agentMessageSchema, raw, 'agent');
}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown, from: string): T {
  const version = (raw as { v?: unknown } | null)?.v;
  if (version !== AGENT_PROTOCOL_VERSION) {
    throw new Error(
      `${from} message of protocol version ${JSON.stringify(version)}; this build speaks ${AGENT_PROTOCOL_VERSION}`,
    );
  }
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  const type = (raw as { type?: unknown }).type;
  throw new Error(
    `bad ${from} message (type ${JSON.stringify(type)}): ${where}${issue?.message ?? 'invalid'}`,
  );
}

/** Builders that fill in the envelope, so senders cannot forget the version. */
export const msg = {
  start: (spec: LoadSpec): StartMessage => ({ v: AGENT_PROTOCOL_VERSION, type: 'start', ...spec }),
  phase: (name: string, atMs?: number): PhaseMessage => ({
    v: AGENT_PROTOCOL_VERSION,
    type: 'phase',
    name,
    ...(atMs === undefined ? {} : { atMs }),
  }),
  stop: (): StopMessage => ({ v: AGENT_PROTOCOL_VERSION, type: 'stop' }),
  clockQuestion: (id: number): ClockQuestion => ({ v: AGENT_PROTOCOL_VERSION, type: 'clock', id }),
  clockAnswer: (id: number, wallMs: number, monoMs: number): ClockAnswer => ({
    v: AGENT_PROTOCOL_VERSION,
    type: 'clock',
    id,
    wallMs,
    monoMs,
  }),
  ready: (pid: number): ReadyMessage => ({ v: AGENT_PROTOCOL_VERSION, type: 'ready', pid }),
  error: (message: string): ErrorMessage => ({ v: AGENT_PROTOCOL_VERSION, type: 'error', message }),
};

/**
 * The phase the harness starts when a fault takes the serving leader out. A write in flight at that
 * moment waits for the next leader (hundreds of ms): it belongs to the outage, not to the steady
 * state of the phase it was sent in, whose mean a few such writes would move by a millisecond.
 */
export const FAULT_PHASE = 'gap';
/**
 * The phase the harness starts at the first fault that leaves the leader serving (a follower
 * killed, a link changed), until one takes the leader out: "before" is the steady state the
 * model describes, with every member up and every link as configured.
 */
export const DEGRADED_PHASE = 'degraded';
/** Phases a fault begins: a write still in flight when one begins counts in it. */
export const FAULT_PHASES: ReadonlySet<string> = new Set([FAULT_PHASE, DEGRADED_PHASE]);
