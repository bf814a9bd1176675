// src/load/: the write load: the open-loop load agent of a data center (`pole-bench agent`), its protocol
// with the harness (IPC or stdio), its writers, retries and histograms, and the preload.
//
// The load agent of one data center: an open-loop writer. Usable in-process (tests, the harness)
// as well as behind `pole-bench agent`, which only relays its messages over IPC.
//
// Every intended send time of the schedule becomes one write of a fresh path
// (`${pathPrefix}/${dc}/${seq}`, requestId = seq) to a server of the data center picked uniformly at
// random. The sender never waits for replies: a timer loop sends every write whose time has come,
// in a burst when it woke late, and records how late each one went out. A write's latency is
// measured from its intended send time (corrected for coordinated omission) and, beside it, from
// its actual send time (uncorrected). Each completed write is recorded in the phase that was in
// effect at its intended send time (or in the fault's window if one began while it was in flight:
// see phaseOf), and in the current interval (by completion time).
import type { Histogram } from 'hdr-histogram-js';
import { Random } from '../util/random.js';
import { EndpointPool } from './retrying-writer.js';
import { WriteFlights, type Flight, type FlightOutcome } from './write-flights.js';
import { AckBook } from './ack-book.js';
import { OpenLoopSchedule } from './open-loop-schedule.js';
import { AGENT_PROTOCOL_VERSION, FAULT_PHASES } from './agent-protocol.js';
import type { AgentMessage, AgentTrace, DoneMessage, LoadSpec, PhaseSummary } from './agent-protocol.js';
import { encodeHistogram, newHistogram, recordMs, summarizeMs } from './latency-recorders.js';
import { WakeClock, hrMs } from './wake-clock.js';
import { isTraced } from '../node/trace/write-tracer.js';
import { wallNowMs } from '../util/wall-clock.js';
import type { ClientProtocol, ConnectWriteClient } from './write-client.js';

export const DEFAULT_MAX_IN_FLIGHT = 10_000;
export const DEFAULT_INTERVAL_MS = 1_000;
export type WakeMode = 'thread' | 'timeout';

export interface LoadAgentOptions {
  /**
   * How the send loop sleeps until the next intended send time (default: the spec's `wake`, else
   * wakeModeFor(rate)):
   * 'thread' wakes it from a clock thread to ~0.1 ms (wake-clock.ts); 'timeout' uses setTimeout,
   * which wakes up to ~1.1 ms late but costs less. 'thread' falls back to 'timeout' if the
   * thread cannot start.
   */
  readonly wake?: WakeMode;
  /** The nice value the process runs at, for the `started` message (the agent does not set it). */
  readonly nice?: number | null;
}

/** The write client for the protocol the agent is told to speak (targets/clients.ts). */
export type WriteClientFor = (protocol: ClientProtocol) => ConnectWriteClient;

/**
 * The clock thread costs two thread switches and a message per wake-up. Measured with
 * `pole-bench bench load` (3 fsyncing nodes and the agent on the 2-core machine, agent at nice
 * -10/-19): at 1,000 writes/s the thread gave a send-lateness p99 of 0.7-1.2 ms against 1.1-1.4 ms
 * with setTimeout; at 5,000 writes/s, where the nodes keep the machine ~85 % busy, the CPU the
 * thread takes (30 % of a core against 15 %) made the p99 worse (2.4-3.1 ms against 1.8-2.5 ms)
 * than setTimeout's batches of a millisecond. So: the thread while writes are at least this far
 * apart on average.
 */
export const THREAD_WAKE_MIN_GAP_MS = 0.5;

export function wakeModeFor(rate: number): WakeMode {
  return 1000 / rate >= THREAD_WAKE_MIN_GAP_MS ? 'thread' : 'timeout';
}

/** Monotonic ms, the agent's clock, and the offset that turns it into wall-clock ms. */
const mono = hrMs;
const WALL_OFFSET = wallNowMs() - hrMs();
const wall = (m: number): number => WALL_OFFSET + m;

