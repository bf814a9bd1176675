// The relay's lateness loosens the link check (links-measured.ts) by what the relay says of
// itself. Held against a second clock: the probe's mean round trips (the lateness is a mean too)
// over the configured RTT and the undelayed route's mean. One-sided: a stall of the probe's thread, or of the
// relay's thread before it stamps an arrival, lengthens round trips the relay never counts late.
import { type Check, LINK_SLACK_MS, LINK_SHARE, LINK_JITTERS, f, linkAllowance } from './check-kit.js';

export const relayLateness = {
  id: 'relayLateness',
  what: `the relay's own account of each pair's late releases no more than the probe saw: its mean round trip less the configured RTT and the undelayed route's mean, + max(${LINK_SLACK_MS} ms, ${LINK_SHARE * 100} %) + ${LINK_JITTERS} jitters`,
  run: (r, fail, skip) => {
    const linkReadings = r.linkReadings;
    const kept = linkReadings?.readings[linkReadings.kept];
    const { meanRtts, undelayedMeanMs, latenessMs } = kept ?? {};
    if (!meanRtts || undelayedMeanMs === undefined || !latenessMs)
      return skip(
        linkReadings
          ? 'the link reading has no mean round trips or lateness'
          : `the ${r.shaping.mode} shaping reads no links`,
      );
    let n = 0;
    for (const [a, row] of Object.entries(r.links))
      for (const [b, link] of Object.entries(row)) {
        const mean = meanRtts[`${a}>${b}`];
        const late = latenessMs[`${a}>${b}`];
        if (a === b || mean === undefined || late === undefined) continue;
        n++;
        const seen = mean - undelayedMeanMs - link.configuredRttMs;
        const allowed = linkAllowance(link);
        if (late > seen + allowed)
          fail(
            `${a}→${b}: the relay counted ${f(late)} ms of late releases; the probe's mean ${f(mean)} ms − the undelayed ${f(undelayedMeanMs)} − configured ${f(link.configuredRttMs)} = ${f(seen)} (allowed +${f(allowed)})`,
          );
      }
    if (n === 0) skip('no pair of data centers has both a mean round trip and a lateness');
  },
} as const satisfies Check;
