// The relay's worker thread: route listeners, per-direction delay queues and one release scheduler
// for all of them. It runs off the harness's event loop so that a busy harness does not delay
// releases, and it talks to the main thread (delay-relay.ts) by request/reply messages.
//
// Timing. Node's timers have 1 ms granularity and fire up to ~1 ms late, too coarse for a
// 0.5 ms bar. So the scheduler keeps no timers: a nested "clock" thread (this same file, run
// with role 'clock') blocks in Atomics.wait with a sub-ms timeout, which the kernel honours to
// ~0.1 ms, until a little before the earliest due release, then writes a tick into a loopback
// TCP connection this thread reads. The tick wakes this thread's event loop at once; a release
// still more than EARLY_RELEASE_MS away is slept out (a futex wait), and one within it goes at
// once, a little early, instead of being spun out. Neither
// thread burns CPU while waiting, and this thread never blocks, so arrivals are timestamped
// when they come in (a blocking precise wait here would stamp them late). Two more corrections,
// both measured, not assumed: how early the clock must fire (the "lead") adapts to the wake-ups
// it observes; and an idle thread sees a socket read one wake-up late (0.1-0.3 ms on the VM),
// which is taken off the arrival time, the wake-up being measured on the clock's ticks. The ticks
// take the path the relayed bytes take (a TCP write on loopback, read by this thread's event
// loop) because that path is what needs correcting: on the 2-core VM a tick posted as a worker
// message was seen in 0.12 ms while a relayed write was seen in 0.28 ms (median), and the
// difference, uncorrected, put 0.3 ms on every relayed round trip.
// Both threads ask for a raised priority (nice), since they stand in for the network.
//
// Order. Each direction of a connection is a FIFO whose release times never decrease: a chunk's
// release time is max(previous release, arrival + sampled delay). The scheduler holds one heap
// entry per non-empty direction, keyed by its head's release time. A side's end (FIN) and its
// reset go in that FIFO too, behind the bytes it sent before them, as on a network.
import { writeSync } from 'node:fs';
import { setPriority } from 'node:os';
import { createServer, connect, isIP, type Server, type Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import { ownThreadCpuMs, ownThreadId, threadCpuMs } from '../../util/thread-cpu.js';
import { Random } from '../../util/random.js';
import { abortSocket } from './abort-socket.js';
import { createDelaySampler, type LinkDelay } from './delay-distribution.js';
import type {
  DirectionStats,
  RelayReply,
  RelayRequest,
  RelayRoute,
  RelayStats,
  RelayWorkerInit,
  RouteDelayChange,
  RouteDirection,
  RouteStats,
} from './relay-protocol.js';

interface ClockInit {
  readonly role: 'clock';
  readonly sab: SharedArrayBuffer;
  readonly nice: number | null;
}

/** Pause between two connects to a target that refused (RelayRoute.retryConnectMs). */
const CONNECT_RETRY_MS = 50;

/** A direction pauses its reading socket above this many bytes held (queued + unsent). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
const LOW_WATER_BYTES = HIGH_WATER_BYTES / 2;
/**
 * The clock posts its wake-up `lead` ms before the due time, to cover the futex timeout's
 * overshoot and the time the message takes to wake this thread (together ~0.1-0.2 ms on the
 * 2-core VM, more after a long idle). The lead tracks the median: one step later after a late
 * wake-up, one step earlier after one more than WAKE_EARLY_MS early, so a wake-up delayed by
 * a descheduled thread (ms, on a busy machine) moves it no more than a punctual one. What is left
 * after an early wake-up is slept out down to EARLY_RELEASE_MS, never spun.
 */
const INITIAL_LEAD_MS = 0.25;
const MIN_LEAD_MS = 0.02;
const MAX_LEAD_MS = 0.5;
const WAKE_EARLY_MS = 0.02;
/**
 * A release due within this is made at once: sleeping out a few tens of µs costs a timed wake-up
 * (its own ~0.1 ms of CPU on the 2-core VM) and spinning them out cost the relay thread ~18 µs of
 * CPU per wake-up (bench relay, 2026-11-29: 133 ms over 7,480 wake-ups), while a release this much
 * early is far inside the accuracy bar (max(0.5 ms, 3 %) of a round trip). The relay's lateness
 * figures count it, as a negative lateness.
 */
const EARLY_RELEASE_MS = 0.03;
const LEAD_STEP_MS = 0.005;
/** A thread with nothing to do for this long is asleep in epoll: its next event pays a wake-up. */
const IDLE_GAP_MS = 1;
const INITIAL_WAKE_LATENCY_MS = 0.1;
const MAX_WAKE_LATENCY_MS = 1;
/** Never wait longer than this for one wake-up; a wake-up earlier than that re-arms the clock. */
const MAX_WAIT_MS = 0.5;
/** The shortest sleep asked of the kernel (a shorter one ends late by the timer's slack anyway). */
const MIN_NAP_MS = 0.01;
const INITIAL_NAP_OVERSHOOT_MS = 0.06;
const MAX_NAP_OVERSHOOT_MS = 0.3;

// The shared buffer between this thread and the clock: f64 [0] due time (ms on the process-wide
// monotonic clock, Infinity = nothing), f64 [1] lead, f64 [2] the release after the due one (the
// clock sleeps toward it once it has ticked the due one; Infinity = none); i32 at byte 24: [0]
// sequence (bumped on every re-arm, the clock ticks each value's due time once and its next one
// at most once), [1] stop flag, [2] the file descriptor the clock writes its ticks into (-1: none
// yet, post them as messages), [3] how many times the clock has woken (each return from a wait:
// its cost at rest is its wake-ups), [4] the last sequence whose next release the clock ticked
// too (it then sleeps until armed again, and must be woken).
const SAB_BYTES = 48;
const F64_SLOTS = 3;
const I32_AT = 24;
const I32_SLOTS = 5;
const SEQ = 0;
const STOP = 1;
const TICK_FD = 2;
const CLOCK_WAKES = 3;
const TICKED_NEXT = 4;
/** A tick on the socket: f64 sequence, f64 posted-at. */
const TICK_BYTES = 16;

/** ms on CLOCK_MONOTONIC, the same in every thread (performance.now() has a per-thread origin). */
function nowMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Clock thread: a synchronous loop, nothing else runs on it.

function runClock(sab: SharedArrayBuffer, nice: number | null): void {
  const port = parentPort;
  if (port === null) throw new Error('the relay clock must run in a worker');
  const f64 = new Float64Array(sab, 0, F64_SLOTS);
  const ctl = new Int32Array(sab, I32_AT, I32_SLOTS);
  const tickBuf = Buffer.alloc(TICK_BYTES);
  const tid = ownThreadId();
  const hello: ClockHello = { tid, niceSet: nice !== null && setThreadNice(tid, nice) };
  port.postMessage(hello);
  let fired = -1;
  let firedNext = -1;
  const sleep = (seq: number, ms?: number): void => {
    Atomics.wait(ctl, SEQ, seq, ms);
    Atomics.add(ctl, CLOCK_WAKES, 1);
  };
  while (Atomics.load(ctl, STOP) === 0) {
    const seq = Atomics.load(ctl, SEQ);
    if (seq === fired) {
      // Ticked, not armed again yet: the relay is releasing. Sleep toward the release after the
      // ticked one, which the relay then arms without waking this thread (a wake-up per tick
      // saved); tick it from here if the relay has armed nothing by then. Past that, or with no
      // next release, sleep until armed: the relay wakes a clock that has said so (TICKED_NEXT).
      if (firedNext === seq) {
        sleep(seq);
        continue;
      }
      const next = f64[2]!;
      const wait = next === Infinity ? Infinity : next - f64[1]! - nowMs();
      if (wait > 0 && wait !== Infinity) {
        sleep(seq, wait);
        continue;
      }
      firedNext = seq;
      Atomics.store(ctl, TICKED_NEXT, seq);
      if (wait === Infinity) continue;
    } else {
      const due = f64[0]!;
      if (due === Infinity) {
        fired = seq;
        firedNext = seq;
        Atomics.store(ctl, TICKED_NEXT, seq);
        continue;
      }
      const wait = due - f64[1]! - nowMs();
      if (wait > 0) {
        sleep(seq, wait);
        continue;
      }
      fired = seq;
    }
    const postedAt = nowMs();
    const fd = Atomics.load(ctl, TICK_FD);
    if (fd >= 0) {
      tickBuf.writeDoubleLE(seq, 0);
      tickBuf.writeDoubleLE(postedAt, 8);
      try {
        // The socket is non-blocking and the relay thread drains it on every wake-up: 16 bytes
        // always fit, but a failed write must not lose the tick, so it goes as a message.
        if (writeSync(fd, tickBuf) === TICK_BYTES) continue;
      } catch {
        // EAGAIN or a socket closing under us: fall through.
      }
    }
    const tick: ClockTick = [seq, postedAt];
    port.postMessage(tick);
  }
}

/** The arming it fires for, and when it was posted (to measure how long the message took). */
type ClockTick = [seq: number, postedAt: number];

interface ClockHello {
  readonly tid: number | null;
  readonly niceSet: boolean;
}

/**
 * Gives one thread (Linux: setpriority on a thread id affects that thread only) a nice value.
 * The relay stands in for the network, which does not queue behind the nodes for CPU; on the
 * 2-core machine, raised priority cut the mean release lateness under contention by about half.
 * Needs CAP_SYS_NICE to go below 0; false where refused.
 */
function setThreadNice(tid: number | null, nice: number): boolean {
  if (tid === null) return false;
  try {
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Relay thread.

const enum Kind {
  Data,
  End,
  Connect,
  /** The source side was reset: the other side is reset once what came before has gone out. */
  Reset,
}

interface Chunk {
  readonly at: number;
  readonly kind: Kind;
  readonly data: Buffer | null;
}

class DirectionCounters {
  bytes = 0;
  chunks = 0;
  latenessSumMs = 0;
  latenessMaxMs = 0;
  pauses = 0;

  snapshot(queuedBytes: number): DirectionStats {
    return {
      bytes: this.bytes,
      chunks: this.chunks,
      latenessMeanMs: this.chunks === 0 ? 0 : this.latenessSumMs / this.chunks,
      latenessMaxMs: this.latenessMaxMs,
      queuedBytes,
      pauses: this.pauses,
    };
  }
}

/** One direction of one connection: a FIFO of chunks with non-decreasing release times. */
class Direction {
  private readonly queue: Chunk[] = [];
  private head = 0;
  private lastAt = -Infinity;
  queuedBytes = 0;
  src: Socket | null = null;
  dst: Socket | null = null;
  dead = false;
  private paused = false;
  /** When its route was last restored after a cut: a chunk held by the cut is not late for it. */
  private cutEndedAt = -Infinity;

  constructor(
    private readonly scheduler: ReleaseScheduler,
    readonly counters: DirectionCounters,
    /** Replaced when the route's delay changes; chunks already queued keep their release times. */
    public sample: () => number,
    readonly conn: Connection,
  ) {}

  get empty(): boolean {
    return this.head === this.queue.length;
  }

  get headAt(): number {
    return this.queue[this.head]!.at;
  }

  /** The release time of the chunk after the head (Infinity if none). */
  get secondAt(): number {
    return this.head + 1 < this.queue.length ? this.queue[this.head + 1]!.at : Infinity;
  }

  /** Back in the scheduler's heap, if it holds chunks (after its route was restored). */
  reschedule(): void {
    this.cutEndedAt = nowMs();
    if (!this.dead && !this.empty) this.scheduler.enqueue(this, this.headAt);
  }

  push(kind: Kind.Data | Kind.End | Kind.Connect, data: Buffer | null): void {
    if (this.dead) return;
    const at = Math.max(this.lastAt, this.scheduler.arrivalTime() + this.sample());
    this.lastAt = at;
    const wasEmpty = this.empty;
    if (wasEmpty && !this.conn.blocked(this.counters)) {
      // Due already (no delay, or less than the wake-up taken off the arrival): out at once. Through
      // the scheduler it would wait for a round trip through the clock thread (two wake-ups, ~0.3 ms
      // on the 2-core VM) that a delayed chunk never pays, as the clock fires ahead of its due time.
      const now = nowMs();
      if (at <= now) {
        this.release({ at, kind, data }, now);
        return;
      }
    }
    this.queue.push({ at, kind, data });
    if (data !== null) this.queuedBytes += data.length;
    if (wasEmpty) this.scheduler.enqueue(this, at);
    if (!this.paused && this.src !== null && this.held() > HIGH_WATER_BYTES) {
      this.paused = true;
      this.counters.pauses++;
      this.src.pause();
    }
  }

  /**
   * The source side was reset: a Reset behind every chunk held, crossing the link with the
   * direction's delay like any segment (netem delays a RST as it delays data). Until 2026-11-28 it
   * took no delay of its own, so a killed member's peers across the link learned of its death at
   * once when its socket reset, but one delay later when it ended (FIN): on paper-2dc tud's p2 lost
   * its leader with cern's members and p1 16 ms after them. Apart from push(), so that the
   * per-chunk path stays as it was.
   */
  pushReset(): void {
    if (this.dead) return;
    const at = Math.max(this.lastAt, this.scheduler.arrivalTime() + this.sample());
    this.lastAt = at;
    const wasEmpty = this.empty;
    this.queue.push({ at, kind: Kind.Reset, data: null });
    if (wasEmpty) this.scheduler.enqueue(this, at);
  }

  /**
   * Releases every chunk due by `until` (now, or a little after: EARLY_RELEASE_MS); returns whether
   * chunks remain to be scheduled (not while the route is cut: reschedule() puts it back when it is
   * restored).
   */
  releaseDue(now: number, until = now): boolean {
    if (this.conn.blocked(this.counters)) return false;
    while (!this.empty && this.queue[this.head]!.at <= until) {
      const chunk = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Chunk; // let the buffer go
      if (chunk.data !== null) this.queuedBytes -= chunk.data.length;
      this.release(chunk, now);
      if (this.dead) return false;
    }
    if (this.empty) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.maybeResume();
    return !this.empty;
  }

  private release(chunk: Chunk, now: number): void {
    switch (chunk.kind) {
      case Kind.Connect:
        this.conn.openTarget();
        return;
      case Kind.End:
        if (this.dst !== null && !this.dst.destroyed) this.dst.end();
        return;
      case Kind.Data: {
        const data = chunk.data!;
        if (this.dst !== null && !this.dst.destroyed) this.dst.write(data);
        const c = this.counters;
        const late = now - Math.max(chunk.at, this.cutEndedAt);
        c.bytes += data.length;
        c.chunks++;
        c.latenessSumMs += late;
        if (late > c.latenessMaxMs) c.latenessMaxMs = late;
        return;
      }
      case Kind.Reset:
        // Everything before it has been written to dst. A socket still connecting resets once
        // connected, after the writes made before (Node sends those first: tested). Bytes the
        // receiver's window has no room for yet are lost with the reset, as from a network.
        this.conn.abort();
        return;
    }
  }

  private held(): number {
    return this.queuedBytes + (this.dst?.writableLength ?? 0);
  }

  maybeResume(): void {
    if (this.paused && this.held() < LOW_WATER_BYTES) {
      this.paused = false;
      this.src?.resume();
    }
  }

  kill(): void {
    this.dead = true;
    this.queue.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
  }
}

interface HeapEntry {
  readonly at: number;
  readonly dir: Direction;
}

/** A binary min-heap on `at`. */
class EntryHeap {
  private readonly items: HeapEntry[] = [];

  peek(): HeapEntry | undefined {
    return this.items[0];
  }

  /** The second smallest `at` (the smaller child of the root), Infinity if none. */
  secondAt(): number {
    return Math.min(this.items[1]?.at ?? Infinity, this.items[2]?.at ?? Infinity);
  }

  push(e: HeapEntry): void {
    const a = this.items;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.at <= e.at) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = e;
  }

  pop(): HeapEntry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && a[r]!.at < a[l]!.at ? r : l;
      if (a[c]!.at >= last.at) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = last;
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

/** The one scheduler of the worker: releases due chunks when the clock thread says so. */
class ReleaseScheduler {
  private readonly heap = new EntryHeap();
  private readonly f64: Float64Array;
  private readonly ctl: Int32Array;
  private readonly clock: Worker;
  private armedAt = Infinity;
  /** The release after the armed one, as last published to the clock. */
  private nextPublished = Infinity;
  private clockTid: number | null = null;
  clockNiceSet = false;
  readonly ready: Promise<void>;
  wakes = 0;
  /** Time spent asleep in waitUntil. */
  napMs = 0;
  private napOvershootMs = INITIAL_NAP_OVERSHOOT_MS;
  /** Never notified: Atomics.wait on it is a plain sleep of the given length. */
  private readonly napCell = new Int32Array(new SharedArrayBuffer(4));
  /** When this thread last finished handling something (ms, nowMs clock). */
  lastActivity = -Infinity;
  private wakeLatencyMs = INITIAL_WAKE_LATENCY_MS;
  private leadMs = INITIAL_LEAD_MS;
  private closed = false;
  /** The loopback connection the clock's ticks come by (null where its fd cannot be had). */
  private ticks: TickLine | null = null;

  constructor(nice: number | null) {
    const sab = new SharedArrayBuffer(SAB_BYTES);
    this.f64 = new Float64Array(sab, 0, F64_SLOTS);
    this.ctl = new Int32Array(sab, I32_AT, I32_SLOTS);
    this.f64[0] = Infinity;
    this.f64[2] = Infinity;
    this.f64[1] = this.leadMs;
    Atomics.store(this.ctl, TICK_FD, -1);
    const clockInit: ClockInit = { role: 'clock', sab, nice };
    this.clock = new Worker(new URL(import.meta.url), { workerData: clockInit });
    const hello = new Promise<void>((resolve, reject) => {
      this.clock.once('error', reject);
      this.clock.on('message', (m: ClockHello | ClockTick) => {
        if (Array.isArray(m)) this.wake(m[0], m[1]);
        else {
          this.clockTid = m.tid;
          this.clockNiceSet = m.niceSet;
          resolve();
        }
      });
    });
    this.ready = Promise.all([hello, this.openTickLine()]).then(() => undefined);
  }

  /** Connects the tick line and hands its writing end to the clock (messages until then). */
  private async openTickLine(): Promise<void> {
    const line = await TickLine.open((seq, postedAt) => this.wake(seq, postedAt));
    if (line === null) return;
    if (this.closed) {
      line.close();
      return;
    }
    this.ticks = line;
    Atomics.store(this.ctl, TICK_FD, line.writeFd);
  }

  enqueue(dir: Direction, at: number): void {
    this.heap.push({ at, dir });
    if (at < this.armedAt) this.arm(at);
  }

  /**
   * Arms the clock for `at`. `clockWakesBy`: when the clock will wake by itself, where known (it
   * ticked the current arming and sleeps toward the next release published with it).
   */
  private arm(at: number, clockWakesBy = Infinity): void {
    if (this.closed) return;
    this.armedAt = at;
    this.f64[0] = at;
    this.nextPublished = this.f64[2] = at === Infinity ? Infinity : this.releaseAfterFirst();
    const before = Atomics.add(this.ctl, SEQ, 1);
    // Disarming wakes nobody: a clock that has ticked sleeps without a timeout until armed again,
    // and one sleeping toward an earlier arming wakes at its own timeout, finds the sequence
    // moved and nothing due, and writes no tick. Waking it here cost the clock one wake-up per
    // release that emptied the queues (a lone round trip: 6 wake-ups where 4 do, tested).
    if (at === Infinity) return;
    // Nor does arming what the clock already sleeps toward, unless it has ticked that too and
    // sleeps until armed. Read after the bump: a clock that said so before it wakes here; one
    // that says so after it sees the new sequence before it sleeps.
    if (at < clockWakesBy || Atomics.load(this.ctl, TICKED_NEXT) === before) Atomics.notify(this.ctl, SEQ);
  }

  /** The second release in time: the earlier of the first direction's next chunk and the heap's next entry. */
  private releaseAfterFirst(): number {
    const top = this.heap.peek();
    if (top === undefined) return Infinity;
    return Math.min(top.dir.secondAt, this.heap.secondAt());
  }

  private wake(seq: number, postedAt: number): void {
    this.wakes++;
    const arrivedAt = nowMs();
    // Only a wake-up that found this thread asleep measures the clock and the wake-up path: a
    // busy thread sees the message late however early it was sent.
    const wasIdle = arrivedAt - this.lastActivity > IDLE_GAP_MS;
    if (wasIdle) this.trackWakeLatency(arrivedAt - postedAt);
    const forCurrent = seq === Atomics.load(this.ctl, SEQ);
    const wokeFor = this.armedAt;
    // Ticked for the current arming: the clock now sleeps toward the release published with it.
    const clockWakesBy = forCurrent ? this.nextPublished : Infinity;
    let now = nowMs();
    if (wasIdle && forCurrent && wokeFor !== Infinity) this.adaptLead(now - wokeFor);
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined) break;
      if (top.dir.dead || top.dir.empty) {
        this.heap.pop();
        continue;
      }
      if (top.at > now) {
        // Woken a little early for this very entry: wait out the rest here rather than pay
        // another round trip through the clock thread (which would be later).
        if (top.at > wokeFor || top.at - now > MAX_WAIT_MS) break;
        now = this.waitUntil(top.at, now);
      }
      this.heap.pop();
      if (top.dir.releaseDue(now, Math.max(now, top.at)))
        this.heap.push({ at: top.dir.headAt, dir: top.dir });
      now = nowMs();
    }
    const next = this.heap.peek()?.at ?? Infinity;
    // The clock fires once per arming: a fired arming must be renewed even for the same time.
    if (forCurrent || next !== this.armedAt) this.arm(next, clockWakesBy);
    this.lastActivity = nowMs();
  }

  /**
   * Waits until `at` is at most EARLY_RELEASE_MS away (it is at most MAX_WAIT_MS ahead): futex
   * sleeps, each for what is left less the overshoot the kernel has been adding to them, and no
   * spinning (issue 26: never spin). Sleeping instead of spinning the whole wait took the relay's
   * two threads from 46-50 % to 31-35 % of a core in bench relay's 5,000 chunks/s phase; the spin
   * then kept for the last tens of µs cost ~18 µs a wake-up more, and is gone too
   * (docs/benchmarks.md). Neither reads sockets meanwhile. The overshoot (the timer's slack, ~50 µs,
   * plus scheduling) is tracked as a median, like the lead.
   */
  private waitUntil(at: number, now: number): number {
    while (at - now > EARLY_RELEASE_MS) {
      const sleepMs = Math.max(MIN_NAP_MS, at - now - this.napOvershootMs);
      Atomics.wait(this.napCell, 0, 0, sleepMs);
      const woke = nowMs();
      const overshoot = woke - (now + sleepMs);
      this.napMs += woke - now;
      const step = overshoot > this.napOvershootMs ? LEAD_STEP_MS : -LEAD_STEP_MS;
      this.napOvershootMs = Math.min(MAX_NAP_OVERSHOOT_MS, Math.max(0, this.napOvershootMs + step));
      now = woke;
    }
    return now;
  }

  /** Moves the lead by one step toward wake-ups WAKE_EARLY_MS before the due time. */
  private adaptLead(offsetMs: number): void {
    const step = offsetMs > -WAKE_EARLY_MS ? LEAD_STEP_MS : -LEAD_STEP_MS;
    this.leadMs = Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, this.leadMs + step));
    this.f64[1] = this.leadMs;
  }

  /** Median tracker of how long an idle relay thread takes to see a message (and so a socket read). */
  private trackWakeLatency(ms: number): void {
    const step = ms > this.wakeLatencyMs ? LEAD_STEP_MS : -LEAD_STEP_MS;
    this.wakeLatencyMs = Math.min(MAX_WAKE_LATENCY_MS, Math.max(0, this.wakeLatencyMs + step));
  }

  get wakeLatency(): number {
    return this.wakeLatencyMs;
  }

  /**
   * When bytes read now most likely arrived: an idle thread learns of them one wake-up late, so
   * that much is taken back (never past the thread's last activity); a busy one learns at once.
   */
  arrivalTime(): number {
    const now = nowMs();
    const idle = now - this.lastActivity > IDLE_GAP_MS;
    const t = idle ? Math.max(this.lastActivity, now - this.wakeLatencyMs) : now;
    this.lastActivity = now;
    return t;
  }

  get lead(): number {
    return this.leadMs;
  }

  clear(): void {
    this.heap.clear();
    this.arm(Infinity);
  }

  /** How many times the clock thread has woken. */
  get clockWakes(): number {
    return Atomics.load(this.ctl, CLOCK_WAKES);
  }

  cpuMs(): number | null {
    return this.clockTid === null ? null : threadCpuMs(`/proc/self/task/${this.clockTid}/schedstat`);
  }

  async close(): Promise<void> {
    this.heap.clear();
    this.closed = true;
    Atomics.store(this.ctl, STOP, 1);
    Atomics.add(this.ctl, SEQ, 1);
    Atomics.notify(this.ctl, SEQ);
    await this.clock.terminate();
    // Only now: the clock may have been writing into it until it stopped.
    this.ticks?.close();
  }
}

