// CPU time of a process from /proc, for the benches and the run's self-check alike.
import { readFile } from 'node:fs/promises';

/** /proc's clock tick (USER_HZ): 100 on every Linux this runs on. */
export const USER_HZ = 100;

/** utime + stime of a process so far, in clock ticks; null when it is gone or there is no /proc. */
export async function processCpuTicks(pid: number): Promise<number | null> {
  try {
    return parseProcessCpuTicks(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** utime + stime from the text of a /proc/<pid>/stat; null when it does not read as one. */
export function parseProcessCpuTicks(stat: string): number | null {
  // Fields after the command name (which may hold spaces and parentheses) start after the last ')'.
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return Number.isFinite(ticks) ? ticks : null;
}
