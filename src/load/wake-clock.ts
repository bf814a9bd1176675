// A wake-up source finer than setTimeout, for the load agent's send loop. Node's timers count
// whole milliseconds and fire up to ~1 ms late; at 5,000 writes/s (one every 0.2 ms) that alone
// would make every write up to a millisecond late. Spinning instead (setImmediate) is worse on a
// busy machine: a process that never sleeps is the first the kernel preempts, for milliseconds.
//
// So a small worker thread does the waiting: it blocks in Atomics.wait with a sub-millisecond
// timeout, which the kernel honours to ~0.1 ms, and posts a message when the wake-up is due; the
// message wakes the main thread's event loop at once. Neither thread burns CPU while waiting.
// One wake-up is pending at a time; asking for another replaces it.
//
// This file is also the worker's code (started with workerData.role === ROLE); it imports nothing
// but node built-ins so that the worker starts fast.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const ROLE = 'pole-bench-wake-clock';

/** Monotonic ms on a clock both threads share (performance.now() has a per-thread origin). */
export function hrMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

// Shared layout: Int32 [0] sequence, bumped for every new request (or close); Int32 [1] closed;
// Float64 at byte 8: the due time in hrMs, NaN for none.
const SEQ = 0;
const CLOSED = 1;

export class WakeClock {
  private readonly ctrl: Int32Array;
  private readonly due: Float64Array;
  private pending: (() => void) | undefined;
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    sab: SharedArrayBuffer,
  ) {
    this.ctrl = new Int32Array(sab, 0, 2);
    this.due = new Float64Array(sab, 8, 1);
    worker.on('message', (seq: number) => {
      // A wake-up for a request that has since been replaced is stale: ignore it.
      if (seq !== Atomics.load(this.ctrl, SEQ)) return;
      const cb = this.pending;
      this.pending = undefined;
      worker.unref();
      cb?.();
    });
    // Like a timer, the clock keeps the process alive only while a wake-up is pending.
    worker.unref();
  }

  /** Starts the clock thread; resolves once it runs. */
  static start(): Promise<WakeClock> {
    const sab = new SharedArrayBuffer(16);
    new Float64Array(sab, 8, 1)[0] = NaN;
    const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE, sab } });
    return new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.once('online', () => {
        worker.off('error', reject);
        resolve(new WakeClock(worker, sab));
      });
    });
  }

  /** Calls `cb` once at hrMs() ≥ atHrMs (soon after), replacing any wake-up asked for before. */
  wakeAt(atHrMs: number, cb: () => void): void {
    if (this.closed) return;
    this.pending = cb;
    this.worker.ref();
    this.due[0] = atHrMs;
    Atomics.add(this.ctrl, SEQ, 1);
    Atomics.notify(this.ctrl, SEQ);
  }

  cancel(): void {
    this.pending = undefined;
    this.worker.unref();
    this.due[0] = NaN;
    Atomics.add(this.ctrl, SEQ, 1);
    Atomics.notify(this.ctrl, SEQ);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pending = undefined;
    Atomics.store(this.ctrl, CLOSED, 1);
    Atomics.add(this.ctrl, SEQ, 1);
    Atomics.notify(this.ctrl, SEQ);
    await this.worker.terminate();
  }
}

/** The clock thread's loop. */
function runClock(sab: SharedArrayBuffer): void {
  const ctrl = new Int32Array(sab, 0, 2);
  const due = new Float64Array(sab, 8, 1);
  for (;;) {
    const seq = Atomics.load(ctrl, SEQ);
    if (Atomics.load(ctrl, CLOSED) === 1) return;
    const at = due[0]!;
    if (Number.isNaN(at)) {
      Atomics.wait(ctrl, SEQ, seq); // until a request comes
      continue;
    }
    const wait = at - hrMs();
    if (wait > 0) {
      Atomics.wait(ctrl, SEQ, seq, wait); // until due, or a new request replaces this one
      continue;
    }
    parentPort!.postMessage(seq);
    Atomics.wait(ctrl, SEQ, seq); // done with this request: sleep until the next
  }
}

if (!isMainThread && (workerData as { role?: unknown } | null)?.role === ROLE) {
  runClock((workerData as { sab: SharedArrayBuffer }).sab);
}