/**
 * A loopback TCP connection inside this thread: the clock thread writes ticks into one end by
 * its file descriptor (a plain write(2), it has no event loop), this thread's event loop reads
 * them from the other, exactly as it reads relayed bytes.
 */
class TickLine {
  private rest: Buffer = Buffer.alloc(0);
  /** Read into, over and over: a tick is parsed as soon as it is read and never kept. */
  private static readonly readBuffer = Buffer.allocUnsafe(4096);

  private constructor(
    private readonly server: Server,
    private readonly writer: Socket,
    private readonly reader: Socket,
    readonly writeFd: number,
  ) {
    // Errors only as the relay closes; a tick line that fails leaves ticks to the messages.
    reader.on('error', () => undefined);
    writer.on('error', () => undefined);
  }

  static async open(onTick: (seq: number, postedAt: number) => void): Promise<TickLine | null> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    // This thread reads the connecting end, so that it can read into one reused buffer (`onread`
    // exists for connecting sockets only): no buffer is allocated per tick, no stream event is
    // emitted. The clock writes into the accepted end.
    let line: TickLine | null = null;
    const reader = connect({
      host: '127.0.0.1',
      port: (server.address() as { port: number }).port,
      onread: {
        buffer: TickLine.readBuffer,
        callback: (n: number) => {
          line?.read(TickLine.readBuffer.subarray(0, n), onTick);
          return true;
        },
      },
    });
    await new Promise<void>((resolve, reject) => {
      reader.once('error', reject);
      reader.once('connect', resolve);
    });
    const writer = await accepted;
    server.close();
    writer.setNoDelay(true);
    // Node keeps the descriptor on the handle (not a public API, present on Unix since long ago):
    // without it the clock posts its ticks as messages, as before.
    const fd = (writer as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) {
      writer.destroy();
      reader.destroy();
      return null;
    }
    line = new TickLine(server, writer, reader, fd);
    return line;
  }

  /** `b` is a view of the reused buffer: what is left of a tick split across reads is copied. */
  private read(b: Buffer, onTick: (seq: number, postedAt: number) => void): void {
    const buf = this.rest.length === 0 ? b : Buffer.concat([this.rest, b]);
    let off = 0;
    for (; off + TICK_BYTES <= buf.length; off += TICK_BYTES)
      onTick(buf.readDoubleLE(off), buf.readDoubleLE(off + 8));
    this.rest = off === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(off));
  }

  close(): void {
    this.writer.destroy();
    this.reader.destroy();
    this.server.close();
  }
}

