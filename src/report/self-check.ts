// The run checks its own figures: where two figures of a result measure the same thing by different
// means, or must add up, they are held against each other, and every disagreement is named with
// its numbers. Pure, on the result alone, so `pole-bench report --check DIR` runs the same checks
// on a stored run. A violation does not stop a run from writing everything it measured; it says
// which figures are suspect.
import { ASSUMED_DRIFT_PPM } from '../measure/clock-offset.js';
import { USER_HZ } from '../measure/proc-cpu.js';
import {
  FLOOR_OTHER_MAX_PCT,
  FLOOR_STALL_SHARE,
  FLOOR_STALL_SLACK_MS,
  floorStalls,
} from '../measure/node-floor.js';
import { bestScored } from './fle-votes.js';
import type { NotEvaluated, RunResult, SelfCheck } from './result.js';

export type CheckedResult = Omit<RunResult, 'selfCheck' | 'thresholds' | 'verdict'>;

/**
 * The outage is measured by the agents, the first commit by the new leader: different processes,
 * whose wall clocks (each the kernel's monotonic clock + an offset calibrated at its start,
 * util/wall-clock.ts) differ by well under this.
 */
export const CLOCK_SLACK_MS = 1;
/**
 * The floor against the window's mean less the model: max(this, FLOOR_SHARE of the floor, or
 * FLOOR_STANDARD_ERRORS standard errors of the traced writes' mean, from every write's spread: one
 * write in 64 of a short window is a small sample, and its mean strays from every write's by chance).
 */
export const FLOOR_SLACK_MS = 1;
export const FLOOR_SHARE = 0.2;
export const FLOOR_STANDARD_ERRORS = 3;
/** Fewer traced writes than this in a window are too few to hold every write's mean against. */
export const FLOOR_MIN_TRACED = 20;
/**
 * A measured link against its configured RTT, beyond what the machine's own round trip added then
 * (the undelayed route read beside it): max(this, LINK_SHARE of the RTT) + LINK_JITTERS times the
 * round trip's jitter (a median of a few dozen round trips strays with it, and a skewed
 * distribution's median sits below its mean). A doubled delay or a missing one is far outside.
 */
export const LINK_SLACK_MS = 2;
export const LINK_SHARE = 0.1;
export const LINK_JITTERS = 2;
/**
 * ZooKeeper's own election time against its log's: the lines are stamped to the ms, and a line is
 * logged a little after the time it brackets (seen within 1 ms in the fixtures' runs).
 */
export const TOOK_SLACK_MS = 5;
/**
 * ZooKeeper stops its election clock, records the figure in its metrics and only then logs "TOOK":
 * a thread preempted or a JVM paused between the two stamps that line late, which shortens its
 * figure against the lines' span and never lengthens it. Five JVMs electing at once on two cores
 * can log it several ms late; lines timed when read instead of when logged are late by tens of ms.
 */
export const TOOK_LOG_STALL_MS = 15;

/**
 * Every check a run makes, by a stable id, each comparing figures that come from different
 * measurements (docs/runs.md has the table of what each compares). Each is listed in every result:
 * held, violated, or not evaluated with why. The test that perturbs one figure per check has a row
 * for every id (test/unit/self-check-table.test.ts).
 */
