// The relay's threads, read by the relay itself (their /proc/self/task/<tid>/stat), are part of
// the harness process that holds them (its /proc/<pid>/stat): more would mean a thread counted
// twice, or a window read over another span. (Our processes against the machine's /proc/stat is
// no such check: /proc/stat's busy figures are per-tick samples, while a process's figure is
// scaled to its scheduler runtime, so ours can exceed busy + irq + softirq by percents.)
import { type Check, f } from './check-kit.js';
import { USER_HZ } from '../../measure/proc-cpu.js';

export const relayCpu = {
  id: 'relayCpu',
  what: "the relay's threads' CPU within the harness process's, + a tick either way",
  run: (r, fail, skip) => {
    const cpu = r.cpu;
    const harnessPct = cpu.groups.harness?.pctOfCore;
    const relayPct = cpu.shapingPctOfCore;
    if (!cpu.sampled || cpu.windowS <= 0) return skip('CPU was not sampled');
    if (harnessPct === undefined || relayPct === null)
      return skip('no relay thread in the harness process (another shaping, or a remote harness)');
    const edges = (100 * 2) / (USER_HZ * cpu.windowS);
    if (relayPct > harnessPct + edges)
      fail(
        `the relay's threads ${f(relayPct)} % of a core, the harness process that holds them ${f(harnessPct)} (at most ${f(edges)} more allowed)`,
      );
  },
} as const satisfies Check;
