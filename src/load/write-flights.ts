// The writes a load agent has in flight. Each is retried until it is acknowledged or its deadline
// passes; like writeWithRetry (retrying-writer.ts), every attempt carries the SAME (clientId,
// requestId), so the nodes apply it at most once however often it is retried. Unlike it, the
// deadline is the agent's own: an attempt that hangs (a paused node, a slow election) is given up
// when the write's deadline passes, not when the connection's request timeout fires, so "timed
// out" means exactly "not acknowledged within writeDeadlineMs of its intended send time".
//
// Cheap per write, because the send loop's punctuality depends on it: no async function, no timer
// of its own (writes are launched in deadline order, so one timer, armed for the deadline of the
// oldest write still in flight, settles every write whose deadline passed), retries and their
// timers only on errors. Settled writes leave the head of the queue as they settle. (A sweep every
// 10 ms did both before: 100 wake-ups a second per agent at any rate, at ~0.1-0.2 ms of CPU each
// on this project's 2-core VM, for deadlines 15 s out.)
import { failureCode } from './write-client.js';
import type { Zxid } from '../vocabulary/zxid.js';
import { RETRYABLE, type EndpointPool } from './retrying-writer.js';

export type FlightOutcome =
  | { readonly ok: true; readonly zxid: Zxid }
  | {
      readonly ok: false;
      /** The last error's code; 'DEADLINE' when no attempt had failed yet. */
      readonly code: string;
      readonly timedOut: boolean;
    };

export interface Flight {
  readonly seq: number;
  /** Intended and actual send time, deadline: monotonic ms. */
  readonly intended: number;
  readonly sentAt: number;
  readonly deadline: number;
  /** Where the payload starts in the agent's byte pool. */
  readonly dataOffset: number;
  target: number;
  attempts: number;
  backoffMs: number;
  lastCode: string;
  settled: boolean;
}

export interface WriteFlightsOptions {
  readonly pool: EndpointPool;
  readonly clientId: string;
  readonly pathOf: (seq: number) => string;
  readonly dataOf: (f: Flight) => Uint8Array;
  readonly onSettled: (f: Flight, outcome: FlightOutcome, now: number) => void;
  readonly now: () => number;
  /** First pause before a retry; doubles up to maxBackoffMs. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

/** Errors after which the next attempt goes to another endpoint: this one may be gone or stuck. */
const MOVE_ON = new Set(['CONNECT', 'DISCONNECTED', 'CLOSED', 'TIMEOUT']);
/** Errors that also mean the connection is dead and must be redialled. */
const DEAD = new Set(['CONNECT', 'DISCONNECTED', 'CLOSED']);

export class WriteFlights {
  /** Launched writes in deadline order; settled ones are cleared out as the sweep passes them. */
  private queue: Array<Flight | undefined> = [];
  private head = 0;
  private live = 0;
  /** Armed for the deadline of the oldest write in flight (the queue's head) while there is one. */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly o: WriteFlightsOptions) {
    this.backoffMs = o.backoffMs ?? 2;
    this.maxBackoffMs = o.maxBackoffMs ?? 32;
  }

  /** Writes launched and not yet settled. */
  get size(): number {
    return this.live;
  }

  /** Sends write `seq` now (to endpoint `target` first). Deadlines must not decrease. */
  launch(
    seq: number,
    intended: number,
    now: number,
    deadline: number,
    target: number,
    dataOffset: number,
  ): void {
    const f: Flight = {
      seq,
      intended,
      sentAt: now,
      deadline,
      dataOffset,
      target,
      attempts: 0,
      backoffMs: this.backoffMs,
      lastCode: 'DEADLINE',
      settled: false,
    };
    this.queue.push(f);
    this.live += 1;
    // Deadlines do not decrease: a timer already armed is for this one's or an earlier one.
    this.armDeadline();
    this.attempt(f);
  }

  /** Settles every write still in flight as timed out; returns how many there were. */
  abandonAll(): number {
    const n = this.live;
    for (let i = this.head; i < this.queue.length; i++) {
      const f = this.queue[i];
      if (f && !f.settled) this.settle(f, { ok: false, code: f.lastCode, timedOut: true }, this.o.now());
    }
    this.queue = [];
    this.head = 0;
    return n;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  private attempt(f: Flight): void {
    if (f.settled) return;
    f.attempts += 1;
    const path = this.o.pathOf(f.seq);
    this.o.pool
      .client(f.target)
      .then((c) => c.write(path, this.o.dataOf(f), { clientId: this.o.clientId, requestId: f.seq }))
      .then(
        (r) => {
          if (f.settled) return;
          this.settle(f, { ok: true, zxid: r.zxid }, this.o.now());
          this.dropSettledHead();
        },
        (err: unknown) => this.failed(f, err),
      );
  }

  private failed(f: Flight, err: unknown): void {
    if (f.settled) return;
    const code = failureCode(err);
    f.lastCode = code;
    if (code !== 'CONNECT' && !RETRYABLE.has(code)) {
      this.settle(f, { ok: false, code, timedOut: false }, this.o.now());
      this.dropSettledHead();
      return;
    }
    if (DEAD.has(code)) this.o.pool.drop(f.target);
    if (MOVE_ON.has(code)) f.target = this.o.pool.route((f.target + 1) % this.o.pool.size);
    const wait = f.backoffMs;
    f.backoffMs = Math.min(this.maxBackoffMs, f.backoffMs * 2);
    // Past the deadline by then: the sweep settles it as timed out instead.
    if (this.o.now() + wait < f.deadline) setTimeout(() => this.attempt(f), wait);
  }

  private settle(f: Flight, outcome: FlightOutcome, now: number): void {
    f.settled = true;
    this.live -= 1;
    this.o.onSettled(f, outcome, now);
  }

  /** Settles as timed out every write whose deadline has passed, then waits for the next one's. */
  private expire(): void {
    this.deadlineTimer = undefined;
    const now = this.o.now();
    const q = this.queue;
    for (let i = this.head; i < q.length; i++) {
      const f = q[i];
      if (!f || f.settled) continue;
      if (f.deadline > now) break;
      this.settle(f, { ok: false, code: f.lastCode, timedOut: true }, now);
    }
    this.dropSettledHead();
    this.armDeadline();
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined || this.closed) return;
    const f = this.queue[this.head];
    if (!f) return;
    this.deadlineTimer = setTimeout(() => this.expire(), Math.max(0, f.deadline - this.o.now()));
  }

  /**
   * Lets the settled writes at the queue's head go at once: kept until a compaction, their records
   * would outlive young-generation collections and be copied and promoted by them, lengthening
   * their pauses. (A write settled behind one still in flight goes when that one does.)
   */
  private dropSettledHead(): void {
    const q = this.queue;
    while (this.head < q.length && (q[this.head]?.settled ?? true)) {
      q[this.head] = undefined;
      this.head += 1;
    }
    // Drop the settled prefix now and then, so the queue does not grow for the whole run.
    if (this.head === q.length) {
      if (q.length > 0) {
        this.queue = [];
        this.head = 0;
      }
    } else if (this.head > 1024 && this.head * 2 > q.length) {
      this.queue = q.slice(this.head);
      this.head = 0;
    }
  }
}
