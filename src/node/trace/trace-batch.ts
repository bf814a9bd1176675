// When a node's trace lines go out. Writing a line costs the node a write to its event stream and
// the harness a read and a parse (in containers, Docker's log pipes too), on the same two cores as
// everything else. Written as each traced write's part on a node ended, that cost fell while the
// same write was still on its way (the leader's line while its COMMIT crossed the relay): traced
// writes came out slower than the rest (e2e-2dc, process runtime, 12 runs: the forwarded data
// center's traced mean over every write's by +0.18 to +3.24 ms in all 24 windows), and the
// anatomy's floor, their mean, with them. Held and written TRACE_FLUSH_MS after the first one
// waiting, the lines go out when the writes that made them are done (a write's remainder after a
// node's part is a hop and a reply: under 100 ms on the topologies here), at moments that owe
// nothing to which writes are traced: the same cost falls on traced and untraced writes alike.
//
// What may be lost: a node killed outright (SIGKILL) takes up to TRACE_FLUSH_MS of its lines with
// it; those writes count as traced, not complete (the report says how many). The load's end flushes
// at once (a client connection closing), and so does a node's stop.
import type { TraceEventFields } from '../../vocabulary/node-events.js';

export const TRACE_FLUSH_MS = 200;

/** Runs `fn` after `ms`; returns what cancels it. Injected for tests. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const unrefTimer: Schedule = (fn, ms) => {
  // Unref'd: a pending flush must not keep a stopping node alive (stop() flushes itself).
  const timer = setTimeout(fn, ms).unref();
  return () => clearTimeout(timer);
};

export class TraceBatch {
  private waiting: TraceEventFields[] = [];
  private cancel: (() => void) | undefined;

  constructor(
    private readonly write: (fields: TraceEventFields) => void,
    private readonly schedule: Schedule = unrefTimer,
    private readonly delayMs = TRACE_FLUSH_MS,
  ) {}

  add(fields: TraceEventFields): void {
    this.waiting.push(fields);
    this.cancel ??= this.schedule(() => {
      this.cancel = undefined;
      this.flush();
    }, this.delayMs);
  }

  /** Writes every waiting line now, in the order they came. */
  flush(): void {
    this.cancel?.();
    this.cancel = undefined;
    const lines = this.waiting;
    this.waiting = [];
    for (const f of lines) this.write(f);
  }

  get size(): number {
    return this.waiting.length;
  }
}