class RouteState {
  readonly forward = new DirectionCounters();
  readonly backward = new DirectionCounters();
  readonly connections = new Set<Connection>();
  accepted = 0;
  resets = 0;
  port = 0;
  /** The delays now in force (the route's own until a change), and how many changes so far. */
  delays: { forward: LinkDelay; backward: LinkDelay };
  changes = 0;
  /**
   * Cut (a partition): nothing is released in a cut direction until it is restored. One direction
   * alone is a one-way cut: the dialler's bytes get through and the answers wait, or the reverse.
   */
  readonly blocked = { forward: false, backward: false };

  constructor(
    readonly route: RelayRoute,
    readonly server: Server,
  ) {
    this.delays = { forward: route.forward, backward: route.backward };
  }

  /** A fresh, repeatable sampler per connection, direction and change. */
  sampler(seed: number, index: number, dir: 'f' | 'b'): () => number {
    const rng = new Random(hashSeed(`${seed}/${this.route.name}/${index}/${dir}/${this.changes}`));
    return createDelaySampler(dir === 'f' ? this.delays.forward : this.delays.backward, rng);
  }

  snapshot(): RouteStats {
    let fq = 0;
    let bq = 0;
    for (const c of this.connections) {
      fq += c.fwd.queuedBytes;
      bq += c.bwd.queuedBytes;
    }
    return {
      name: this.route.name,
      port: this.port,
      target: { host: this.route.target.host, port: this.route.target.port },
      connections: this.accepted,
      activeConnections: this.connections.size,
      resets: this.resets,
      forward: this.forward.snapshot(fq),
      backward: this.backward.snapshot(bq),
    };
  }
}

