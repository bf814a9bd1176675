// A node's trace lines are held and written together, later than the writes that made them: never
// lost on the way, in order, at the timer, at a flush, and only once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TRACE_FLUSH_MS, TraceBatch, type Schedule } from '../../src/node/trace/trace-batch.js';
import type { TraceEventFields } from '../../src/vocabulary/node-events.js';

/** A hand-driven timer: `fire()` runs what is due, as the event loop would. */
function manualTimer(): { schedule: Schedule; pending: () => number[]; fire: () => void } {
  let timers: { fn: () => void; ms: number; live: boolean }[] = [];
  return {
    schedule: (fn, ms) => {
      const t = { fn, ms, live: true };
      timers.push(t);
      return () => (t.live = false);
    },
    pending: () => timers.filter((t) => t.live).map((t) => t.ms),
    fire: () => {
      const due = timers.filter((t) => t.live);
      timers = [];
      for (const t of due) t.fn();
    },
  };
}

const line = (req: number): TraceEventFields => ({
  client: 'c',
  req,
  zxid: `1:${req}`,
  s: { clientRecv: req },
});

describe('TraceBatch', () => {
  it('holds lines until its timer, armed once by the first, then writes them all in order', () => {
    const out: number[] = [];
    const timer = manualTimer();
    const b = new TraceBatch((f) => out.push(f.req), timer.schedule);
    b.add(line(1));
    b.add(line(2));
    b.add(line(3));
    assert.deepEqual(out, [], 'nothing written while the writes that made the lines may be in flight');
    assert.deepEqual(timer.pending(), [TRACE_FLUSH_MS], 'one timer for the batch');
    timer.fire();
    assert.deepEqual(out, [1, 2, 3]);
    assert.equal(b.size, 0);
    b.add(line(4));
    assert.deepEqual(timer.pending(), [TRACE_FLUSH_MS], 'the next line arms a new timer');
    timer.fire();
    assert.deepEqual(out, [1, 2, 3, 4]);
  });

  it('a flush writes what waits at once and cancels the timer: nothing twice, nothing left', () => {
    const out: number[] = [];
    const timer = manualTimer();
    const b = new TraceBatch((f) => out.push(f.req), timer.schedule);
    b.add(line(1));
    b.add(line(2));
    b.flush();
    assert.deepEqual(out, [1, 2]);
    assert.deepEqual(timer.pending(), []);
    timer.fire();
    b.flush();
    assert.deepEqual(out, [1, 2]);
  });

  it('on the real clock: the lines come out after the delay, not before', async () => {
    const out: number[] = [];
    const b = new TraceBatch((f) => out.push(f.req), undefined, 30);
    const start = performance.now();
    b.add(line(7));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (out.length === 0 && performance.now() - start < 2_000) return;
        clearInterval(poll);
        resolve();
      }, 1);
    });
    assert.deepEqual(out, [7]);
    assert.ok(performance.now() - start >= 29, `written after ${performance.now() - start} ms`);
  });
});
