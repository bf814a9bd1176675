// Every link the run measured through the shaping (a probe's round trips between data centers)
// against its configured RTT, beyond the machine's own round trip read beside it: a doubled delay,
// a missing one or a link shaped in one direction only is far outside the allowance.
import { type Check, LINK_SLACK_MS, LINK_SHARE, LINK_JITTERS, f, linkAllowance } from './check-kit.js';

export const linksMeasured = {
  id: 'linksMeasured',
  what: `every link measured within max(${LINK_SLACK_MS} ms, ${LINK_SHARE * 100} %) + ${LINK_JITTERS} jitters of its configured RTT, beyond the undelayed route's round trip read beside it (and over it by no more than the relay says it released the pair late)`,
  run: (r, fail, skip) => {
    const linkReadings = r.linkReadings;
    const kept = linkReadings?.readings[linkReadings.kept];
    if (!linkReadings) return skip(`the ${r.shaping.mode} shaping reads no links`);
    if (!kept) return fail(`no reading ${linkReadings.kept} among ${linkReadings.readings.length}`);
    let n = 0;
    for (const [a, row] of Object.entries(r.links))
      for (const [b, link] of Object.entries(row)) {
        if (a === b || link.measuredRttMs === null) continue;
        n++;
        const beyond = link.measuredRttMs - kept.undelayedMs;
        const allowed = linkAllowance(link);
        // A delayed chunk waits for the relay's clock to wake its thread, which the undelayed
        // route never does: what the relay itself counted of that lateness may add to the
        // figure, never take from it (a mean of every release against a median round trip).
        const late = kept.latenessMs?.[`${a}>${b}`] ?? 0;
        const over = beyond - link.configuredRttMs;
        if (over > allowed + late || -over > allowed)
          fail(
            `${a}→${b}: measured ${f(link.measuredRttMs)} ms − the undelayed ${f(kept.undelayedMs)} = ${f(beyond)}, configured ${f(link.configuredRttMs)} (allowed ±${f(allowed)}` +
              (late > 0 ? `, and ${f(late)} of the relay's late releases over` : '') +
              ')',
          );
      }
    if (n === 0) skip('no link between two data centers was measured');
  },
} as const satisfies Check;