/**
 * One listen address and port shared by routes that name their sources (RelayRoute.acceptFrom):
 * the client's address picks the route. Names are looked up again whenever a client's address is
 * not among those known, so a member that comes back at a new address (a swarm task restarted)
 * is found; no lookup happens per connection otherwise.
 */
class SharedListener {
  port = 0;
  private readonly states: RouteState[] = [];
  private byAddress = new Map<string, RouteState>();
  private lookup: Promise<void> | null = null;

  constructor(readonly server: Server) {}

  add(s: RouteState): void {
    const from = s.route.acceptFrom!;
    const twin = this.states.find((o) => o.route.acceptFrom === from);
    if (twin)
      throw new Error(
        `relay routes '${twin.route.name}' and '${s.route.name}' listen on one port and both take connections from ${from}`,
      );
    this.states.push(s);
    this.byAddress.delete(from);
    this.lookup = null;
  }

  remove(s: RouteState): void {
    const i = this.states.indexOf(s);
    if (i >= 0) this.states.splice(i, 1);
  }

  async routeOf(address: string): Promise<RouteState | undefined> {
    const a = plainAddress(address);
    const known = this.byAddress.get(a);
    if (known) return known;
    // One lookup at a time for the whole listener; a client still unknown after it is unclaimed.
    this.lookup ??= this.resolveAll();
    const pending = this.lookup;
    await pending;
    if (this.lookup === pending) this.lookup = null;
    return this.byAddress.get(a);
  }