interface PhaseRecorders {
  readonly corrected: Histogram;
  readonly uncorrected: Histogram;
  readonly lateness: Histogram;
  failed: number;
}

export class LoadAgent {
  private readonly pool: EndpointPool;
  private readonly clientId: string;
  private readonly maxInFlight: number;
  private readonly intervalMs: number;
  private readonly wakeMode: WakeMode;
  private clock: WakeClock | undefined;
  private readonly pick: Random;
  private readonly bytes: Uint8Array;
  private readonly byteRandom: Random;

  /** Phase transitions in time order (monotonic ms); the first one is at -Infinity. */
  private readonly phases: Array<{ at: number; name: string }>;
  private readonly byPhase = new Map<string, PhaseRecorders>();
  private readonly lateness = newHistogram();
  private readonly interval = {
    corrected: newHistogram(),
    lateness: newHistogram(),
    sent: 0,
    acked: 0,
    failed: 0,
    timedOut: 0,
  };
  private readonly totals = { attempted: 0, acked: 0, failed: 0, timedOut: 0, overflow: 0, retries: 0 };
  /** Failed writes by their last error's code: what failed, and why, in result.json. */
  private readonly failedCodes: Record<string, number> = {};
  private readonly firstAck = new Map<string, number>();
  private readonly firstAckByEpoch = new Map<number, number>();
  /** Monotonic ms of the latest acknowledgement, and the longest silence ending in each phase. */
  private lastAckAt: number | undefined;
  private readonly longestAckGap = new Map<string, { ms: number; fromMs: number; toMs: number }>();
  private readonly acks = new AckBook();
  /** The traced writes (latency anatomy) acknowledged at the first attempt. */
  private readonly traces: AgentTrace[] = [];
  private readonly flights: WriteFlights;
  /** With reads: every operation, as `done.history` carries it. */
  private readonly history: HistoryRow[] | undefined;
  private readonly ops: Random;
  private readonly reads: number;
  private readonly readsInFlight = new Set<Promise<void>>();
  private readSeq = 0;

  private schedule: OpenLoopSchedule | undefined;
  private originMs = 0;
  private endMs = Infinity;
  private sendEndMs: number | undefined;
  private seq = 0;
  private stopRequested = false;
  private sendTimer: NodeJS.Timeout | undefined;
  private intervalTimer: NodeJS.Timeout | undefined;
  private intervalIndex = 0;
  private intervalStartMs = 0;
  /** Resolves when sending has ended (duration reached or stop()). */
  private sendingEnded!: () => void;
  private readonly sendingDone = new Promise<void>((resolve) => (this.sendingEnded = resolve));
  private drained: (() => void) | undefined;

  constructor(
    readonly spec: LoadSpec,
    private readonly emit: (m: AgentMessage) => void,
    clientFor: WriteClientFor,
    private readonly o: LoadAgentOptions = {},
  ) {
    this.pool = new EndpointPool(
      spec.endpoints,
      spec.requestTimeoutMs,
      undefined,
      clientFor(spec.protocol ?? 'pole'),
    );
    this.clientId = `${spec.clientIdPrefix}-${spec.dc}`;
    this.maxInFlight = spec.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.intervalMs = spec.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.wakeMode = o.wake ?? spec.wake ?? wakeModeFor(spec.rate);
    // Independent streams from one seed: the schedule's gaps, the server picks, the payloads.
    this.pick = new Random(spec.seed ^ 0x5bd1e995);
    this.byteRandom = new Random(spec.seed ^ 0x27d4eb2f);
    this.bytes = new Uint8Array(spec.size + 4096);
    for (let i = 0; i < this.bytes.length; i++) this.bytes[i] = Math.floor(this.byteRandom.next() * 256);
    this.phases = [{ at: -Infinity, name: spec.phase ?? 'warmup' }];
    this.reads = spec.reads ?? 0;
    this.ops = new Random(spec.seed ^ 0x1b873593);
    if (this.reads > 0 && spec.keys === undefined)
      throw new Error('reads need keys: the keys written over and over');
    if (
      this.reads > 0 &&
      `${writeTag(`${spec.clientIdPrefix}-${spec.dc}`, Number.MAX_SAFE_INTEGER)}\n`.length > spec.size
    )
      throw new Error(`${spec.size} bytes per write cannot carry a write's tag, which reads return`);
    this.history = this.reads > 0 ? [] : undefined;
    this.flights = new WriteFlights({
      pool: this.pool,
      clientId: this.clientId,
      pathOf: this.pathOf,
      dataOf: (f) =>
        this.history ? this.taggedData(f) : this.bytes.subarray(f.dataOffset, f.dataOffset + spec.size),
      onSettled: (f, outcome, now) => this.complete(f, outcome, now),
      now: mono,
    });
  }

