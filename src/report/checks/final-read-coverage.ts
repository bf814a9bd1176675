// The agents count their acknowledged writes in their histograms (the windows' counts) and keep
// each one's key apart, in the list they hand the target's checker; the checker says how many of
// those writes it covered by a key it read on every live member. Fewer covered than counted are
// writes nobody looked for (a list cut short: an agent that exited before handing it over), and
// "nothing lost" would be said of writes never checked; more covered, writes counted twice.
import { agentLost, type Check, WINDOWS } from './check-kit.js';

export const finalReadCoverage = {
  id: 'finalReadCoverage',
  what: 'the final read covered every acknowledged write: the writes whose keys it read = the writes the agents’ histograms counted acknowledged',
  run: (r, fail, skip) => {
    const read = r.writes.finalRead;
    if (agentLost(r)) return skip('a load agent was lost: its writes are in neither count');
    if (read === undefined) return skip('the run made no final read');
    if (read.writes === undefined) return skip('a stored run from before the final read counted writes');
    const counted = Object.values(r.latency).reduce(
      (n, l) => n + WINDOWS.reduce((m, w) => m + (l[w]?.count ?? 0), 0),
      0,
    );
    if (read.writes !== counted)
      fail(
        `the final read covered ${read.writes} writes (${read.keys} keys), the agents' histograms counted ${counted} acknowledged`,
      );
  },
} as const satisfies Check;