  private async resolveAll(): Promise<void> {
    const next = new Map<string, RouteState>();
    await Promise.all(
      this.states.map(async (s) => {
        const from = s.route.acceptFrom!;
        if (isIP(from)) return void next.set(plainAddress(from), s);
        try {
          for (const r of await lookup(from, { all: true })) next.set(plainAddress(r.address), s);
        } catch {
          // Not resolvable now (a member between tasks): its connections stay unclaimed until it is.
        }
      }),
    );
    this.byAddress = next;
  }
}

/** An IPv4 client of a dual-stack listener is reported as ::ffff:a.b.c.d. */
function plainAddress(a: string): string {
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** What the targets' sockets read into, one read at a time (this thread's only). */
const TARGET_READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** One relayed TCP connection: the accepted client socket and, once the forward delay of the
 * connection set-up has passed, the socket to the target. */
class Connection {
  readonly fwd: Direction;
  readonly bwd: Direction;
  private target: Socket | null = null;
  private aborted = false;
  private openSockets = 1;
  /** Until the Connect chunk is released: a client that closes meanwhile leaves it to cross. */
  private connectQueued = true;
  private readonly index: number;

  constructor(
    private readonly state: RouteState,
    private readonly client: Socket,
    scheduler: ReleaseScheduler,
    private readonly seed: number,
  ) {
    this.index = state.accepted;
    this.fwd = new Direction(scheduler, state.forward, state.sampler(seed, this.index, 'f'), this);
    this.bwd = new Direction(scheduler, state.backward, state.sampler(seed, this.index, 'b'), this);
    this.fwd.src = client;
    this.bwd.dst = client;
    client.setNoDelay(true);
    client.on('data', (b: Buffer) => this.fwd.push(Kind.Data, b));
    client.on('end', () => this.fwd.push(Kind.End, null));
    client.on('drain', () => this.bwd.maybeResume());
    client.on('error', () => this.sideReset(true));
    client.on('close', () => this.socketClosed());
    // With connect retries, nothing is read from the client before the target has accepted.
    if (this.retryConnectMs > 0) client.pause();
    // The connection set-up crosses the link too: the target sees it one forward delay later.
    this.fwd.push(Kind.Connect, null);
  }

