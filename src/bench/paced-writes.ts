// An open-loop writer: `rate` messages a second for `seconds`, the ones due by now written on every
// 1 ms tick, so a slow reader never slows the schedule (no catching up by waiting).
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Writes `message` at `rate` a second for `seconds`; resolves with how many were written. */
export async function pacedWrites(
  socket: Socket,
  message: Buffer,
  rate: number,
  seconds: number,
): Promise<number> {
  const total = Math.round(rate * seconds);
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; sent < due; sent++) socket.write(message);
      if (sent === total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  return sent;
}
