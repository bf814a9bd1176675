// A node's watch on its own event loop: a timer that ticks every LOOP_TICK_MS notices when it could
// not (a large state encoded in one go, a long GC, the process not scheduled on a busy machine) and
// everything else on the loop waited as long. Said as an event, so that a report can tell a slow
// node from a slow network. What it measures is how late the tick ran: the loop was held at least
// that long, and at most one tick longer.
import { performance } from 'node:perf_hooks';

/** How often the watch's timer runs. */
export const LOOP_TICK_MS = 20;

/**
 * Stalls at least this long are reported: a heartbeat period is 50 ms or more and a write's round
 * trip on a LAN a few ms, so 20 ms held is already seen in the latency figures.
 */
export const LOOP_STALL_MS = 20;

/** Calls `onStall` with the ms the loop was held, rounded, for every stall of at least `stallMs`. */
export function watchLoopStalls(
  onStall: (ms: number) => void,
  stallMs = LOOP_STALL_MS,
  tickMs = LOOP_TICK_MS,
): NodeJS.Timeout {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const held = now - last - tickMs;
    last = now;
    if (held >= stallMs) onStall(Math.round(held));
  }, tickMs);
  // The watch alone never keeps a process alive.
  timer.unref();
  return timer;
}