  private get retryConnectMs(): number {
    return this.state.route.retryConnectMs ?? 0;
  }

  openTarget(): void {
    this.connectQueued = false;
    if (this.aborted || this.target !== null) return;
    this.dialTarget(performance.now() + this.retryConnectMs);
  }

  private dialTarget(giveUpAt: number): void {
    const { host, port } = this.state.route.target;
    // The target's bytes are read into one buffer the thread reuses, and only the bytes read are
    // copied out to be held (Node's own read path allocates 64 KiB per read and wraps it in a
    // stream event). The client's side is an accepted socket, which cannot take `onread`.
    const t = connect({
      host,
      port,
      allowHalfOpen: true,
      onread: {
        buffer: TARGET_READ_BUFFER,
        callback: (n: number) => {
          this.bwd.push(Kind.Data, Buffer.from(TARGET_READ_BUFFER.subarray(0, n)));
          return true;
        },
      },
    });
    this.target = t;
    t.setNoDelay(true);
    const attach = (): void => {
      this.openSockets++;
      this.fwd.dst = t;
      this.bwd.src = t;
      t.on('end', () => this.bwd.push(Kind.End, null));
      t.on('drain', () => this.fwd.maybeResume());
      t.on('close', () => this.socketClosed());
    };
    if (this.retryConnectMs <= 0) {
      // Bytes released before the connect completes wait in the socket's own buffer.
      attach();
      t.on('error', () => this.sideReset(false));
      return;
    }
    const refused = (err: NodeJS.ErrnoException): void => {
      // Refused before it ever connected, and still time to wait: drop this attempt, dial again.
      if (err.code !== 'ECONNREFUSED' || performance.now() >= giveUpAt || this.aborted) return this.abort();
      t.destroy();
      this.target = null;
      setTimeout(() => {
        if (!this.aborted && !this.client.destroyed) this.dialTarget(giveUpAt);
      }, CONNECT_RETRY_MS);
    };
    t.once('error', refused);
    t.once('connect', () => {
      t.off('error', refused);
      t.on('error', () => this.sideReset(false));
      attach();
      this.client.resume();
    });
  }

