// ZooKeeper's leader is named by one log line ("Peer state changed: leading"), the votes it
// compared by others ("Notification: …"): FLE decides on the best vote it heard in its round, so
// the two must agree.
// Votes heard carry the peer epoch (four numbers); a run stored before they were recorded has
// each survivor's own proposal instead (three), which is not what FLE compared.
import type { Check } from './check-kit.js';
import { bestScored } from '../fle-votes.js';

export const zkBestVote = {
  id: 'zkBestVote',
  what: 'ZooKeeper’s leader is the best vote it heard in its deciding round',
  run: (r, fail, skip) => {
    const votes = Object.values(r.leaders.scores);
    if (r.leaders.oracle !== 'zookeeper-fle') return skip(`${r.target} does not elect by ZooKeeper's FLE`);
    if (votes.length === 0 || !votes.every((v) => v.length === 4))
      return skip('the log gave no votes heard with their peer epoch');
    const best = bestScored(r.leaders.scores);
    if (best.length !== 1 || best[0] !== r.leaders.elected)
      fail(`${r.leaders.elected} elected, the best vote heard was for ${best.join(', ')}`);
  },
} as const satisfies Check;
