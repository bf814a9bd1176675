// report.md: a run's result for people. Sections in a fixed order (verdict, set-up, links, clocks, leaders,
// recovery, snapshots, elections, latency, timeline, charts, writes, self-check, resources, thresholds, environment), each rendered from result.json
// alone, so a stored result can be re-rendered later. Pure: no clock, no files.
import { safetySection } from './safety-section.js';
import { targetNamed } from '../targets/registry.js';
import {
  NONE,
  cell,
  count,
  diffPercent,
  ms,
  msUnit,
  percent,
  rate,
  score,
  secUnit,
  table,
} from './format.js';
import {
  LOST_LISTED_MAX,
  suspectBecause,
  type LatencyStats,
  type RunResult,
  type WritesInfo,
} from './result.js';
import type { RecoveryExplain } from './recovery-explain.js';
import { ANATOMY_PARTS } from './latency-anatomy.js';
import { TRACE_FLUSH_MS } from '../node/trace/trace-batch.js';
import { faultWindowTable, sparklines, type TimelineMark } from './timeline-chart.js';
import { clocksSection } from './markdown-clocks.js';
import { elections, resources } from './markdown-long-run.js';
import type { ChartFile } from './charts/write-charts.js';

export const REPORT_SECTIONS = [
  'Set-up',
  'Links',
  'Leaders',
  'Recovery',
  'Snapshots',
  'Elections',
  'Latency per data center',
  'Latency against the model',
  'Latency anatomy',
  'Timeline',
  'Charts',
  'Writes',
  'Self-check',
  'Cross-checks',
  'Resources',
  'Thresholds',
  'Environment',
] as const;

/** `charts`: the SVG files written beside report.md (none when a stored result is re-rendered). */
export function renderReport(result: RunResult, charts: readonly ChartFile[] = []): string {
  const parts = [
    title(result),
    setUp(result),
    links(result),
    clocksSection(result),
    leaders(result),
    recovery(result),
    snapshots(result),
    elections(result),
    latency(result),
    againstModel(result),
    anatomy(result),
    timeline(result),
    chartsSection(charts),
    writes(result),
    safetySection(result),
    selfCheck(result),
    crossChecks(result),
    resources(result),
    thresholds(result),
    environment(result),
  ];
  // A section with nothing to say for this run (clocks, on one host) is left out.
  return `${parts.filter((p) => p !== '').join('\n\n')}\n`;
}

function title(r: RunResult): string {
  const failed = r.thresholds.filter((t) => !t.ok);
  let verdict: string;
  switch (r.verdict) {
    case 'passed':
      verdict =
        r.thresholds.length === 0
          ? '**Verdict: passed** (no thresholds given).'
          : `**Verdict: passed**: all ${r.thresholds.length} thresholds held.`;
      break;
    case 'threshold-failed':
      verdict = `**Verdict: threshold failed**: ${failed.length} of ${r.thresholds.length} thresholds did not hold (${failed.map((t) => `\`${t.expr}\``).join(', ')}).`;
      break;
    case 'suspect':
      verdict = `**Verdict: suspect**: the run's own figures do not hold together, so none of them (thresholds included) can be trusted: ${suspectBecause(r).join('; ')}.`;
      break;
    case 'run-failed':
      verdict = `**Verdict: run failed**${r.errors[0] !== undefined ? `: ${r.errors[0]}` : '.'}`;
      break;
  }
  const lines = [`# pole-bench run: ${r.topology.name}`, '', verdict];
  const v = r.selfCheck.violations;
  if (v.length > 0)
    lines.push(
      '',
      `**Figures suspect**: ${v.length} of the run's cross-checks did not hold (see Cross-checks): ${v.join('; ')}.`,
    );
  if (r.cpu.warning !== null)
    lines.push('', `**Self-check: take the latency figures with care**: ${r.cpu.warning}.`);
  if (r.errors.length > 0) lines.push('', 'Errors:', '', ...r.errors.map((e) => `- ${e}`));
  return lines.join('\n');
}

