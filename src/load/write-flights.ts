// The writes a load agent has in flight. Each is retried until it is acknowledged or its deadline
// passes; like writeWithRetry (retrying-writer.ts), every attempt carries the SAME (clientId,
// requestId), so the nodes apply it at most once however often it is retried. Unlike it, the
// deadline is the agent's own: an attempt that hangs (a paused node, a slow election) is given up
// when the write's deadline passes, not when the connection's request timeout fires, so "timed
// out" means exactly "not acknowledged within writeDeadlineMs of its intended send time".
//
// Cheap per write, because the send loop's punctuality depends on it: no async function, no timer
// of its own (deadlines are checked by one sweep; writes are launched in deadline order, so the
// sweep only looks at the head of a queue), retries and their timers only on errors.
import { failureCode } from './write-client.js';
import type { Zxid } from '../node/core/zxid.js';
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
  /** How often deadlines are checked, ms (a timed-out write is noticed this late at most). */
  readonly sweepMs?: number;
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
  private readonly sweeper: NodeJS.Timeout;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly o: WriteFlightsOptions) {
    this.backoffMs = o.backoffMs ?? 2;
    this.maxBackoffMs = o.maxBackoffMs ?? 32;
    this.sweeper = setInterval(() => this.sweep(), o.sweepMs ?? 10);
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
    clearInterval(this.sweeper);
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
          if (!f.settled) this.settle(f, { ok: true, zxid: r.zxid }, this.o.now());
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

  private sweep(): void {
    const now = this.o.now();
    const q = this.queue;
    while (this.head < q.length) {
      const f = q[this.head];
      if (f && !f.settled) {
        if (f.deadline > now) break;
        this.settle(f, { ok: false, code: f.lastCode, timedOut: true }, now);
      }
      // Let the write's record go now: kept until a compaction, it would outlive young-generation
      // collections and be copied and promoted by them, lengthening their pauses.
      q[this.head] = undefined;
      this.head += 1;
    }
    // Drop the settled prefix now and then, so the queue does not grow for the whole run.
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.queue = q.slice(this.head);
      this.head = 0;
    }
  }
}
