// CPU time of a process from /proc, for the benches and the run's self-check alike.
import { readFile } from 'node:fs/promises';

/** /proc's clock tick (USER_HZ): 100 on every Linux this runs on. */
export const USER_HZ = 100;

/** utime + stime of a process so far, in clock ticks; null when it is gone or there is no /proc. */
export async function processCpuTicks(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  } catch {
    return null;
  }
}