export const CHECKS = {
  outageAfterFirstCommit: 'outage ≥ 0 and ≥ the new leader’s own first commit',
  longestDuringOutage: 'the longest write of “during” ≥ the outage − one send interval (where none failed)',
  longestSilence:
    'the longest write ≥ the longest silence − one send interval (constant arrivals, none failed)',
  oneLeaderBefore: 'one leader through “before”: no leader change before the fault',
  oneKernelOneClock:
    'one kernel, one clock: an agent’s and its node’s monotonic offsets agree within their ±',
  phasesInOrder: 'recovery phases in order (detected ≤ elected ≤ serving ≤ first commit)',
  tracedFloor: `every write's mean − the paper model within max(${FLOOR_SLACK_MS} ms, ${FLOOR_SHARE * 100} %, ${FLOOR_STANDARD_ERRORS} standard errors) of the traced floor, with or without its one farthest traced write (windows of ${FLOOR_MIN_TRACED} traced writes or more)`,
  spreadBound:
    'every window’s spread of every write within what its mean and longest write allow (sd² ≤ (max − mean) × mean)',
  linksMeasured: `every link measured within max(${LINK_SLACK_MS} ms, ${LINK_SHARE * 100} %) + ${LINK_JITTERS} jitters of its configured RTT, beyond the undelayed route's round trip read beside it (and over it by no more than the relay says it released the pair late)`,
  relayLateness: `the relay's own account of each pair's late releases no more than the probe saw: its mean round trip less the configured RTT and the undelayed route's mean, + max(${LINK_SLACK_MS} ms, ${LINK_SHARE * 100} %) + ${LINK_JITTERS} jitters`,
  calibratedFloorQuiet: `the calibrated floor taken on a quiet machine: its means within max(${FLOOR_STALL_SLACK_MS} ms, ${FLOOR_STALL_SHARE * 100} %) of their medians, at most ${FLOOR_OTHER_MAX_PCT} % of a core of other work beside it`,
  finalReadCoverage:
    'the final read covered every acknowledged write: the writes whose keys it read = the writes the agents’ histograms counted acknowledged',
  zkBestVote: 'ZooKeeper’s leader is the best vote it heard in its deciding round',
  zkTookTime: 'ZooKeeper’s own election time agrees with its log’s times',
  nodeTunables: 'every POLE node started with the glibc tunables the report names',
  relayCpu: "the relay's threads' CPU within the harness process's, + a tick either way",
  noNegative: 'no negative duration',
} as const;
export type CheckId = keyof typeof CHECKS;

const WINDOWS = ['warmup', 'before', 'degraded', 'during', 'after'] as const;
/** The latency histograms keep 3 significant digits: a figure read from one is within 1 %. */
const HISTOGRAM_SLACK = 1.01;
/** Fields that hold a duration in ms (besides the latency stats') and can never be negative. */
const STAT_FIELDS = ['mean', 'sentMean', 'p50', 'p90', 'p99', 'p999', 'max'] as const;
/** Fields named …Ms that may be negative: clock offsets (result.clocks). */
const SIGNED_MS: readonly string[] = ['offsetMs', 'monoOffsetMs'];

