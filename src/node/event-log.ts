// The node's event stream: one JSON object per line, by default on stdout, e.g.
//   {"t":1732170000123.456,"node":"p3","ev":"elected","epoch":7,"leader":"p4"}
// The harness computes every recovery phase from these lines, so none may be lost: writes respect
// backpressure (a slow reader makes us buffer, never block the node or drop), and whatever is still
// buffered when the process exits is written synchronously from the 'exit' hook.
import { writeSync } from 'node:fs';
import type { NodeId, WallMs } from './core/types.js';
import { wallNowMs } from '../util/wall-clock.js';

/** One line of the event stream. */
export interface EventRecord {
  readonly t: WallMs;
  readonly node: NodeId;
  readonly ev: string;
  readonly [field: string]: unknown;
}

/** Where lines go. Each `write` gets one complete line, newline included. */
export interface EventSink {
  write(line: string): void;
  /** Resolves once every line written so far has left the process (or the sink gave up on a dead reader). */
  flush(): Promise<void>;
  /** Last resort at exit: write what is buffered before returning, as far as the sink can. */
  flushSync(): void;
}

/**
 * Wall-clock milliseconds with microsecond resolution (util/wall-clock.ts) rather than Date.now():
 * sub-millisecond and never steps backwards within a process.
 */
export function wallClockMs(): WallMs {
  return Math.round(wallNowMs() * 1000) / 1000;
}

export interface EventLogOptions {
  /** Default: this process's stdout (see stdoutSink). A plain Writable is wrapped in a StreamSink. */
  readonly out?: EventSink | NodeJS.WritableStream;
  /** Clock, injectable for the simulator. Default wallClockMs. */
  readonly now?: () => WallMs;
  /** Write this sink's buffer synchronously on process exit (the stdout sink always does). Default false. */
  readonly flushOnExit?: boolean;
}

const RESERVED = new Set(['t', 'node', 'ev']);

export class EventLog {
  readonly node: NodeId;
  private readonly sink: EventSink;
  private readonly now: () => WallMs;
  private lastT = -Infinity;
  private readonly onExit: (() => void) | undefined;

  constructor(node: NodeId, opts: EventLogOptions = {}) {
    this.node = node;
    this.now = opts.now ?? wallClockMs;
    const out = opts.out;
    this.sink = out === undefined ? stdoutSink() : isEventSink(out) ? out : new StreamSink(out);
    if (opts.flushOnExit === true) {
      this.onExit = () => this.sink.flushSync();
      process.on('exit', this.onExit);
    }
  }

  /** Write one event now; `fields` named t, node or ev are ignored (those three are the log's). */
  emit(ev: string, fields: Readonly<Record<string, unknown>> = {}): EventRecord {
    // The clock is monotonic, but rounding to µs must not make two lines go backwards either.
    const t = Math.max(this.now(), this.lastT);
    this.lastT = t;
    const record: Record<string, unknown> = { t, node: this.node, ev };
    for (const [key, value] of Object.entries(fields)) if (!RESERVED.has(key)) record[key] = value;
    this.sink.write(serialise(record) + '\n');
    return record as EventRecord;
  }

  /** Write an event from the protocol core ({ ev, ...fields }). */
  emitEvent(event: { readonly ev: string; readonly [field: string]: unknown }): EventRecord {
    return this.emit(event.ev, event);
  }

  flush(): Promise<void> {
    return this.sink.flush();
  }

  /** Flush and stop watching for process exit. The sink stays usable by its owner. */
  async close(): Promise<void> {
    if (this.onExit) process.off('exit', this.onExit);
    await this.sink.flush();
  }
}

function isEventSink(out: EventSink | NodeJS.WritableStream): out is EventSink {
  return typeof (out as Partial<EventSink>).flushSync === 'function';
}

/** JSON with the odd values a protocol event may carry made readable rather than fatal. */
function serialise(record: Record<string, unknown>): string {
  try {
    return JSON.stringify(record, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (value instanceof Map) return Object.fromEntries(value);
      if (value instanceof Set) return [...value];
      if (value instanceof Uint8Array) return { bytes: value.byteLength };
      return value;
    });
  } catch (err) {
    // A bug in whoever built the event must not cost the line: keep the event, say what went wrong.
    return JSON.stringify({
      t: record.t,
      node: record.node,
      ev: record.ev,
      unserialisable: (err as Error).message,
    });
  }
}

// ---------------------------------------------------------------------------------------------

/** Lines kept in memory, for tests and the simulator. */
export class MemorySink implements EventSink {
  readonly lines: string[] = [];

