// A thread's own CPU time, from the kernel's per-thread scheduler statistics (Linux). Node has no
// per-thread CPU clock; process.cpuUsage() sums every thread of the process, which cannot tell a
// relay's threads or an echo thread from the rest of the harness.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The kernel's id of the calling thread, to read its CPU time from another thread. */
export function ownThreadId(): number | null {
  try {
    const m = /task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** CPU time of a thread from /proc (Linux), ms; null where it cannot be read. */
export function threadCpuMs(schedstatPath: string): number | null {
  try {
    const ns = Number(readFileSync(schedstatPath, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** The calling thread's CPU time so far, ms; null where it cannot be read. */
export function ownThreadCpuMs(): number | null {
  return threadCpuMs('/proc/thread-self/schedstat');
}

/** CPU time so far of a whole process, every thread of it summed, ms; null where it cannot be read. */
export function processCpuMs(pid: number): number | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  // A thread that ends between the listing and its read counts nothing.
  return tasks.reduce((ms, t) => ms + (threadCpuMs(`/proc/${pid}/task/${t}/schedstat`) ?? 0), 0);
}
