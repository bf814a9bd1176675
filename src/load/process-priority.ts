// Raising a load agent's CPU priority. The agent stands in for clients on other machines, which
// do not queue behind the nodes for CPU; on a machine the nodes saturate (the 2-core one at 5,000
// writes/s), a raised priority keeps its sends on schedule (bench load, nice -10 against none:
// send-lateness p99 0.8-1.0 ms against 2.6 ms at 1,000 writes/s). Linux gives each thread its own nice value and a new thread inherits its
// creator's, so every thread that exists now is set (V8's GC helpers among them: the main thread
// waits for them in every scavenge), and threads started later inherit it.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Sets `nice` on every thread of this process; false if the system refused (no CAP_SYS_NICE). */
export function raiseProcessPriority(nice: number): boolean {
  let tids: number[];
  try {
    tids = readdirSync('/proc/self/task').map(Number);
  } catch {
    tids = [0]; // not Linux: the process as the OS defines it
  }
  try {
    for (const tid of tids) setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