export function selfCheck(r: CheckedResult): SelfCheck {
  const checked: string[] = [];
  const violations: string[] = [];
  const notEvaluated: NotEvaluated[] = [];
  // `skip(why)` says the run gave the check nothing to hold (said once, the first reason kept); a
  // check that failed anything was evaluated whatever else it skipped.
  const check = (
    id: CheckId,
    run: (fail: (why: string) => void, skip: (why: string) => void) => void,
  ): void => {
    const what = CHECKS[id];
    const before = violations.length;
    let skipped: string | undefined;
    run(
      (why) => violations.push(`${what}: ${why}`),
      (why) => {
        skipped ??= why;
      },
    );
    if (skipped !== undefined && violations.length === before)
      notEvaluated.push({ check: what, why: skipped });
    else checked.push(what);
  };
  const f = (v: number): string => v.toFixed(2);
  const noFault = r.recovery.faultAtS === null;

  // The outages are the agents' stamps; the first commit is a second source only where the new
  // leader stamps it itself (the POLE node's `first-commit` event). ZooKeeper's and etcd's figure is
  // the least of the same agents' first acknowledgements: held against them, it could not fail.
  check('outageAfterFirstCommit', (fail, skip) => {
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
  });

  // A write sent just after the fault can only be acknowledged once the new epoch commits: the
  // longest write of the window (the agents' histograms) is at least the outage (their first-ack
  // stamps) less the time to the first write sent after the fault. Unless writes failed: such a
  // write may have given up (its deadline) instead of waiting. Only where the fault took the
  // leader out: after a link change the old leader serves on until it resigns, so writes are
  // acknowledged in its epoch all through the "outage".
  check('longestDuringOutage', (fail, skip) => {
    if (noFault) return skip('no fault took the leader out');
    if (r.leaders.cause?.action === 'link')
      return skip('a link change: the old leader serves on through the “outage”');
    let n = 0;
    for (const [dc, c] of Object.entries(r.recovery.perDc)) {
      if ((r.latency[dc]?.failed ?? 0) > 0) continue;
      const max = r.latency[dc]?.during?.max ?? null;
      const rate = r.workload.rate * (r.workload.share[dc] ?? 0);
      if (c.outageMs === null || max === null || rate <= 0) continue;
      n++;
      const interval = 1000 / rate;
      if (max < c.outageMs - interval - CLOCK_SLACK_MS)
        fail(`${dc}: longest ${f(max)} ms, outage ${f(c.outageMs)} ms, a write every ${f(interval)} ms`);
    }
    if (n === 0)
      skip('writes failed in every data center with an outage (one may have given up instead of waiting)');
  });

  // The longest silence is the outage's twin: the first write sent after a silence began (within
  // one send interval of its start, with constant arrivals) can only be acknowledged after it
  // ended, as no acknowledgement came in between; so some write took at least the silence less
  // that interval. Poisson arrivals have no bound on the gap between sends, and a failed write
  // may have given up instead of waiting: then there is nothing to hold the silence against.
  check('longestSilence', (fail, skip) => {
    if (r.workload.arrival !== 'constant') return skip('Poisson arrivals: no bound on the gap between sends');
    let n = 0;
    for (const [dc, c] of Object.entries(r.recovery.perDc)) {
      const l = r.latency[dc];
      if (l === undefined || l.failed > 0 || l.lost !== null || c.longestAckGapMs === null) continue;
      const rate = r.workload.rate * (r.workload.share[dc] ?? 0);
      const maxes = WINDOWS.map((w) => l[w]?.max ?? null).filter((m): m is number => m !== null);
      if (rate <= 0 || maxes.length === 0) continue;
      n++;
      const longest = Math.max(...maxes);
      const interval = 1000 / rate;
      if (longest < c.longestAckGapMs - interval - CLOCK_SLACK_MS)
        fail(
          `${dc}: longest write ${f(longest)} ms, silence ${f(c.longestAckGapMs)} ms, a write every ${f(interval)} ms`,
        );
    }
    if (n === 0) skip('no data center without failed writes had a silence measured');
  });

  // The "before" window's model and floor are the initial leader's. A leader that took over with
  // no fault behind it (a follower that stopped hearing a leader stalled past syncLimit on a busy
  // machine) makes that window a mix of two leaders and an outage, held against the wrong
  // prediction.
  check('oneLeaderBefore', (fail) => {
    const end = r.recovery.faultAtS ?? Infinity;
    for (const u of r.elections.unprovoked)
      if (u.atS < end)
        fail(
          `${u.leader} took over from ${r.leaders.initial ?? 'nobody'} at ${u.atS.toFixed(2)} s with no fault`,
        );
  });

  // Two estimates of one clock: a load agent and its node's fault helper read the same kernel's
  // monotonic clock, each probed from the harness on its own. Each offset is the remote monotonic
  // clock less the harness's wall clock, which moves against it by at most the assumed drift
  // between the two probes; beyond their ± and that, one of the estimates (and every stamp it
  // moved) is wrong.
  check('oneKernelOneClock', (fail, skip) => {
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
  });

  check('phasesInOrder', (fail, skip) => {
    const order: Array<[string, number | null]> = [
      ['detected', r.recovery.detectMs],
      ['elected', r.recovery.electedMs],
      ['serving', r.recovery.servingMs],
      ['first commit', r.recovery.firstCommitMs],
    ];
    const seen = order.filter((p): p is [string, number] => p[1] !== null);
    if (seen.length < 2) return skip('fewer than two recovery phases were seen');
    for (let i = 1; i < seen.length; i++)
      if (seen[i]![1] < seen[i - 1]![1])
        fail(`${seen[i]![0]} ${f(seen[i]![1])} ms before ${seen[i - 1]![0]} ${f(seen[i - 1]![1])} ms`);
  });

  // The agents' histograms of every write against the members' stamps of a sample of them: the
  // window's mean less the model is what the nodes and pole-bench add, which the traced writes
  // measure directly (their time less their network part).
  check('tracedFloor', (fail, skip) => {
    if (r.floor.source !== 'traced') return skip(`the floor is ${r.floor.source}, not traced by the members`);
    let n = 0;
    let most = 0;
    for (const [dc, floors] of Object.entries(r.floor.perDc))
      for (const w of ['before', 'after'] as const) {
        const floor = floors[w];
        const model = r.model[dc]?.[w] ?? null;
        const every = r.latency[dc]?.[w];
        const mean = every?.sentMean ?? null;
        if (floor === null || model === null || mean === null) continue;
        const off = mean - model - floor;
        const traced = r.anatomy.perDc[dc]?.[w];
        most = Math.max(most, traced?.writes ?? 0);
        if (traced === undefined || traced.writes < FLOOR_MIN_TRACED) continue;
        n++;
        // The traced writes are a sample of the window's, so their mean strays from every
        // write's by sd/√n, with sd every write's spread. A stall that delays a second of writes
        // widens that spread but may hit no traced write, leaving the sample's own sd small: the
        // sample's sd stands in only for stored runs that lack every write's.
        const se = (every?.sentSd ?? traced.sdMs ?? 0) / Math.sqrt(traced.writes);
        const allowed = Math.max(FLOOR_SLACK_MS, FLOOR_SHARE * floor, FLOOR_STANDARD_ERRORS * se);
        if (Math.abs(off) <= allowed) continue;
        // A mean of 25 is not normal when the writes' latencies have a long tail: one traced
        // write caught in a stall moves it by stall/25, beyond 3 standard errors far more often
        // than 3 in 1,000. So the floor is held
        // again without the one traced write that pulled it the way it is off: what one write
        // alone did is excused, what the rest of the sample still shows is not (a wrong
        // network part, a doubled delay, a floor taken from other writes move them all).
        const range = traced.beyondNetworkRangeMs;
        let without = '';
        if (range) {
          const farthest = off < 0 ? range.most : range.least;
          const floorWithout = (traced.writes * floor - farthest) / (traced.writes - 1);
          if (Math.abs(mean - model - floorWithout) <= allowed) continue;
          without = `, ${f(floorWithout)} without its farthest traced write`;
        }
        fail(
          `${dc} ${w}: mean ${f(mean)} − model ${f(model)} = ${f(mean - model)} ms, floor ${f(floor)} ms${without} (allowed ±${f(allowed)} ms)`,
        );
      }
    if (n === 0)
      skip(
        `too few traced writes: at most ${most} in a window with a model and a floor, ${FLOOR_MIN_TRACED} needed`,
      );
  });

  // The spread the floor's check takes its standard error from, held to what the window's own
  // figures allow: a variance is at most (max − mean)(mean − min) (Bhatia and Davis), and no
  // latency is under 0. A wrong, large sd would only widen that check's allowance, silently.
  check('spreadBound', (fail, skip) => {
    let n = 0;
    for (const [dc, l] of Object.entries(r.latency))
      for (const w of WINDOWS) {
        const s = l[w];
        if (!s || s.sentSd == null || s.sentMean == null || s.max == null) continue;
        n++;
        // The histogram's values are exact to 3 significant digits: 1 % either way.
        const bound = Math.sqrt(
          Math.max(0, s.max * HISTOGRAM_SLACK - s.sentMean) * s.sentMean * HISTOGRAM_SLACK,
        );
        if (s.sentSd > bound)
          fail(
            `${dc} ${w}: sd ${f(s.sentSd)} ms, mean ${f(s.sentMean)}, longest ${f(s.max)}: at most ${f(bound)}`,
          );
      }
    if (n === 0) skip('no window recorded every write’s spread');
  });

  const linkReadings = r.linkReadings;
  const kept = linkReadings?.readings[linkReadings.kept];
  check('linksMeasured', (fail, skip) => {
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
  });

  // The lateness above loosens the link check by what the relay says of itself. Held against a
  // second clock: the probe's mean round trips (the lateness is a mean too) over the configured
  // RTT and the undelayed route's mean. One-sided: a stall of the probe's thread, or of the
  // relay's thread before it stamps an arrival, lengthens round trips the relay never counts late.
  check('relayLateness', (fail, skip) => {
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
  });

  check('calibratedFloorQuiet', (fail, skip) => {
    const floorReadings = r.floor.source === 'calibrated' ? r.floor.readings : undefined;
    if (!floorReadings) return skip(`the floor is ${r.floor.source}, not calibrated after the load`);
    const k = floorReadings[r.floor.kept ?? floorReadings.length - 1];
    if (!k) return fail(`no calibration ${r.floor.kept} among ${floorReadings.length}`);
    const stalls = floorStalls(k);
    if (stalls.length > 0)
      fail(`${stalls.join('; ')} (the least stalled of ${floorReadings.length} calibrations)`);
  });

  // The agents count their acknowledged writes in their histograms (the windows' counts) and keep
  // each one's key apart, in the list they hand the target's checker; the checker says how many of
  // those writes it covered by a key it read on every live member. Fewer covered than counted are
  // writes nobody looked for (a list cut short: an agent that exited before handing it over), and
  // "nothing lost" would be said of writes never checked; more covered, writes counted twice.
  check('finalReadCoverage', (fail, skip) => {
    const read = r.writes.finalRead;
    if (Object.values(r.latency).some((l) => l.lost !== null))
      return skip('a load agent was lost: its writes are in neither count');
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
  });

  // ZooKeeper's leader is named by one log line ("Peer state changed: leading"), the votes it
  // compared by others ("Notification: …"): FLE decides on the best vote it heard in its round, so
  // the two must agree.
  // Votes heard carry the peer epoch (four numbers); a run stored before they were recorded has
  // each survivor's own proposal instead (three), which is not what FLE compared.
  check('zkBestVote', (fail, skip) => {
    const votes = Object.values(r.leaders.scores);
    if (r.leaders.oracle !== 'zookeeper-fle') return skip(`${r.target} does not elect by ZooKeeper's FLE`);
    if (votes.length === 0 || !votes.every((v) => v.length === 4))
      return skip('the log gave no votes heard with their peer epoch');
    const best = bestScored(r.leaders.scores);
    if (best.length !== 1 || best[0] !== r.leaders.elected)
      fail(`${r.leaders.elected} elected, the best vote heard was for ${best.join(', ')}`);
  });

  // ZooKeeper times its election itself, on its monotonic clock; the run times the same span by the
  // stamps of its log lines. Disagreeing, the run's ZooKeeper times are wrong (a misread stamp,
  // lines timed when read instead of when logged), and so is its elected figure. ZooKeeper 3.8
  // takes the start after its "LOOKING" line and before "New election" (between them it takes a
  // lock and may load its database from disk, which its figure then includes), and the end just
  // before "TOOK". So its
  // figure is at least the New election → TOOK span (less a stall before it logs TOOK) and at most
  // the LOOKING → TOOK span.
  check('zkTookTime', (fail, skip) => {
    const e = r.recovery.explain?.election;
    if (r.target !== 'zookeeper') return skip(`${r.target} does not time its own election`);
    if (!e || e.tookMs === null || e.tookFromMs === null || e.tookLoggedMs === null)
      return skip('no election with its "TOOK" line was seen after the fault');
    const [tookMs, from, logged] = [e.tookMs, e.tookFromMs, e.tookLoggedMs];
    // Stored runs without the LOOKING line: the start taken at "New election", as before.
    const looking = e.tookLookingMs ?? from;
    const span = logged - from;
    const widest = logged - looking;
    if (tookMs < span - TOOK_SLACK_MS - TOOK_LOG_STALL_MS)
      fail(`it says ${f(tookMs)} ms; its "New election" and "TOOK" lines are ${f(span)} ms apart`);
    if (tookMs > widest + TOOK_SLACK_MS)
      fail(
        e.tookLookingMs === null
          ? `it says ${f(tookMs)} ms; its "New election" and "TOOK" lines are ${f(span)} ms apart`
          : `it says ${f(tookMs)} ms; its "LOOKING" and "TOOK" lines are ${f(widest)} ms apart`,
      );
    if (e.atMs < from || e.atMs > logged)
      fail(`elected at ${f(e.atMs)} ms, outside its own election, ${f(from)} to ${f(logged)} ms`);
  });

  // The report names the tunables the harness gave the POLE nodes; each node says what its own
  // process read. Apart, a runtime lost them on the way (a container's Env, a task's start script),
  // and the report's line, and what it says of a killed node's death, is wrong for that node.
  check('nodeTunables', (fail, skip) => {
    const { nodeTunables, nodeTunablesSeen } = r.environment;
    if (nodeTunables === undefined || nodeTunablesSeen === undefined)
      return skip(`${r.target}'s members say nothing of the tunables they started with`);
    for (const [node, seen] of Object.entries(nodeTunablesSeen))
      if (seen !== nodeTunables)
        fail(`${node} read ${seen === null ? 'none' : `"${seen}"`}, not "${nodeTunables}"`);
  });

  // The relay's threads, read by the relay itself (their /proc/self/task/<tid>/stat), are part of
  // the harness process that holds them (its /proc/<pid>/stat): more would mean a thread counted
  // twice, or a window read over another span. (Our processes against the machine's /proc/stat is
  // no such check: /proc/stat's busy figures are per-tick samples, while a process's figure is
  // scaled to its scheduler runtime, so ours can exceed busy + irq + softirq by percents.)
  check('relayCpu', (fail, skip) => {
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
  });

  check('noNegative', (fail) => {
    for (const [path, v] of negativeDurations(r)) fail(`${path} = ${f(v)} ms`);
  });

  return { checked, violations, notEvaluated };
}

/** Every field of the result that holds a duration (a name ending in Ms, a latency stat) and is < 0. */
function negativeDurations(r: CheckedResult): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const walk = (v: unknown, path: string, statsHere: boolean): void => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, false));
    else if (v !== null && typeof v === 'object') {
      const isStats = 'count' in v && 'p99' in v;
      for (const [k, x] of Object.entries(v)) walk(x, path === '' ? k : `${path}.${k}`, isStats);
    } else if (typeof v === 'number' && v < 0) {
      const key = path.slice(path.lastIndexOf('.') + 1);
      // A clock offset is a signed difference between two clocks, not a duration.
      if (SIGNED_MS.includes(key)) return;
      if (key.endsWith('Ms') || (statsHere && (STAT_FIELDS as readonly string[]).includes(key)))
        out.push([path, v]);
    }
  };
  walk(r, '', false);
  return out;
}

/** How far a link's reading may be from its configured RTT: max(2 ms, 10 %) + 2 jitters. */
function linkAllowance(link: { readonly configuredRttMs: number; readonly jitterMs?: number }): number {
  return Math.max(LINK_SLACK_MS, LINK_SHARE * link.configuredRttMs) + LINK_JITTERS * (link.jitterMs ?? 0);
}