function setUp(r: RunResult): string {
  const dcs = table(
    ['Data center', 'Nodes', 'Share of writes'],
    r.topology.datacenters.map((dc) => [dc.name, dc.nodes.join(', '), percent(r.workload.share[dc.name])]),
  );
  const elapsedS = (Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000;
  const s = r.scenario;
  return [
    '## Set-up',
    '',
    `- Topology: **${r.topology.name}** (\`${r.topology.file}\`)`,
    `- System under test: ${targetNamed(r.target).title}`,
    `- Oracle: \`${r.leaders.oracle}\`${waitForText(r.leaders.electionWaitFor)}`,
    `- Runtime: ${r.runtime}`,
    `- Shaping: ${r.shaping.mode} (jitter ${r.shaping.jitter}, ${r.shaping.distribution}): ${r.shaping.reason}`,
    `- Workload: ${count(r.workload.rate)} writes/s of ${count(r.workload.size)} bytes, ${r.workload.arrival} arrivals`,
    `- Seed: ${r.seed}`,
    `- Duration: ${secUnit(s.durationMs / 1000)} (warm-up ${secUnit(s.warmupMs / 1000)}, settle ${secUnit(s.settleMs / 1000)} after the election)`,
    `- Started ${r.startedAt}, finished ${r.finishedAt} (${secUnit(elapsedS)} in all)`,
    '',
    dcs,
    ...faultSchedule(r),
  ].join('\n');
}

/**
 * The fault schedule as planned, in full (what a nemesis drew with it), so that a failing run can
 * be replayed from its report: the same file, seed and nemesis give the same schedule.
 */
function faultSchedule(r: RunResult): string[] {
  const faults = r.scenario.faults ?? [];
  if (faults.length === 0) return [];
  const n = r.scenario.nemesis;
  const head = n
    ? `Fault schedule (drawn faults by the nemesis: ${n.mix.join(', ')}, one every ${secUnit(n.everyS)}, each undone after ${secUnit(n.forS)}, seed ${n.seed}):`
    : 'Fault schedule:';
  const rows = faults.map((f) => [
    secUnit(f.atS),
    f.action,
    f.target,
    f.undoes !== undefined ? `undoes #${f.undoes}` : f.ref !== undefined ? `#${f.ref}` : '',
    f.drawn ? 'nemesis' : 'written',
  ]);
  return ['', head, '', table(['At', 'Fault', 'On', 'Pair', 'From'], rows)];
}

function waitForText(w: RunResult['leaders']['electionWaitFor']): string {
  if (w === null) return '';
  return w === 'live'
    ? '; the election waits for every member not known to be down (`election.waitFor: live`)'
    : "; the election waits for every member, the paper's rule (`election.waitFor: all`)";
}

function links(r: RunResult): string {
  const names = dcNames(r);
  const head = '## Links';
  if (names.length < 2) return `${head}\n\nOne data center: no delay between data centers.`;
  const rows = names.map((a) => [
    a,
    ...names.map((b) => {
      if (a === b) return NONE;
      const link = r.links[a]?.[b] ?? r.links[b]?.[a];
      if (!link) return NONE;
      const err = diffPercent(link.measuredRttMs, link.configuredRttMs);
      return `${ms(link.configuredRttMs)} / ${ms(link.measuredRttMs)} (${err})`;
    }),
  ]);
  return [
    head,
    '',
    `Round-trip time between data centers in ms: configured / measured through the ${r.shaping.mode} shaping before the load, the median round trip (measurement error).${linkReadingsNote(r)}`,
    '',
    table(['', ...names], rows),
  ].join('\n');
}

/** The kept calibration's medians, and the other work beside each calibration, where recorded. */
function calibrationMedians(f: RunResult['floor']): string {
  const k = f.readings?.[f.kept ?? -1];
  if (!k) return '';
  const others = f
    .readings!.map((x) => (x.otherPctOfCore == null ? '?' : x.otherPctOfCore.toFixed(0)))
    .join(', ');
  return ` Their medians: ${ms(k.leaderMedianMs)} and ${ms(k.followerMedianMs)} ms. Other work on the machine beside each calibration: ${others} % of a core.`;
}

/** What the probe's undelayed route read beside the links, and any reading taken again. */
function linkReadingsNote(r: RunResult): string {
  const lr = r.linkReadings;
  const kept = lr?.readings[lr.kept];
  if (!lr || !kept) return '';
  const late = Object.entries(kept.latenessMs ?? {});
  const note =
    ` A route of the same relay with no delay, read over the same span, took ${ms(kept.undelayedMs)} ms: the machine's own part of every figure.` +
    (late.length === 0
      ? ''
      : ` The relay released the pairs' round trips late by ${late.map(([p, v]) => `${p.replace('>', '→')} ${ms(v)}`).join(', ')} ms (its own clock; the undelayed route never waits for it).`) +
    probeSaw(kept);
  const others = lr.readings.filter((_, i) => i !== lr.kept);
  if (others.length === 0) return note;
  const said = others
    .map(
      (o) =>
        `${ms(o.undelayedMs)} ms (${Object.entries(o.rtts)
          .map(([p, v]) => `${p.replace('>', '→')} ${ms(v)}`)
          .join(', ')})`,
    )
    .join('; ');
  return `${note} The links were read ${lr.readings.length} times, while the undelayed route or the relay's releases read as a held-up machine; the quietest reading is shown, the others' undelayed route read ${said}.`;
}

/** What the probe's mean round trips showed beyond the configured RTT: the relay's lateness by a second clock. */
function probeSaw(kept: NonNullable<RunResult['linkReadings']>['readings'][number]): string {
  const { meanRtts, undelayedMeanMs } = kept;
  if (!meanRtts || undelayedMeanMs === undefined) return '';
  return ` By the probe's own clock, its mean round trips less the undelayed route's mean (${ms(undelayedMeanMs)} ms) came to ${Object.entries(
    meanRtts,
  )
    .map(([p, v]) => `${p.replace('>', '→')} ${ms(v - undelayedMeanMs)}`)
    .join(', ')} ms.`;
}

function leaders(r: RunResult): string {
  const l = r.leaders;
  const killFault = r.timeline.faults.find((f) => f.action === 'kill' && f.node === l.killed);
  const lines = [
    '## Leaders',
    '',
    `- Initial: ${l.initial ?? 'none observed'}`,
    `- Killed: ${l.killed ?? 'none'}${killFault ? ` at ${secUnit(killFault.atS)}` : ''}`,
    ...(l.cause && l.cause.action !== 'kill'
      ? [`- Taken out: ${l.cause.leader} by \`${l.cause.action} ${l.cause.node}\` at ${secUnit(l.cause.atS)}`]
      : []),
    `- Elected: ${l.elected ?? 'none observed'}${l.epoch !== null ? ` (epoch ${l.epoch})` : ''}, oracle \`${l.oracle}\``,
    ...l.resignations.map(
      (x) =>
        `- Resigned: ${x.leader} at ${secUnit(x.atS)} for ${x.successor} (scores: own ${score(x.own)}, ${x.successor} ${score(x.successorScore)})`,
    ),
  ];
  const entries = Object.entries(l.scores);
  if (entries.length === 0) {
    lines.push('', 'No scores were recorded for the deciding election.');
    return lines.join('\n');
  }
  const dcOf = nodeDatacenters(r);
  const rows = entries.map(([node, s]) => {
    const roles = [
      node === l.elected ? 'elected' : '',
      node === l.initial ? 'initial' : '',
      node === l.killed ? 'killed' : '',
    ].filter((x) => x !== '');
    return [node, dcOf.get(node) ?? NONE, score(s), roles.join(', ')];
  });
  const zk = l.oracle === 'zookeeper-fle';
  lines.push(
    '',
    zk
      ? `The votes ${l.elected} heard in its deciding round, in FastLeaderElection's order (peer epoch, zxid epoch, zxid counter, sid):`
      : 'Scores of the proposals seen in the deciding election:',
    '',
    table(['Node', 'Data center', 'Score', 'Role'], rows, [2]),
  );
  const unheard = Object.entries(l.unheard);
  if (unheard.length > 0)
    lines.push(
      '',
      `Not heard by ${l.elected} before it decided (FLE elects the best vote heard once a quorum agrees on it): ` +
        unheard.map(([node, s]) => `${node}, which proposed zxid epoch ${s[0]} counter ${s[1]}`).join('; ') +
        '.',
    );
  return lines.join('\n');
}

function recovery(r: RunResult): string {
  const rec = r.recovery;
  const cause = r.leaders.cause;
  const observed = (v: number | null): string => (v === null ? 'not observed' : ms(v));
  const rows = [
    ['Detected (first follower notices)', observed(rec.detectMs)],
    ['Elected (new leader knows it leads)', observed(rec.electedMs)],
    ['Serving (quorum acked NEWLEADER)', observed(rec.servingMs)],
    ['First commit in the new epoch', observed(rec.firstCommitMs)],
    ['Paper recovery (first commit − elected)', observed(rec.paperRecoveryMs)],
    ...(r.leaders.transferredTo !== null
      ? [
          [
            `Handed to ${r.leaders.transferredTo} (${targetNamed(r.target).option?.handOver ?? 'handed over'}), leads`,
            observed(rec.transferMs),
          ],
        ]
      : []),
  ];
  const at = rec.faultAtS ?? cause?.atS ?? null;
  const when =
    at === null
      ? ''
      : ` at ${secUnit(at)}${rec.scheduledAtS !== null && Math.abs(rec.scheduledAtS - at) >= 0.00005 ? ` (${ms((at - rec.scheduledAtS) * 1000)} ms after it was scheduled)` : ''}`;
  const intro = !cause
    ? 'Times in ms since the leader was taken out (no fault took it out in this run).'
    : cause.action === 'kill'
      ? `Times in ms since ${cause.leader} was killed${when}: every figure here counts from that instant.`
      : `Times in ms since \`${cause.action} ${cause.node}\` took the leader ${cause.leader} out${when}: every figure here counts from that instant.`;
  const clients = dcNames(r, Object.keys(rec.perDc)).map((dc) => {
    const outage = rec.perDc[dc]?.outageMs ?? null;
    const past = outage !== null && rec.firstCommitMs !== null ? outage - rec.firstCommitMs : null;
    const way = oneWayToDc(r, dc);
    const write = r.model[dc]?.after ?? null;
    return [
      dc,
      observed(outage),
      observed(rec.perDc[dc]?.longestAckGapMs ?? null),
      ms(past),
      way === null ? NONE : ms(way),
      ms(write),
      past !== null && write !== null ? signedMs(past, write) : NONE,
      count(r.latency[dc]?.failed ?? 0),
    ];
  });
  return [
    '## Recovery',
    '',
    intro,
    '',
    table(['Phase', 'ms'], rows, [1]),
    ...(rec.explain ? ['', 'What bounded each phase:', '', ...explanationLines(rec.explain)] : []),
    '',
    "What each data center's clients saw: the outage, from the fault to its first acknowledgement of a write committed in the new epoch; the longest silence, the longest its clients went without any acknowledgement (the silence that ended after the fault, while the new leader was not yet settled).",
    '',
    "Past the first commit: each outage less the new leader's own first commit. At the least, the commit's one-way delay from the new leader to the nearest server of the data center still up (a write that was already at the leader when it first committed); at the most, for a write the data center sent only once the leader served, that write's whole way, its modelled latency under the new leader (forward, quorum, reply). Beyond that is the client's own way back to a serving leader: a connection lost with the old leader, a reconnect, a write resent after it failed or timed out (counted per data center) and the retry's wait.",
    '',
    table(
      [
        'Data center',
        'Outage, ms',
        'Longest silence, ms',
        'Past the first commit, ms',
        'One-way from the leader',
        "A write's model after",
        'Past − model',
        'Failed writes',
      ],
      clients,
      [1, 2, 3, 4, 5, 6, 7],
    ),
  ].join('\n');
}

/**
 * The least one-way delay from the new leader's data center to a server of `dc` still up after the
 * fault (the configured round trip halved): the soonest its clients can hear of the first commit.
 * Null where the result does not say who leads after the fault.
 */
function oneWayToDc(r: RunResult, dc: string): number | null {
  const leader = r.leaders.transferredTo ?? r.leaders.elected;
  if (leader === null) return null;
  const dcOf = (n: string): string | undefined =>
    r.topology.datacenters.find((d) => d.nodes.includes(n))?.name;
  const from = dcOf(leader);
  const up = r.modelBasis?.after?.segments[0]?.members;
  const servers = (r.topology.datacenters.find((d) => d.name === dc)?.nodes ?? []).filter((n) =>
    up === undefined ? n !== r.leaders.killed : up.includes(n),
  );
  if (from === undefined || servers.length === 0) return null;
  if (from === dc) return 0;
  const rtt = r.links[from]?.[dc]?.configuredRttMs ?? r.links[dc]?.[from]?.configuredRttMs;
  return rtt === undefined ? null : rtt / 2;
}

/** The recovery's explanation (report/recovery-explain.ts) as one line per phase. */
function explanationLines(x: RecoveryExplain): string[] {
  return [
    `- Detected: ${detectedText(x.detection)}`,
    `- Elected: ${electedText(x.election, x.detection)}`,
    `- Synced: ${syncedText(x.sync, x.election)}`,
  ];
}

function detectedText(d: RecoveryExplain['detection']): string {
  if (d === null) return 'no member reported losing its leader after the fault.';
  const leader = d.leader ?? 'its leader';
  switch (d.kind) {
    case 'connection-closed':
      return `${d.node}'s connection to ${leader} closed (${ms(d.atMs)} ms).`;
    case 'timeout': {
      const what = d.reason === 'sync-timeout' ? 'not brought in sync' : 'nothing heard from it';
      return `${d.node} timed out on ${leader}: ${what} within its limit (\`${d.reason}\`, ${ms(d.atMs)} ms).`;
    }
    case 'other':
      return `${d.node} left ${leader} (\`${d.reason}\`, ${ms(d.atMs)} ms).`;
    case 'unreported':
      return `${d.node} lost ${leader} (${ms(d.atMs)} ms); how (a closed connection or a timeout) is not reported by ZooKeeper, whose log says \`${d.reason.replace(/^zk:/, '')}\`.`;
  }
}

function electedText(e: RecoveryExplain['election'], d: RecoveryExplain['detection']): string {
  const who = `${e.leader} (${ms(e.atMs)} ms)`;
  if (e.reason === null) {
    const span =
      e.tookFromMs !== null && e.tookLoggedMs !== null
        ? `, from its ${e.tookLookingMs !== null ? `"LOOKING" (${ms(e.tookLookingMs)} ms) or ` : ''}"New election" (${ms(e.tookFromMs)} ms) to its role built (${ms(e.tookLoggedMs)} ms)`
        : '';
    const took =
      e.tookMs !== null ? `; ZooKeeper's own figure: the election took ${ms(e.tookMs)} ms${span}` : '';
    return `${who}; why its election ended, and after how many rounds, is not reported by ZooKeeper${took}.`;
  }
  const again = (e.rounds ?? 1) - 1;
  const rounds =
    e.rounds === null
      ? ''
      : again === 0
        ? ' after one round'
        : ` after ${e.rounds} rounds (no decision before the retry timer re-sent its proposal ${again === 1 ? 'once' : `${again} times`})`;
  const t = e.timeoutMs !== null ? `T (${e.timeoutMs} ms)` : 'T';
  switch (e.reason) {
    case 'timer': {
      const unheard = e.unheard ?? [];
      const silent = unheard.length > 0 ? ` (${list(unheard)} did not)` : '';
      // The dead leader is still a member: a collection that waits for everybody waits T for it.
      const dead =
        d?.leader && unheard.includes(d.leader)
          ? `; ${d.leader}, the leader taken out, still counts among the members it waits for`
          : '';
      return `${who}${rounds}; the collection ended when ${t} ran out, not every member proposed${silent}${dead}.`;
    }
    case 'all-proposals':
      return `${who}${rounds}; every member proposed, so the collection ended at once, without waiting for ${t}.`;
    case 'all-live': {
      const down = e.down ?? [];
      const which = down.length > 0 ? ` (${list(down)} taken as down)` : '';
      return `${who}${rounds}; every member not known to be down proposed${which}, so the collection ended at once, without waiting for ${t} (election.waitFor: live).`;
    }
    case 'votes':
      return `${who}${rounds}; it adopted the leader that a quorum, that leader among it, had already settled on.`;
  }
}

function syncedText(s: RecoveryExplain['sync'], e: RecoveryExplain['election']): string {
  const parts: string[] = [];
  if (s.fetched)
    parts.push(
      `${e.leader} first fetched the history it lacked from ${s.fetched.from} (${s.fetched.kind}, ${count(s.fetched.txns)} txns)`,
    );
  const followers = s.followers;
  if (followers === null) {
    parts.push('how the new leader synced its followers (DIFF, TRUNC or SNAP) is not reported by ZooKeeper');
  } else if (followers.length === 0) {
    parts.push('no follower was synced');
  } else {
    // Followers that joined after the leader served did not bound this recovery: say so.
    const servedAt = s.servingAfterElectedMs === null ? null : e.atMs + s.servingAfterElectedMs;
    const kinds = [...new Set(followers.map((f) => f.kind))].map((kind) => {
      const of = followers.filter((f) => f.kind === kind);
      const names = of.map((f) =>
        servedAt !== null && f.atMs > servedAt
          ? `${f.node} ${ms(f.atMs - servedAt)} ms after serving`
          : f.node,
      );
      return `${of.length} ${of.length === 1 ? 'follower' : 'followers'} by ${kind} (${names.join(', ')})`;
    });
    parts.push(kinds.join(', '));
  }
  if (s.servingAfterElectedMs === null) {
    parts.push(`${e.leader} was not seen serving`);
  } else {
    const split =
      s.discoveryMs !== null && s.syncMs !== null
        ? ` (discovery ${ms(s.discoveryMs)} ms: a quorum acknowledging the new epoch; sync ${ms(s.syncMs)} ms: a quorum acknowledging what it was sent)`
        : '';
    parts.push(`serving ${ms(s.servingAfterElectedMs)} ms after elected${split}`);
  }
  return `${parts.join('; ')}.`;
}

/** "p5", "p4 and p5", "p3, p4 and p5". */
function list(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function snapshots(r: RunResult): string {
  const parts = ['## Snapshots', ''];
  parts.push(
    r.preload
      ? `Preloaded before the load: ${count(r.preload.writes)} znodes, ${mb(r.preload.bytes)} MB in ${secUnit(r.preload.ms / 1000)}.`
      : 'Nothing was preloaded.',
  );
  const stalls = r.loopStalls;
  if (stalls !== undefined) {
    // Results from before loopStallMs was recorded counted stalls from 100 ms.
    const from = `${r.loopStallMs ?? 100} ms`;
    parts.push(
      '',
      stalls.length === 0
        ? `No member's event loop stalled for ${from} or more.`
        : `Event-loop stalls of ${from} or more (the member answered nothing meanwhile): ${stalls
            .map((s) => `${s.node} ${s.count} (longest ${ms(s.longestMs)} ms, at ${secUnit(s.longestAtS)})`)
            .join('; ')}.`,
    );
  }
  if (r.snapshots.length === 0) {
    parts.push('', 'No member sent another a snapshot: every sync was a DIFF or a TRUNC.');
    return parts.join('\n');
  }
  const rows = r.snapshots.map((s) => [
    secUnit(s.atS),
    s.from,
    s.to,
    s.why ?? '-',
    mb(s.bytes),
    s.transferMs === null ? 'never installed' : ms(s.transferMs),
  ]);
  parts.push(
    '',
    'Snapshots sent from one member to another (sync: the leader bringing a follower in line; fetched: a new leader fetching history it lacked), from the moment the sender had it ready to the moment the receiver installed it:',
    '',
    table(['At', 'From', 'To', 'Why', 'MB', 'Transfer, ms'], rows, [4, 5]),
  );
  return parts.join('\n');
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}

function latency(r: RunResult): string {
  const rows: string[][] = [];
  for (const dc of dcNames(r, Object.keys(r.latency))) {
    const l = r.latency[dc];
    // Every acknowledged write is in one row: the warm-up and the outage are measured too.
    const windows = (['warmup', 'before', 'degraded', 'during', 'after'] as const).filter(
      (w) => w === 'before' || w === 'after' || (l?.[w]?.count ?? 0) > 0,
    );
    for (const w of windows) {
      const s: LatencyStats | null = l?.[w] ?? null;
      rows.push([
        dc,
        w,
        count(s?.count ?? null),
        ms(s?.mean),
        ms(s?.p50),
        ms(s?.p90),
        ms(s?.p99),
        ms(s?.p999),
        ms(s?.max),
      ]);
    }
  }
  // A data center whose agent's data was lost has dashes above; this says why they are not zeros.
  const lost = dcNames(r, Object.keys(r.latency)).flatMap((dc) => {
    const why = r.latency[dc]?.lost;
    return why == null ? [] : [`- ${dc}: no data: ${why}`];
  });
  return [
    '## Latency per data center',
    '',
    "Write latency in ms, from the intended send time (corrected for coordinated omission). Warm-up: the load's first seconds (measured, not modelled); before: warm-up to the first fault (every member up, every link as configured: the steady state the model describes); degraded, where there is one: from a fault that left the leader serving to the one that took it out (or the end), modelled over the members and links that fault left; during: from the fault that took the leader out to the start of after (the outage and the settle time); after: from the election plus the settle time to the end. A write still in flight when a fault struck counts in that fault's window. The rows hold every acknowledged write; the final read covered each of them or the run says how many it did not (Writes, Cross-checks).",
    '',
    table(
      ['Data center', 'Window', 'Count', 'Mean', 'p50', 'p90', 'p99', 'p99.9', 'Max'],
      rows,
      [2, 3, 4, 5, 6, 7, 8],
    ),
    ...(lost.length > 0 ? ['', ...lost] : []),
  ].join('\n');
}

/**
 * The mean against the paper's model (network only) and the node floor (everything else, measured
 * with no delay), kept in separate columns so a reader sees which part of a gap is which.
 */
function againstModel(r: RunResult): string {
  const rows: string[][] = [];
  for (const dc of dcNames(r, Object.keys(r.latency))) {
    const windows = r.latency[dc]?.degraded
      ? (['before', 'degraded', 'after'] as const)
      : (['before', 'after'] as const);
    for (const w of windows) {
      const s = r.latency[dc]?.[w] ?? null;
      const mean = s?.mean ?? null;
      const paper = r.model[dc]?.[w] ?? null;
      const floor = r.floor.perDc[dc]?.[w] ?? null;
      const predicted = paper !== null && floor !== null ? paper + floor : null;
      const overModel = s?.sentMean != null && paper !== null ? s.sentMean - paper : null;
      rows.push([
        dc,
        w,
        ms(mean),
        ms(paper),
        ms(floor),
        ms(overModel),
        ms(predicted),
        signedMs(mean, predicted),
        diffPercent(mean, predicted),
      ]);
    }
  }
  const f = r.floor;
  const how =
    f.source === 'traced'
      ? `Floor: what a write costs beside the network, from ${f.method}, ${count(f.writes)} writes. Beside it, the same quantity from every write of the window: its mean from the actual send time less the paper model; the two agree within max(1 ms, 20 %) or the run says so (Cross-checks).`
      : f.leaderMs === null && f.followerMs === null
        ? `Node floor ${f.method}.`
        : `Node floor: ${ms(f.leaderMs)} ms for a write sent to the leader, ${ms(f.followerMs)} ms for one a follower forwards (${count(f.writes)} writes; ${f.method}); a data center's floor mixes the two by the share of its live servers that leads.${calibrationMedians(f)}`;
  return [
    '## Latency against the model',
    '',
    "Mean latency in ms. Paper model: forwarding RTT to the window's leader plus its consensus latency θc, from the topology (network only). " +
      how +
      ' Δ: the mean (from the intended send time) against model + floor.',
    '',
    table(
      [
        'Data center',
        'Window',
        'Mean',
        'Paper model',
        'Floor',
        'Mean from send − model',
        'Model + floor',
        'Δ ms',
        'Δ %',
      ],
      rows,
      [2, 3, 4, 5, 6, 7, 8],
    ),
    ...modelBasis(r),
  ].join('\n');
}

/** What each window's model was taken over: its leader, the members it could count on, the links. */
function modelBasis(r: RunResult): string[] {
  const basis = r.modelBasis;
  if (!basis) return [];
  const lines = ['', "Each window's model is taken over the cluster as it stood then:", ''];
  for (const [w, b] of Object.entries(basis)) {
    const parts = b.segments.map(
      (p) =>
        `${b.segments.length > 1 ? `${p.fromS.toFixed(1)}-${p.toS.toFixed(1)} s: ` : ''}${p.leader !== undefined && p.leader !== b.leader ? `leader ${p.leader ?? 'none'}, ` : ''}${p.members.length > 0 ? `members ${p.members.join(', ')}` : 'no members'} (${p.state})${p.noModel ? `; **no model**: ${p.noModel}` : ''}`,
    );
    const weighted = b.segments.length > 1 ? ' (time-weighted over its parts)' : '';
    lines.push(
      `- ${w}, ${b.fromS.toFixed(1)}-${b.toS.toFixed(1)} s, leader ${b.leader ?? 'none'}${weighted}: ${parts.join('; ')}`,
    );
  }
  return lines;
}

/** Where each data center's milliseconds went, from the traced writes (report/latency-anatomy.ts). */
function anatomy(r: RunResult): string {
  const a = r.anatomy;
  const head = [
    '## Latency anatomy',
    '',
    `One write in ${count(a.sampleEvery)} is traced: the agent and every node on its way stamp each step on ${r.clocks ? "its host's monotonic clock, moved onto the harness's (Clocks)" : 'the clock they share'}. ` +
      `${count(a.complete)} of ${count(a.traced)} traced writes had every stamp (a write retried, cut by the leader's death, or committed in a killed node's last ${TRACE_FLUSH_MS} ms, whose lines it still held, has not). ` +
      'Mean ms per write: network is what the shaping was configured to add on the hops between data centers; ' +
      'transport the rest of those hops (relay lateness, sockets, waking the receiver); disk the log write and fsync at the leader and at the follower that completed the quorum; ' +
      'nodes the other time inside them (processing, waiting for the CPU or a group commit); client the hops between agent and server.',
  ];
  const rows: string[][] = [];
  const detail: string[][] = [];
  for (const dc of dcNames(r, Object.keys(a.perDc)))
    for (const w of ['before', 'after'] as const) {
      const b = a.perDc[dc]?.[w];
      if (!b) continue;
      rows.push([
        dc,
        w,
        count(b.writes),
        ms(b.totalMs),
        ms(b.networkMs),
        ms(b.transportMs),
        ms(b.diskMs),
        ms(b.nodesMs),
        ms(b.clientMs),
        ms(b.totalMs - b.networkMs),
      ]);
      // Critical-path order, whatever order the file stored them in.
      const parts = ANATOMY_PARTS.flatMap(({ name }) => {
        const v = b.parts[name];
        return v !== undefined && v >= 0.005 ? [`${name} ${ms(v)}`] : [];
      });
      detail.push([dc, w, parts.join('; ')]);
    }
  if (rows.length === 0)
    return [...head, '', 'No traced write was complete in the before and after windows.'].join('\n');
  return [
    ...head,
    '',
    table(
      [
        'Data center',
        'Window',
        'Writes',
        'Mean',
        'Network',
        'Transport',
        'Disk',
        'Nodes',
        'Client',
        'All but network',
      ],
      rows,
      [2, 3, 4, 5, 6, 7, 8, 9],
    ),
    '',
    'Step by step (mean ms per write, critical path in order):',
    '',
    table(['Data center', 'Window', 'Steps'], detail),
  ].join('\n');
}

/** mean − base, signed: (21.07, 20.75) → "+0.32". */
function signedMs(actual: number | null, base: number | null): string {
  if (actual === null || base === null) return NONE;
  const d = actual - base;
  return `${d > 0 ? '+' : d < 0 ? '-' : ''}${ms(Math.abs(d))}`;
}

function timeline(r: RunResult): string {
  const t = r.timeline;
  const marks: TimelineMark[] = t.faults.map((f) => ({ atS: f.atS, label: `${f.action} ${f.node}` }));
  const cause = r.leaders.cause;
  if (cause && r.recovery.electedMs !== null && r.leaders.elected !== null) {
    marks.push({ atS: cause.atS + r.recovery.electedMs / 1000, label: `${r.leaders.elected} elected` });
  }
  const parts = [
    '## Timeline',
    '',
    'Acknowledged writes per second and their p99, all data centers together; seconds from the load start.',
    '',
    sparklines(t.seconds, t.faults),
  ];
  // The edges: a second cut short is a rate over what it covered; the wait for the writes in
  // flight at the end is no second of load at all.
  const edges: string[] = t.seconds
    .filter((p) => p.lengthS !== undefined)
    .map((p) => `second ${p.t} covered ${secUnit(p.lengthS)}: its writes/s are over that`);
  if (t.afterLoad)
    edges.push(
      `not drawn: ${count(t.afterLoad.acked)} writes acknowledged and ${count(t.afterLoad.errors)} errors in the ${secUnit(t.afterLoad.lengthS)} after the load ended, while the agents waited for the writes in flight`,
    );
  if (edges.length > 0) parts.push('', `${capitalise(edges.join('; '))}.`);
  const stalls = (r.loopStalls ?? []).flatMap((m) =>
    (m.stalls ?? []).map((s) => ({ atS: s.atS, node: m.node, ms: s.ms })),
  );
  const around = faultWindowTable(t.seconds, marks, r.loopStalls !== undefined ? stalls : undefined);
  if (around !== '')
    parts.push(
      '',
      r.loopStalls !== undefined
        ? `Around the fault (stalls: the members whose event loop was held ${r.loopStallMs ?? 100} ms or more in that second):`
        : 'Around the fault:',
      '',
      around,
    );
  return parts.join('\n');
}

function chartsSection(charts: readonly ChartFile[]): string {
  if (charts.length === 0)
    return '## Charts\n\nNo charts: the load did not run, or this report was rendered from result.json alone.';
  const parts = ['## Charts', ''];
  for (const c of charts) parts.push(`![${c.title}](${c.file})`, '');
  parts.push(
    "Shaded the height of a panel: fault periods (red: a node killed or paused until it is back; orange: a partition or an isolation until healed; purple: a link away from its configured delay). Dark lines: faults; green dashes: a new leader serves. The pale strip on top: the latency windows of the tables (blue: before; grey: degraded; green: after, from the new leader's election + the settle time to the end). Under the latency: the machine's busy and steal per second (the self-check's), and a tick per event-loop stall of each member.",
  );
  return parts.join('\n');
}

function writes(r: RunResult): string {
  const w = r.writes;
  const lines = [
    '## Writes',
    '',
    table(
      ['Attempted', 'Acknowledged', 'Failed', 'Lost', 'Unverified'],
      [
        [
          count(w.attempted),
          count(w.acked),
          count(w.failed),
          count(w.lost),
          w.unverified === undefined ? NONE : count(w.unverified),
        ],
      ],
      [0, 1, 2, 3, 4],
    ),
    '',
    `Load: target ${rate(r.load.targetRate)} writes/s, achieved ${rate(r.load.achievedRate)} writes/s; send lateness p99 ${msUnit(r.load.latenessP99Ms)}.`,
    '',
  ];
  const codes = Object.entries(w.failedCodes ?? {}).sort((a, b) => b[1] - a[1]);
  if (codes.length > 0)
    lines.push(
      `Failed writes by their last error: ${codes.map(([c, n]) => `${c} ${count(n)}`).join(', ')}.`,
      '',
    );
  const where = finalReadWhere(w.finalRead);
  if ((w.unverified ?? 0) > 0)
    lines.push(
      `**${count(w.unverified ?? 0)} acknowledged writes were not verified**: the final read covered ${count(w.finalRead?.writes ?? 0)} of the ${count(w.acked)} the agents counted, so nothing is known of the rest and the run cannot pass.`,
      '',
    );
  if (w.lost === 0) {
    lines.push(`No acknowledged write was lost${where ? `: ${where}` : ''}.`);
  } else {
    const listed = w.lostList ?? [];
    lines.push(
      `**Acknowledged writes lost on ${count(w.lost)} ${w.lost === 1 ? 'key' : 'keys'}**${where ? ` of ${where}` : ''}${listed.length > 0 ? ':' : ' (not listed).'}`,
    );
    if (listed.length > 0) {
      lines.push('', ...listed.map((x) => `- \`${x}\``));
      if (listed.length >= LOST_LISTED_MAX) lines.push(`- … (only the first ${LOST_LISTED_MAX} kept)`);
    }
  }
  return lines.join('\n');
}

/** Which members the final read covered, and which it could not ('' for files without it). */
function finalReadWhere(f: WritesInfo['finalRead']): string {
  if (!f) return '';
  const notRead = f.notRead.length > 0 ? ` (not read: ${f.notRead.join(', ')}, not running at the end)` : '';
  const writes = f.writes === undefined ? '' : ` (covering ${count(f.writes)} acknowledged writes)`;
  return `the ${count(f.keys)} keys with acknowledged writes${writes}, read back on ${f.readOn.join(', ')}${notRead}`;
}

function thresholds(r: RunResult): string {
  if (r.thresholds.length === 0) return '## Thresholds\n\nNo thresholds given.';
  const rows = r.thresholds.map((t) => [
    `\`${t.expr}\``,
    t.ok ? 'pass' : '**FAIL**',
    t.actual === null ? (t.message ?? NONE) : String(round(t.actual)),
  ]);
  return ['## Thresholds', '', table(['Threshold', 'Result', 'Actual'], rows)].join('\n');
}

/** pole-bench's own cost during the load, so a reader can tell the system under test from the harness. */
/** The run's figures held against each other (report/self-check.ts). */
function crossChecks(r: RunResult): string {
  const { checked, violations } = r.selfCheck;
  const notEvaluated = r.selfCheck.notEvaluated ?? [];
  const violated = (c: string): string[] => violations.filter((v) => v.startsWith(`${c}: `));
  const held = checked.filter((c) => violated(c).length === 0);
  const lines = [
    '## Cross-checks',
    '',
    violations.length === 0
      ? `${held.length} of the run's cross-checks held; ${notEvaluated.length} could not be evaluated on this run (never counted as held).`
      : `${violations.length} violation(s) of ${checked.length - held.length} check(s): the figures they name are suspect, and so is the verdict.`,
    '',
  ];
  for (const c of checked) {
    const v = violated(c);
    if (v.length === 0) lines.push(`- held: ${c}`);
    else lines.push(`- **violated**: ${c}`, ...v.map((x) => `  - ${x.slice(c.length + 2)}`));
  }
  lines.push(...notEvaluated.map((n) => `- not evaluated: ${n.check} (${n.why})`));
  // Violations not under a check's name (a stored result edited by hand) are shown all the same.
  const loose = violations.filter((v) => !checked.some((c) => v.startsWith(`${c}: `)));
  lines.push(...loose.map((v) => `- **violated**: ${v}`));
  return lines.join('\n');
}

function selfCheck(r: RunResult): string {
  const c = r.cpu;
  if (!c.sampled) return '## Self-check\n\nCPU was not sampled (no /proc, or the load did not run).';
  const rows = cpuRows(c);
  // A result from before the breakdown has only the residual, on its own (mixed) basis.
  const shares = c.shares ?? null;
  const machine = c.machine ?? null;
  if (!shares || !machine)
    rows.push(['anything else on the machine', NONE, percent((c.otherPctOfCore ?? NaN) / 100), NONE]);
  const lines = [
    '## Self-check',
    '',
    `CPU during the load (${secUnit(c.windowS)}, ${count(c.ackedWrites)} writes acknowledged): the machine's ${c.cores} cores were ${percent((c.machineBusyPct ?? NaN) / 100)} busy (busiest second ${percent((c.peakBusyPct ?? NaN) / 100)}).`,
  ];
  if (c.remote)
    lines.push(
      '',
      `The containers' figures come from ${c.remote}, each its rate between its first and last reading; those marked "another machine" ran on a kernel other than the harness's, and are not part of this machine's busy share.` +
        (c.unread && c.unread.length > 0
          ? ` Read only once (killed or started during the load), so without a figure: ${c.unread.join(', ')}.`
          : ''),
    );
  if (shares && machine) lines.push('', ...cpuShareTables(c.cores, machine, shares));
  lines.push(
    '',
    'Per group and process, and the CPU time per acknowledged write:',
    '',
    table(['Processes', 'Count', 'CPU, % of one core', 'per write'], rows, [1, 2, 3]),
  );
  if ((c.groups.nodes?.processes ?? 0) === 0)
    lines.push(
      '',
      'No node process could be sampled (no /proc entry or container cgroup found): only the machine as a whole was.',
    );
  lines.push(
    '',
    c.warning === null
      ? 'Busy below 50 %: queueing for CPU adds little to the latency figures.'
      : `Warning: ${c.warning}.`,
  );
  return lines.join('\n');
}

/** The self-check's CPU table: per group, then per node and agent, and the relay's share. */
function cpuRows(c: RunResult['cpu']): string[][] {
  const names: Record<string, string> = {
    harness: c.remote ? 'pole-bench harness' : 'pole-bench harness (with the relay thread)',
    nodes: 'nodes (the system under test)',
    agents: 'load agents',
    relay: 'delay relay (a task)',
    helpers: 'fault helpers (pole-bench, one per node)',
  };
  const member: Record<string, string> = { nodes: 'node', agents: 'agent in', helpers: 'helper on' };
  const perWrite = (us: number | null): string => (us === null ? NONE : `${us.toFixed(0)} µs`);
  const rows: string[][] = [];
  for (const [g, v] of Object.entries(c.groups)) {
    rows.push([names[g] ?? g, count(v.processes), percent(v.pctOfCore / 100), perWrite(v.usPerWrite)]);
    // One line per node and agent, so that the leader's cost shows apart from the followers'.
    if (g !== 'harness' && g !== 'relay')
      for (const p of c.processes.filter((x) => x.group === g))
        rows.push([
          `${member[g] ?? g} ${p.label}${p.elsewhere ? ' (another machine)' : ''}`,
          NONE,
          percent(p.pctOfCore / 100),
          perWrite(p.usPerWrite),
        ]);
    if (g === 'harness' && c.shapingPctOfCore !== null)
      rows.push([
        `of which the delay relay (two threads${relayCounts(c)})`,
        NONE,
        percent(c.shapingPctOfCore / 100),
        perWrite(c.shapingUsPerWrite),
      ]);
  }
  return rows;
}

/** What /proc/stat counted in the load's window, and whose the busy ticks were. */
function cpuShareTables(
  cores: number,
  machine: NonNullable<RunResult['cpu']['machine']>,
  shares: NonNullable<RunResult['cpu']['shares']>,
): string[] {
  // Both columns are shares of the same ticks: the cores' ticks in the window, all or one core's part.
  const head = `% of all ${cores} cores`;
  const both = (pct: number): [string, string] => [percent(pct / 100), percent((pct * cores) / 100)];
  return [
    "One basis for every figure: the kernel's clock ticks (/proc/stat for the machine, /proc/<pid>/stat for a process) over the ticks the cores had in the same window. What /proc/stat counted:",
    '',
    table(
      ['The machine', head, '% of one core'],
      [
        ['busy', ...both(machine.busyPct)],
        ['user (with nice)', ...both(machine.userPct)],
        ['system', ...both(machine.systemPct)],
        ['irq', ...both(machine.irqPct)],
        ['softirq', ...both(machine.softirqPct)],
        ['steal (the hypervisor ran something else)', ...both(machine.stealPct)],
        ['iowait (idle with a disk request out: not busy)', ...both(machine.iowaitPct)],
      ],
      [1, 2],
    ),
    '',
    'Who made it busy (the rows add up to busy):',
    '',
    table(
      ['Share of busy', head, '% of one core'],
      [
        [
          'our processes (harness, nodes, agents: utime + stime, their syscalls included)',
          ...both(shares.oursPct),
        ],
        [
          'the kernel outside any process (irq + softirq: on loopback, mostly our sockets)',
          ...both(shares.kernelPct),
        ],
        ['steal', ...both(shares.stealPct)],
        [
          'not ours (busy − ours − irq − softirq − steal, at least 0: other processes, kernel threads such as the journal flushing our fsyncs)',
          ...both(shares.notOursPct),
        ],
        ...(shares.overlapPct > 0
          ? [
              [
                'counted twice (a softirq is also charged to the process it interrupted, where the kernel has no IRQ time accounting)',
                ...both(-shares.overlapPct),
              ],
            ]
          : []),
      ],
      [1, 2],
    ),
  ];
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** How many nodes read the tunables themselves; those that read others are in the self-check. */
function tunablesSeenText(e: RunResult['environment']): string {
  const seen = Object.values(e.nodeTunablesSeen ?? {});
  if (seen.length === 0) return '';
  const same = seen.filter((s) => s === e.nodeTunables).length;
  return `; ${same} of ${seen.length} nodes read the same in their own environment`;
}

function environment(r: RunResult): string {
  const e = r.environment;
  return [
    '## Environment',
    '',
    `- pole-bench ${e.poleBenchVersion}`,
    `- Node.js ${e.nodeVersion}`,
    `- ${e.os}, kernel ${e.kernel}`,
    `- ${e.cpus} × ${e.cpuModel}`,
    `- Host: ${cell(e.hostname)}`,
    ...(e.nodeTunables !== undefined
      ? [`- POLE nodes' glibc tunables: \`${e.nodeTunables}\`${tunablesSeenText(e)}`]
      : []),
    ...(e.transparentHugePages !== undefined
      ? [`- Transparent huge pages (this machine): ${e.transparentHugePages}`]
      : []),
  ].join('\n');
}

/** Data centers in the topology's order, then any others a section mentions. */
function dcNames(r: RunResult, extra: readonly string[] = Object.keys(r.links)): string[] {
  const names = r.topology.datacenters.map((d) => d.name);
  for (const n of extra) if (!names.includes(n)) names.push(n);
  return names;
}

function nodeDatacenters(r: RunResult): Map<string, string> {
  return new Map(r.topology.datacenters.flatMap((dc) => dc.nodes.map((n) => [n, dc.name] as const)));
}

/** Threshold values as found, trimmed of float noise. */
function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** The relay's chunks and wake-ups per acknowledged write, where the run counted them. */
function relayCounts(c: RunResult['cpu']): string {
  const chunks = c.shapingChunksPerWrite;
  const wakes = c.shapingWakesPerWrite;
  if (chunks == null || wakes == null) return '';
  return `; per write ${chunks.toFixed(1)} chunks relayed, ${wakes.toFixed(1)} wake-ups`;
}