  /** Whether the direction counted by `counters` (the route's forward or backward) is cut. */
  blocked(counters: DirectionCounters): boolean {
    return counters === this.state.forward ? this.state.blocked.forward : this.state.blocked.backward;
  }

  /** The route was restored: each direction that holds chunks is scheduled again. */
  unblocked(): void {
    this.fwd.reschedule();
    this.bwd.reschedule();
  }

  /** The route's delays changed: what arrives from now on is delayed by the new ones. */
  delaysChanged(): void {
    this.fwd.sample = this.state.sampler(this.seed, this.index, 'f');
    this.bwd.sample = this.state.sampler(this.seed, this.index, 'b');
  }

  /**
   * An error or reset on one side (the client's if `fromClient`). Nothing can reach that side any
   * more, so what is held for it is dropped; what is held for the other side still goes out on
   * its schedule, and the reset follows it (Kind.Reset), the way a network delivers the packets
   * ahead of a RST. Dropping those too made a killed node's last messages vanish with the
   * connection (docs/paper.md). If the other side is gone as well, both are reset now.
   */
  private sideReset(fromClient: boolean): void {
    if (this.aborted) return;
    const out = fromClient ? this.fwd : this.bwd;
    const into = fromClient ? this.bwd : this.fwd;
    into.kill();
    if (out.dead) this.abort();
    else out.pushReset();
  }

  /**
   * Both sides reset now, whatever is still held dropped: where a side's reset ends once what it
   * queued has gone out (Kind.Reset), and what a connect retry that gives up comes to at once.
   */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.state.resets++;
    this.fwd.kill();
    this.bwd.kill();
    for (const s of [this.client, this.target]) if (s !== null) abortSocket(s);
  }

  destroy(): void {
    this.fwd.kill();
    this.bwd.kill();
    this.client.destroy();
    this.target?.destroy();
  }

  private socketClosed(): void {
    // With allowHalfOpen, a socket closes cleanly only once both of its halves are done, that is
    // after the END queued toward it went out: nothing is lost by waiting for the other one.
    if (--this.openSockets > 0) return;
    // The client went (a reset) before its Connect was released: the Connect, the bytes and the
    // reset behind it are still to cross, and the target's socket, once dialled, is counted.
    if (this.connectQueued && !this.fwd.dead) return;
    this.fwd.kill();
    this.bwd.kill();
    this.state.connections.delete(this);
  }
}

