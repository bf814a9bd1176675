// The outages are the agents' stamps; the first commit is a second source only where the new
// leader stamps it itself (the POLE node's `first-commit` event). ZooKeeper's and etcd's figure is
// the least of the same agents' first acknowledgements: held against them, it could not fail.
import { type Check, CLOCK_SLACK_MS, f } from './check-kit.js';

export const outageAfterFirstCommit = {
  id: 'outageAfterFirstCommit',
  what: 'outage ≥ 0 and ≥ the new leader’s own first commit',
  run: (r, fail, skip) => {
    const noFault = r.recovery.faultAtS === null;
    const first = r.recovery.firstCommitMs;
    if (noFault) return skip('no fault took the leader out');
    if (first === null) return skip('no first commit of a new leader was seen');
    if (r.recovery.firstCommitFrom !== 'leader')
      return skip(
        `no independent source: ${r.target}'s first commit is the agents' own first acknowledgement of the new epoch`,
      );
    let n = 0;
    for (const [dc, c] of Object.entries(r.recovery.perDc)) {
      if (c.outageMs === null) continue;
      n++;
      if (c.outageMs < 0) fail(`${dc} ${f(c.outageMs)} ms`);
      else if (c.outageMs < first - CLOCK_SLACK_MS)
        fail(`${dc} ${f(c.outageMs)} ms, before the first commit at ${f(first)} ms`);
    }
    if (n === 0) skip('no data center saw a write of the new epoch acknowledged');
  },
} as const satisfies Check;
