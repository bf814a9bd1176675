import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WakeClock, hrMs } from '../../src/load/wake-clock.js';

describe('wake clock (the load agent’s sub-millisecond wake-ups)', () => {
  it('wakes the main thread at the requested time, never before it', async () => {
    const clock = await WakeClock.start();
    try {
      const lateness: number[] = [];
      for (let i = 0; i < 50; i++) {
        const due = hrMs() + 0.3 + (i % 5) * 0.2;
        const at = await new Promise<number>((resolve) => clock.wakeAt(due, () => resolve(hrMs())));
        assert.ok(at >= due, `woke ${due - at} ms early`);
        lateness.push(at - due);
      }
      lateness.sort((a, b) => a - b);
      // setTimeout could not do a 0.3-1.1 ms sleep at all; the median must be well under 1 ms even on
      // a busy machine (loose bound: the point is sub-millisecond, not a benchmark).
      assert.ok(lateness[25]! < 1, `median lateness ${lateness[25]} ms`);
    } finally {
      await clock.close();
    }
  });

  it('a new request replaces the pending one; cancel drops it', async () => {
    const clock = await WakeClock.start();
    try {
      const calls: string[] = [];
      clock.wakeAt(hrMs() + 1, () => calls.push('first'));
      await new Promise<void>((resolve) =>
        clock.wakeAt(hrMs() + 5, () => {
          calls.push('second');
          resolve();
        }),
      );
      clock.wakeAt(hrMs() + 2, () => calls.push('cancelled'));
      clock.cancel();
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(calls, ['second']);
    } finally {
      await clock.close();
    }
  });
});