  private readonly pathOf = (seq: number): string =>
    `${this.spec.pathPrefix}/${this.spec.dc}/${this.spec.keys !== undefined ? seq % this.spec.keys : seq}`;

  /**
   * A write's bytes where reads read them: its tag (the value a read of it returns: unique in the
   * run) and a newline, then the random bytes.
   */
  private taggedData(f: Flight): Uint8Array {
    const data = Buffer.allocUnsafe(this.spec.size);
    const n = data.write(`${writeTag(this.clientId, f.seq)}\n`, 'latin1');
    data.set(this.bytes.subarray(f.dataOffset, f.dataOffset + this.spec.size - n), n);
    return data;
  }

  /** Writes in flight right now. */
  get writesInFlight(): number {
    return this.flights.size;
  }

  /** The phase in effect now. */
  get phase(): string {
    return this.phaseAt(mono());
  }

  /**
   * Runs the load: connects, emits `started`, sends on schedule until durationMs has passed or
   * stop() is called, waits for the writes in flight (each ends by its deadline), emits the last
   * `interval` and `done`, closes the connections and returns the `done` message.
   */
  async run(): Promise<DoneMessage> {
    const s = this.spec;
    // Dial every server first so the first writes do not pay for connection set-up; a server that
    // cannot be reached now is dialled again by the writes that pick it.
    await Promise.allSettled(s.endpoints.map((_, i) => this.pool.client(i)));
    if (this.wakeMode === 'thread') this.clock = await WakeClock.start().catch(() => undefined);
    const now = mono();
    const at = s.startAtMs === undefined ? now : Math.max(now, s.startAtMs - WALL_OFFSET);
    this.originMs = at;
    this.endMs = s.durationMs > 0 ? at + s.durationMs : Infinity;
    this.intervalStartMs = at;
    this.schedule = new OpenLoopSchedule({ rate: s.rate, arrival: s.arrival, startMs: at, seed: s.seed });
    this.emit({
      v: AGENT_PROTOCOL_VERSION,
      type: 'started',
      dc: s.dc,
      startMs: wall(at),
      wake: this.clock ? 'thread' : 'timeout',
      nice: this.o.nice ?? null,
    });
    if (this.stopRequested) this.endSending(now);
    else {
      this.armInterval();
      this.armSend();
    }
    await this.sendingDone;
    await this.drain();
    this.flights.close();
    clearTimeout(this.intervalTimer);
    this.flushInterval();
    const done = this.doneMessage();
    this.emit(done);
    await Promise.all([this.pool.close(), this.clock?.close()]);
    this.destroyHistograms();
    return done;
  }

  /** Switches the recording phase, from now or from a wall-clock instant. */
  setPhase(name: string, atWallMs?: number): void {
    const at = atWallMs === undefined ? mono() : atWallMs - WALL_OFFSET;
    const entry = { at, name };
    // Kept sorted by time: a phase given for an instant in the past slots in where it belongs.
    let i = this.phases.length;
    while (i > 0 && this.phases[i - 1]!.at > at) i--;
    this.phases.splice(i, 0, entry);
  }

