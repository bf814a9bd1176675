// Two estimates of one clock: a load agent and its node's fault helper read the same kernel's
// monotonic clock, each probed from the harness on its own. Each offset is the remote monotonic
// clock less the harness's wall clock, which moves against it by at most the assumed drift
// between the two probes; beyond their ± and that, one of the estimates (and every stamp it
// moved) is wrong.
import { type Check, CLOCK_SLACK_MS, f } from './check-kit.js';
import { ASSUMED_DRIFT_PPM } from '../../measure/clock-offset.js';

export const oneKernelOneClock = {
  id: 'oneKernelOneClock',
  what: 'one kernel, one clock: an agent’s and its node’s monotonic offsets agree within their ±',
  run: (r, fail, skip) => {
    const hosts = r.clocks?.hosts ?? {};
    let n = 0;
    for (const [host, c] of Object.entries(hosts)) {
      const other = c.sharesKernelWith === undefined ? undefined : hosts[c.sharesKernelWith];
      if (other === undefined) continue;
      const pairs = [
        ['before', c.before, other.before],
        ['after', c.after, other.after],
      ] as const;
      for (const [when, a, b] of pairs) {
        if (a === null || b === null) continue;
        n++;
        const apartS = Math.abs(Date.parse(a.at) - Date.parse(b.at)) / 1000;
        const allowed =
          a.uncertaintyMs + b.uncertaintyMs + (ASSUMED_DRIFT_PPM * apartS) / 1000 + CLOCK_SLACK_MS;
        const d = Math.abs(a.monoOffsetMs - b.monoOffsetMs);
        if (d > allowed)
          fail(
            `${host} and ${c.sharesKernelWith} ${when}: ${f(d)} ms apart, allowed ${f(allowed)} (± ${f(a.uncertaintyMs)} and ${f(b.uncertaintyMs)}, ${apartS.toFixed(1)} s between the probes)`,
          );
      }
    }
    if (n === 0) skip('every stamp came from this host’s clock: no two estimates of one remote kernel');
  },
} as const satisfies Check;