  write(line: string): void {
    this.lines.push(line);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  flushSync(): void {}

  records(): EventRecord[] {
    return this.lines.map((line) => JSON.parse(line) as EventRecord);
  }
}

/**
 * Any Writable, respecting its backpressure: once write() returns false, lines queue here and go
 * out as one chunk on 'drain'. (Data handed to a stream cannot be taken back at exit; prefer FdSink
 * for process output.)
 */
export class StreamSink implements EventSink {
  private queue: string[] = [];
  private blocked = false;
  private inFlight = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly stream: NodeJS.WritableStream) {}

  write(line: string): void {
    if (this.blocked) this.queue.push(line);
    else this.send(line);
  }

  flush(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  flushSync(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue.join('');
    this.queue = [];
    this.stream.write(batch);
  }

  private send(chunk: string): void {
    this.inFlight++;
    const ok = this.stream.write(chunk, () => {
      this.inFlight--;
      this.settle();
    });
    if (!ok) {
      this.blocked = true;
      this.stream.once('drain', () => {
        this.blocked = false;
        const batch = this.queue.join('');
        this.queue = [];
        if (batch) this.send(batch);
        this.settle();
      });
    }
  }

  private idle(): boolean {
    return this.queue.length === 0 && !this.blocked && this.inFlight === 0;
  }

  private settle(): void {
    if (!this.idle()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

const CHUNK_BYTES = 64 * 1024;
const MAX_RETRY_MS = 20;
const EXIT_FLUSH_DEADLINE_MS = 10_000;

/**
 * Writes straight to a file descriptor with writeSync, so this process always knows exactly which
 * bytes went out: on a non-blocking pipe a full buffer answers EAGAIN (or a short write), the rest
 * stays queued here and is retried on a timer; at exit it is written synchronously, waiting for the
 * reader. The fd should belong to the event stream alone (diagnostics go to stderr).
 */
export class FdSink implements EventSink {
  /** Lines waiting to be written; the first may be partly written already (`offset` bytes). */
  private pending: Buffer[] = [];
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private retryMs = 1;
  private waiters: Array<() => void> = [];
  /** How often the fd said "not now" (backpressure), and lines dropped because the reader is gone. */
  readonly stats = { deferred: 0, dropped: 0, broken: false };

  constructor(private readonly fd: number) {}

  write(line: string): void {
    if (this.stats.broken) {
      this.stats.dropped++;
      return;
    }
    this.pending.push(Buffer.from(line, 'utf8'));
    if (this.timer === undefined) this.pump();
  }

  flush(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  flushSync(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + EXIT_FLUSH_DEADLINE_MS;
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (this.pending.length > 0 && Date.now() < deadline) {
      // Nothing else can run now, so block briefly and try again until the reader catches up.
      if (this.writeSome() === 'again') Atomics.wait(nap, 0, 0, 1);
    }
    this.settle();
  }

  private pump(): void {
    this.timer = undefined;
    while (this.pending.length > 0) {
      if (this.writeSome() === 'again') {
        this.stats.deferred++;
        // No readiness event for a raw fd: poll with a short back-off. Unref'd: the exit hook covers us.
        this.timer = setTimeout(() => this.pump(), this.retryMs).unref();
        this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
        return;
      }
    }
    this.retryMs = 1;
    this.settle();
  }

  private writeSome(): 'ok' | 'again' {
    if (this.offset === 0 && this.pending.length > 1) this.coalesce();
    const head = this.pending[0];
    if (!head) return 'ok';
    try {
      this.offset += writeSync(this.fd, head, this.offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 'again';
      // EPIPE and friends: the reader is gone; nobody will ever read these lines.
      this.stats.broken = true;
      this.stats.dropped += this.pending.length;
      this.pending = [];
      this.offset = 0;
      return 'ok';
    }
    if (this.offset >= head.length) {
      this.pending.shift();
      this.offset = 0;
    }
    return 'ok';
  }

  /** Merge queued lines into one chunk (up to CHUNK_BYTES) so a backlog costs few system calls. */
  private coalesce(): void {
    let bytes = 0;
    let count = 0;
    for (const b of this.pending) {
      if (count > 0 && bytes + b.length > CHUNK_BYTES) break;
      bytes += b.length;
      count++;
    }
    if (count > 1) this.pending.splice(0, count, Buffer.concat(this.pending.slice(0, count), bytes));
  }

  private settle(): void {
    if (this.pending.length > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

let stdout: FdSink | undefined;

/**
 * The process's stdout as an FdSink: one per process, written out synchronously at exit. Touching
 * process.stdout first lets Node put a pipe in non-blocking mode, so a slow reader makes us buffer
 * instead of stalling the event loop.
 */
export function stdoutSink(): FdSink {
  if (!stdout) {
    void process.stdout;
    const sink = new FdSink(1);
    process.on('exit', () => sink.flushSync());
    stdout = sink;
  }
  return stdout;
}