  /** Stops sending now; run() then drains and finishes. */
  stop(): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    if (this.schedule && this.sendEndMs === undefined) this.endSending(mono());
  }

  // --- sending -----------------------------------------------------------------------------------

  private readonly pump = (): void => {
    clearTimeout(this.sendTimer);
    this.sendTimer = undefined;
    const schedule = this.schedule!;
    let now = mono();
    for (;;) {
      const next = schedule.peek();
      if (next >= this.endMs) {
        if (now >= this.endMs) return this.endSending(this.endMs);
        break;
      }
      if (next > now) break;
      this.issue(schedule.take(), now);
      now = mono();
    }
    this.armSend();
  };

  private armSend(): void {
    const target = Math.min(this.schedule!.peek(), this.endMs);
    if (this.clock) this.clock.wakeAt(target, this.pump);
    else this.sendTimer = setTimeout(this.pump, Math.max(0, target - mono()));
  }

  private endSending(at: number): void {
    if (this.sendEndMs !== undefined) return;
    this.sendEndMs = at;
    clearTimeout(this.sendTimer);
    this.sendTimer = undefined;
    this.clock?.cancel();
    this.sendingEnded();
  }

  private issue(intended: number, now: number): void {
    if (this.reads > 0 && this.ops.chance(this.reads)) return this.issueRead(now);
    this.seq += 1;
    this.totals.attempted += 1;
    if (this.flights.size >= this.maxInFlight) {
      this.totals.failed += 1;
      this.failedCodes.OVERFLOW = (this.failedCodes.OVERFLOW ?? 0) + 1;
      this.totals.overflow += 1;
      this.interval.failed += 1;
      this.recordersOf(this.phaseAt(intended)).failed += 1;
      return;
    }
    const late = now - intended;
    recordMs(this.lateness, late);
    recordMs(this.interval.lateness, late);
    recordMs(this.recordersOf(this.phaseAt(intended)).lateness, late);
    this.interval.sent += 1;
    this.flights.launch(
      this.seq,
      intended,
      now,
      intended + this.spec.writeDeadlineMs,
      this.pool.route(Math.floor(this.pick.next() * this.pool.size)),
      Math.floor(this.byteRandom.next() * 4096),
    );
  }

  /**
   * A read of a key of a data center read from, on a server picked as a write's is: into the
   * history only (the latency figures are the writes'). One attempt; one that fails or outlives
   * the request timeout is in doubt, which for a read constrains nothing.
   */
  private issueRead(now: number): void {
    const s = this.spec;
    const from = s.readFrom && s.readFrom.length > 0 ? s.readFrom : [s.dc];
    const dc = from[Math.floor(this.ops.next() * from.length)]!;
    const key = `${s.pathPrefix}/${dc}/${Math.floor(this.ops.next() * s.keys!)}`;
    const id = `${s.dc}-r${++this.readSeq}`;
    const server = this.pool.route(Math.floor(this.pick.next() * this.pool.size));
    const invoked = wall(now);
    let timer: NodeJS.Timeout | undefined;
    const client = this.pool.client(server);
    // The connection the read goes over: what a session model holds the reads of to their order.
    const session = `${s.dc}-${server}.${this.pool.connectionOf(server)}`;
    const done = Promise.race([
      client.then((c) => c.read(key, s.readMode ?? 'default')),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('TIMEOUT')), s.requestTimeoutMs);
      }),
    ])
      .then(
        (r) => {
          this.history!.push([
            id,
            'r',
            key,
            invoked,
            wall(mono()),
            r === undefined ? null : tagOf(r.data),
            session,
          ]);
        },
        () => {
          this.history!.push([id, 'r', key, invoked, null, null, session]);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.readsInFlight.delete(done);
      });
    this.readsInFlight.add(done);
  }

  private complete(f: Flight, o: FlightOutcome, now: number): void {
    this.totals.retries += f.attempts - 1;
    this.history?.push([
      `${this.spec.dc}-w${f.seq}`,
      'w',
      this.pathOf(f.seq),
      wall(f.sentAt),
      o.ok ? wall(now) : null,
      writeTag(this.clientId, f.seq),
    ]);
    const phase = this.phaseOf(f.intended, now);
    const rec = this.recordersOf(phase);
    if (o.ok) {
      this.totals.acked += 1;
      this.interval.acked += 1;
      recordMs(rec.corrected, now - f.intended);
      recordMs(rec.uncorrected, now - f.sentAt);
      recordMs(this.interval.corrected, now - f.intended);
      this.acks.add(f.seq, o.zxid.epoch, o.zxid.counter);
      // The nodes stamp the same writes (by requestId = seq) on the same monotonic clock.
      if (f.attempts === 1 && isTraced(f.seq, this.spec.traceEvery))
        this.traces.push([f.seq, phase, round3(f.intended), round3(f.sentAt), round3(now)]);
      if (!this.firstAck.has(phase)) this.firstAck.set(phase, wall(now));
      if (!this.firstAckByEpoch.has(o.zxid.epoch)) this.firstAckByEpoch.set(o.zxid.epoch, wall(now));
      this.noteAckGap(now);
    } else {
      this.totals.failed += 1;
      this.failedCodes[o.code] = (this.failedCodes[o.code] ?? 0) + 1;
      this.interval.failed += 1;
      rec.failed += 1;
      if (o.timedOut) {
        this.totals.timedOut += 1;
        this.interval.timedOut += 1;
      }
    }
    if (this.flights.size === 0) this.drained?.();
    // Replies come in bursts (a group commit, a server's pause), and a burst is handled in one go,
    // with no timer running in between: send whatever fell due meanwhile right here.
    if (this.sendEndMs === undefined && this.schedule !== undefined && this.schedule.peek() <= now)
      this.pump();
  }

  /**
   * The silence this acknowledgement ends, filed under the phase in effect now (not the write's
   * own): a silence that began before a fault and ended after it is the fault's, whichever write
   * broke it.
   */
  private noteAckGap(now: number): void {
    const last = this.lastAckAt;
    this.lastAckAt = now;
    if (last === undefined) return;
    const phase = this.phaseAt(now);
    const gap = now - last;
    if (gap > (this.longestAckGap.get(phase)?.ms ?? -1))
      this.longestAckGap.set(phase, { ms: round3(gap), fromMs: wall(last), toMs: wall(now) });
  }

  /** Waits for the writes in flight; each ends by its deadline, and this is bounded beyond it. */
  private async drain(): Promise<void> {
    // Each read ends by its own timeout.
    await Promise.allSettled([...this.readsInFlight]);
    if (this.flights.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const allDone = new Promise<void>((resolve) => (this.drained = resolve));
    const gaveUp = new Promise<void>(
      (resolve) => (timer = setTimeout(resolve, this.spec.writeDeadlineMs + 2_000)),
    );
    await Promise.race([allDone, gaveUp]);
    clearTimeout(timer);
    // Should find nothing (every write has its own deadline), but the books must balance anyway.
    this.flights.abandonAll();
  }

  // --- recording -----------------------------------------------------------------------------------

  private phaseAt(t: number): string {
    for (let i = this.phases.length - 1; i >= 0; i--) {
      const p = this.phases[i]!;
      if (p.at <= t) return p.name;
    }
    return this.phases[0]!.name;
  }

  /** The phase of `intended`, unless a fault's phase began after it and by `done`: then the last such. */
  private phaseOf(intended: number, done: number): string {
    let phase = this.phaseAt(intended);
    for (const p of this.phases)
      if (FAULT_PHASES.has(p.name) && p.at > intended && p.at <= done) phase = p.name;
    return phase;
  }

  private recordersOf(phase: string): PhaseRecorders {
    let r = this.byPhase.get(phase);
    if (!r) {
      r = { corrected: newHistogram(), uncorrected: newHistogram(), lateness: newHistogram(), failed: 0 };
      this.byPhase.set(phase, r);
    }
    return r;
  }

  private armInterval(): void {
    const due = this.originMs + (this.intervalIndex + 1) * this.intervalMs;
    const fire = (): void => {
      // Node's timers count whole ms on a coarser clock and can fire a hair early: an interval
      // must not end before its boundary (a phase switched at the boundary would look late).
      const left = due - mono();
      if (left > 0) {
        this.intervalTimer = setTimeout(fire, Math.max(1, Math.ceil(left)));
        return;
      }
      this.flushInterval();
      this.armInterval();
    };
    this.intervalTimer = setTimeout(fire, Math.max(1, Math.ceil(due - mono())));
  }

  private flushInterval(): void {
    const now = mono();
    const iv = this.interval;
    this.emit({
      v: AGENT_PROTOCOL_VERSION,
      type: 'interval',
      dc: this.spec.dc,
      index: this.intervalIndex,
      startMs: wall(this.intervalStartMs),
      endMs: wall(now),
      phase: this.phaseAt(this.intervalStartMs),
      histogram: encodeHistogram(iv.corrected),
      sent: iv.sent,
      acked: iv.acked,
      failed: iv.failed,
      timedOut: iv.timedOut,
      latenessP99Ms: iv.lateness.totalCount === 0 ? 0 : iv.lateness.getValueAtPercentile(99) / 1000,
    });
    this.intervalIndex += 1;
    this.intervalStartMs = now;
    iv.corrected.reset();
    iv.lateness.reset();
    iv.sent = iv.acked = iv.failed = iv.timedOut = 0;
  }

  private doneMessage(): DoneMessage {
    const sendEnd = this.sendEndMs ?? mono();
    const windowS = Math.max(sendEnd - this.originMs, 1) / 1000;
    const phases: Record<string, PhaseSummary> = {};
    for (const [name, r] of this.byPhase) {
      phases[name] = {
        corrected: summarizeMs(r.corrected),
        uncorrected: summarizeMs(r.uncorrected),
        lateness: summarizeMs(r.lateness),
        failed: r.failed,
      };
    }
    return {
      v: AGENT_PROTOCOL_VERSION,
      type: 'done',
      dc: this.spec.dc,
      startMs: wall(this.originMs),
      sendEndMs: wall(sendEnd),
      totals: { ...this.totals, failedCodes: { ...this.failedCodes } },
      phases,
      lateness: summarizeMs(this.lateness),
      targetRate: this.spec.rate,
      achievedRate: round2(this.totals.acked / windowS),
      sentRate: round2(this.totals.attempted / windowS),
      firstAckAfter: Object.fromEntries(this.firstAck),
      firstAckByEpoch: Object.fromEntries([...this.firstAckByEpoch].map(([e, t]) => [String(e), t])),
      longestAckGap: Object.fromEntries(this.longestAckGap),
      acked: this.acks.toList(this.pathOf),
      clientId: this.clientId,
      traces: this.traces,
      ...(this.history ? { history: this.history } : {}),
    };
  }

  private destroyHistograms(): void {
    for (const r of this.byPhase.values()) {
      r.corrected.destroy();
      r.uncorrected.destroy();
      r.lateness.destroy();
    }
    this.lateness.destroy();
    this.interval.corrected.destroy();
    this.interval.lateness.destroy();
  }
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** One row of `done.history` (agent-protocol.ts). */
type HistoryRow =
  | [string, 'r' | 'w', string, number, number | null, string | null]
  | [string, 'r' | 'w', string, number, number | null, string | null, string];

/** A write's tag: what a read of it returns. */
export function writeTag(clientId: string, seq: number): string {
  return `${clientId}:${seq}`;
}

const TAG = /^[A-Za-z0-9._-]+:\d+$/;

/**
 * The value a read returned: the tag its bytes begin with; nothing (an empty slot made before the
 * load) is null; bytes with no tag are named as such, a value no write of the history wrote.
 */
export function tagOf(data: Uint8Array): string | null {
  if (data.length === 0) return null;
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.length, 96)).toString('latin1');
  const end = head.indexOf('\n');
  const tag = end < 0 ? '' : head.slice(0, end);
  return TAG.test(tag) ? tag : `untagged:${Buffer.from(data.subarray(0, 8)).toString('hex')}`;
}
