// With reads, the agents write every operation into the history as it ends, and count the same
// writes apart in their totals (sent, acknowledged, failed). The safety verdict is the history's:
// a write missing from it is a write no model was checked against, and one there twice or
// completed there but failed in the totals says the two books were kept of different writes.
import { agentLost, type Check } from './check-kit.js';

export const historyAgrees = {
  id: 'historyAgrees',
  what: "the history's writes = the writes the agents sent (attempted less those refused for too many in flight), its completed writes = the writes they counted acknowledged",
  run: (r, fail, skip) => {
    const h = r.safety?.writes;
    if (r.safety === undefined) return skip('the run had no reads: no history');
    if (h === undefined) return skip('a stored run from before the history counted its writes');
    if (agentLost(r)) return skip('a load agent was lost: its operations are in neither book');
    const sent = r.writes.attempted - (r.writes.failedCodes?.OVERFLOW ?? 0);
    if (h.sent !== sent)
      fail(`the history holds ${h.sent} writes, the agents sent ${sent} (${r.writes.attempted} attempted)`);
    if (h.ok !== r.writes.acked)
      fail(`the history completed ${h.ok} writes, the agents counted ${r.writes.acked} acknowledged`);
  },
} as const satisfies Check;