/** FNV-1a, 32 bits: a repeatable seed per route, connection and direction. */
function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function runRelay(opts: RelayWorkerInit): void {
  const port = parentPort;
  if (port === null) throw new Error('the relay must run in a worker');
  const scheduler = new ReleaseScheduler(opts.nice);
  const niceSet = opts.nice !== null && setThreadNice(ownThreadId(), opts.nice);
  const routes = new Map<string, RouteState>();
  const startedAt = nowMs();
  const cpuAtStart = ownThreadCpuMs();
  let closing = false;

  /** Listeners by "host|port", for routes that share one (RelayRoute.acceptFrom). */
  const shared = new Map<string, SharedListener>();
  let unclaimed = 0;

  function accept(state: RouteState | undefined, socket: Socket): void {
    if (state === undefined || closing) {
      socket.destroy();
      return;
    }
    const conn = new Connection(state, socket, scheduler, opts.seed);
    state.accepted++;
    state.connections.add(conn);
  }

  /** A listener of routes that name their sources: the connection goes to the route of its client's address. */
  function acceptShared(l: SharedListener, socket: Socket): void {
    // Nothing is read before a route takes it: the bytes wait in the socket.
    socket.on('error', () => undefined);
    void l.routeOf(socket.remoteAddress ?? '').then(
      (state) => {
        if (state === undefined) {
          unclaimed++;
          socket.destroy();
        } else accept(state, socket);
      },
      () => socket.destroy(),
    );
  }

  async function listen(server: Server, port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('relay listener has no port');
    return addr.port;
  }

  async function addRoutes(list: readonly RelayRoute[]): Promise<Record<string, number>> {
    const names = new Set<string>();
    for (const r of list) {
      if (routes.has(r.name) || names.has(r.name)) throw new Error(`duplicate relay route '${r.name}'`);
      names.add(r.name);
      // Fail here, not at the first connection, on a bad delay.
      createDelaySampler(r.forward, new Random(1));
      createDelaySampler(r.backward, new Random(1));
    }
    const added: RouteState[] = [];
    const opened: Server[] = [];
    try {
      for (const r of list) {
        const host = r.listenHost ?? opts.host;
        if (r.acceptFrom !== undefined && (r.listenPort ?? 0) > 0) {
          const key = `${host}|${r.listenPort}`;
          let l = shared.get(key);
          if (l === undefined) {
            const server = createServer({ allowHalfOpen: true }, (socket) => acceptShared(l!, socket));
            l = new SharedListener(server);
            l.port = await listen(server, r.listenPort!, host);
            opened.push(server);
            shared.set(key, l);
          }
          const state = new RouteState(r, l.server);
          state.port = l.port;
          l.add(state);
          added.push(state);
          continue;
        }
        // A connection before the route is added (the reply not sent yet) finds no route: closed.
        const server = createServer({ allowHalfOpen: true }, (socket) => accept(routes.get(r.name), socket));
        opened.push(server);
        const port = await listen(server, r.listenPort ?? 0, host);
        const state = new RouteState(r, server);
        state.port = port;
        added.push(state);
      }
    } catch (err) {
      for (const [key, l] of shared) if (opened.includes(l.server)) shared.delete(key);
      for (const l of shared.values()) for (const s of added) l.remove(s);
      await Promise.all(opened.map((s) => closeServer(s)));
      throw err;
    }
    const ports: Record<string, number> = {};
    for (const s of added) {
      routes.set(s.route.name, s);
      ports[s.route.name] = s.port;
    }
    return ports;
  }

  function change(list: readonly RouteDelayChange[]): void {
    for (const c of list) {
      if (!routes.has(c.name)) throw new Error(`no relay route '${c.name}' to change`);
      createDelaySampler(c.forward, new Random(1));
      createDelaySampler(c.backward, new Random(1));
    }
    for (const c of list) {
      const state = routes.get(c.name)!;
      state.delays = { forward: c.forward, backward: c.backward };
      state.changes++;
      for (const conn of state.connections) conn.delaysChanged();
    }
  }

  /**
   * Cuts routes (blocked) or restores them, in `direction` (forward: what the dialler sends). A cut
   * direction holds what it has and what arrives, and a cut forward direction holds new
   * connections before they reach the target, the way a partition stalls TCP: nothing is reset,
   * and the sockets' buffers fill until the senders stop. Restored, it releases what it held in
   * order, at once where its delay has passed.
   */
  function block(names: readonly string[], blocked: boolean, direction: RouteDirection): void {
    for (const n of names) if (!routes.has(n)) throw new Error(`no relay route '${n}' to cut or restore`);
    for (const n of names) {
      const state = routes.get(n)!;
      const was = { ...state.blocked };
      if (direction !== 'backward') state.blocked.forward = blocked;
      if (direction !== 'forward') state.blocked.backward = blocked;
      const restored = (was.forward && !state.blocked.forward) || (was.backward && !state.blocked.backward);
      if (restored) for (const conn of state.connections) conn.unblocked();
    }
  }

  function stats(): RelayStats {
    const cpu = ownThreadCpuMs();
    return {
      routes: [...routes.values()].map((s) => s.snapshot()),
      worker: {
        uptimeMs: nowMs() - startedAt,
        cpuMs: cpu === null || cpuAtStart === null ? null : cpu - cpuAtStart,
        clockCpuMs: scheduler.cpuMs(),
        wakes: scheduler.wakes,
        clockWakes: scheduler.clockWakes,
        napMs: scheduler.napMs,
        leadMs: scheduler.lead,
        wakeLatencyMs: scheduler.wakeLatency,
        niceSet: niceSet && scheduler.clockNiceSet,
        unclaimed,
      },
    };
  }

  async function close(): Promise<void> {
    closing = true;
    const servers = [...new Set([...routes.values()].map((s) => s.server))].map((s) => closeServer(s));
    for (const s of routes.values()) for (const c of s.connections) c.destroy();
    scheduler.clear();
    await Promise.all(servers);
    await scheduler.close();
  }

  port.on('message', (req: RelayRequest) => {
    void handle(req).then(
      (reply) => port.postMessage(reply),
      (err: unknown) =>
        port.postMessage({
          id: req.id,
          ok: false,
          error: err instanceof Error ? err.message : String(err),
        } satisfies RelayReply),
    );
  });

  async function handle(req: RelayRequest): Promise<RelayReply> {
    await scheduler.ready;
    switch (req.op) {
      case 'add':
        return { id: req.id, ok: true, ports: await addRoutes(req.routes) };
      case 'change':
        change(req.changes);
        return { id: req.id, ok: true };
      case 'stats':
        return { id: req.id, ok: true, stats: stats() };
      case 'block':
        block(req.names, req.blocked, req.direction);
        return { id: req.id, ok: true };
      case 'stall': {
        // Fault injection: this thread busy for `ms`, answering nothing (a stuck relay thread).
        const until = nowMs() + req.ms;
        while (nowMs() < until && !closing);
        return { id: req.id, ok: true };
      }
      case 'close':
        await close();
        return { id: req.id, ok: true };
    }
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
}

// Last, so that every class above is initialised before either role starts.
const init = workerData as RelayWorkerInit | ClockInit;
if (init.role === 'clock') runClock(init.sab, init.nice);
else runRelay(init);
