import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { REPORT_SECTIONS, renderReport } from '../../src/report/markdown-report.js';
import type { RunResult } from '../../src/report/result.js';
import { result2dc, type MutableResult } from './report-fixture.js';

const render = (r: MutableResult): string => renderReport(r as RunResult);

/** The text of one `## ` section, up to the next one. */
function section(md: string, heading: string): string {
  const start = md.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `no section "${heading}"`);
  const next = md.indexOf('\n## ', start + 1);
  return md.slice(start, next < 0 ? undefined : next);
}

/** The markdown table row whose first cells are `first` (e.g. ["tud", "after"]). */
function row(text: string, ...first: string[]): string[] {
  const prefix = `| ${first.join(' | ')} |`;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  assert.ok(line, `no row starting ${prefix} in:\n${text}`);
  return line
    .slice(1, -1)
    .split(' | ')
    .map((c) => c.trim());
}

describe('report.md', () => {
  const md = render(result2dc());

  it('has a title, a verdict line and every section in order', () => {
    assert.ok(md.startsWith('# pole-bench run: paper-2dc\n'));
    assert.match(
      md,
      /\*\*Verdict: threshold failed\*\*: 1 of 3 thresholds did not hold \(`latency\.tud\.after\.p99 <= 20`\)/,
    );
    const positions = REPORT_SECTIONS.map((s) => md.indexOf(`\n## ${s}\n`));
    for (const [i, p] of positions.entries()) assert.ok(p > 0, `missing section ${REPORT_SECTIONS[i]}`);
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
      'sections out of order',
    );
  });

  it('says a suspect run is suspect, naming the checks, and lists every check with its status', () => {
    const r = result2dc();
    const check = 'phases in order';
    r.selfCheck = {
      checked: [check, 'no negative duration'],
      violations: [`${check}: elected 700.00 ms before detected 710.00 ms`],
      notEvaluated: [{ check: 'ZooKeeper’s vote', why: 'pole does not elect by FLE' }],
    };
    r.verdict = 'suspect';
    const out = render(r);
    assert.match(out, /\*\*Verdict: suspect\*\*: .*can be trusted: phases in order\./);
    const s = section(out, 'Cross-checks');
    assert.match(
      s,
      /^- \*\*violated\*\*: phases in order\n {2}- elected 700\.00 ms before detected 710\.00 ms$/m,
    );
    assert.match(s, /^- held: no negative duration$/m);
    assert.match(s, /^- not evaluated: ZooKeeper’s vote \(pole does not elect by FLE\)$/m);
  });

  it('describes the set-up', () => {
    const s = section(md, 'Set-up');
    for (const text of [
      'paper-2dc',
      'topologies/paper-2dc.yaml',
      '`history`',
      'Runtime: process',
      'Shaping: relay (jitter 2%, pareto): auto: the kernel has no netem',
      '1,000 writes/s of 1,024 bytes, constant arrivals',
      'Seed: 20111213',
      'Duration: 30.0 s (warm-up 5.0 s, settle 5.0 s',
    ]) {
      assert.ok(s.includes(text), `"${text}" not in set-up`);
    }
    assert.deepEqual(row(s, 'cern'), ['cern', 'p3, p4, p5', '50.0%']);
    assert.deepEqual(row(s, 'tud'), ['tud', 'p1, p2', '50.0%']);
  });

  it('puts configured and measured RTTs side by side with the error', () => {
    const s = section(md, 'Links');
    assert.deepEqual(row(s, 'tud'), ['tud', '-', '20.75 / 20.93 (+0.9%)']);
    assert.deepEqual(row(s, 'cern'), ['cern', '20.75 / 20.88 (+0.6%)', '-']);
  });

  it('names the leaders and the scores behind the election', () => {
    const s = section(md, 'Leaders');
    assert.match(s, /Initial: p5/);
    assert.match(s, /Killed: p5 at 15\.0 s/);
    assert.match(s, /Elected: p4 \(epoch 2\), oracle `history`/);
    assert.deepEqual(row(s, 'p4'), ['p4', 'cern', '(1, 15003)', 'elected']);
    assert.deepEqual(row(s, 'p1'), ['p1', 'tud', '(1, 14998)', '']);
  });

  it('lists the recovery phases in order, then what each data center saw, from the fault carried out', () => {
    const s = section(md, 'Recovery');
    const phases = [
      'Detected',
      'Elected',
      'Serving',
      'First commit',
      'Paper recovery',
      'Data center',
      'tud',
      'cern',
    ];
    const at = phases.map((p) => s.indexOf(`| ${p}`));
    assert.ok(
      at.every((p) => p > 0),
      `phases missing: ${at.join(',')}`,
    );
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
    );
    assert.equal(row(s, 'Detected (first follower notices)')[1], '412.50');
    assert.equal(row(s, 'Serving (quorum acked NEWLEADER)')[1], '702.13');
    assert.equal(row(s, 'Paper recovery (first commit − elected)')[1], '75.65');
    // Past the first commit (731.40 ms): 28.80, between the commit's one-way way to tud's servers
    // from p4 in cern (10.38) and a write's model there after (20.75): 8.05 over it, where 30 of
    // tud's writes failed and were resent.
    assert.deepEqual(row(s, 'tud'), ['tud', '760.20', '758.10', '28.80', '10.38', '20.75', '+8.05', '30']);
    assert.match(
      s,
      /since p5 was killed at 15\.0 s \(4\.00 ms after it was scheduled\): every figure here counts from that instant/,
    );
  });

  it('shows latency per data center and window', () => {
    const s = section(md, 'Latency per data center');
    assert.deepEqual(row(s, 'tud', 'after'), [
      'tud',
      'after',
      '3,996',
      '21.07',
      '20.90',
      '21.80',
      '23.35',
      '28.90',
      '30.40',
    ]);
    assert.deepEqual(row(s, 'cern', 'before'), [
      'cern',
      'before',
      '5,012',
      '10.66',
      '10.40',
      '11.20',
      '12.75',
      '17.30',
      '19.95',
    ]);
    assert.equal(row(s, 'tud', 'before').length, 9);
    assert.equal(row(s, 'cern', 'after')[2], '4,003');
    assert.doesNotMatch(s, /no data/, 'every agent reported');
  });

  it("says which data center's agent lost its data and why, beside the others' figures", () => {
    const r = result2dc();
    r.latency.cern = {
      before: null,
      after: null,
      during: null,
      warmup: null,
      attempted: 0,
      failed: 0,
      lost: 'the load agent did not finish within 30000 ms',
    };
    const s = section(render(r), 'Latency per data center');
    assert.deepEqual(row(s, 'cern', 'before').slice(2), Array(7).fill('-'));
    assert.equal(row(s, 'tud', 'after')[3], '21.07', "the other data center's figures stay");
    assert.ok(s.includes('\n- cern: no data: the load agent did not finish within 30000 ms'), s);
    assert.doesNotMatch(s, /tud: no data/);
  });

  it('holds each mean against the paper model and the floor, in separate columns', () => {
    const s = section(md, 'Latency against the model');
    // mean 21.07 (20.77 from the send); paper 20.75; floor 1.05; model + floor 21.80: 0.73 under it.
    assert.deepEqual(row(s, 'tud', 'after'), [
      'tud',
      'after',
      '21.07',
      '20.75',
      '1.05',
      '0.02',
      '21.80',
      '-0.73',
      '-3.3%',
    ]);
    assert.deepEqual(row(s, 'cern', 'before'), [
      'cern',
      'before',
      '10.66',
      '10.38',
      '1.10',
      '-0.02',
      '11.47',
      '-0.81',
      '-7.1%',
    ]);
    assert.match(
      s,
      /Node floor: 0\.90 ms for a write sent to the leader, 1\.20 ms for one a follower forwards \(2,000 writes; calibrated before the load\)/,
    );
  });

  it("shows pole-bench's own cost and warns in the verdict when the machine was too busy", () => {
    assert.match(md, /\*\*Self-check: take the latency figures with care\*\*: the machine was 88 % busy/);
    const s = section(md, 'Self-check');
    assert.deepEqual(row(s, 'pole-bench harness (with the relay thread)'), [
      'pole-bench harness (with the relay thread)',
      '1',
      '41.2%',
      '413 µs',
    ]);
    assert.deepEqual(row(s, 'nodes (the system under test)'), [
      'nodes (the system under test)',
      '6',
      '104.5%',
      '1047 µs',
    ]);
    // Each node and agent on its own line, under its group.
    assert.deepEqual(row(s, 'node p5').slice(1), ['-', '34.2%', '343 µs']);
    assert.deepEqual(row(s, 'agent in tud').slice(1), ['-', '13.6%', '136 µs']);
    assert.deepEqual(row(s, 'of which the delay relay (two threads)').slice(1), ['-', '30.6%', '307 µs']);
    assert.match(s, /29,940 writes acknowledged/);
    assert.match(s, /cores were 88\.4% busy \(busiest second 96\.1%\)/);
    // Whatever is not ours is split on the machine's ticks, no residual against wall time any more.
    assert.doesNotMatch(s, /anything else on the machine/);
    const quiet = result2dc();
    quiet.cpu = { ...quiet.cpu, machineBusyPct: 31, warning: null };
    const out = render(quiet);
    assert.doesNotMatch(out, /take the latency figures with care/);
    assert.match(section(out, 'Self-check'), /Busy below 50 %/);
  });

  it('says where the busy ticks went, on one basis named in each header, the shares adding up to busy', () => {
    const s = section(md, 'Self-check');
    assert.match(s, /\| The machine \| % of all 2 cores \| % of one core \|/);
    assert.match(s, /\| Share of busy \| % of all 2 cores \| % of one core \|/);
    assert.match(s, /\| Processes \| Count \| CPU, % of one core \| per write \|/);
    assert.deepEqual(row(s, 'busy'), ['busy', '88.4%', '176.8%']);
    assert.deepEqual(row(s, 'softirq'), ['softirq', '0.1%', '0.2%']);
    assert.deepEqual(row(s, 'steal (the hypervisor ran something else)').slice(1), ['0.3%', '0.6%']);
    assert.deepEqual(row(s, 'iowait (idle with a disk request out: not busy)').slice(1), ['0.4%', '0.8%']);
    const shares = [
      'our processes (harness, nodes, agents: utime + stime, their syscalls included)',
      'the kernel outside any process (irq + softirq: on loopback, mostly our sockets)',
      'steal',
      'not ours (busy − ours − irq − softirq − steal, at least 0: other processes, kernel threads such as the journal flushing our fsyncs)',
    ].map((label) => row(s, label));
    assert.deepEqual(
      shares.map((r) => r[1]),
      ['86.5%', '0.1%', '0.3%', '1.5%'],
    );
    // Ours is the groups' % of one core over the cores: (41.2 + 104.5 + 27.3) / 2 = 86.5.
    assert.equal(shares[0]?.[2], '173.0%');
    const sum = shares.reduce((t, r) => t + Number((r[1] ?? '').replace('%', '')), 0);
    assert.equal(sum.toFixed(1), '88.4');
    assert.doesNotMatch(s, /counted twice/);
  });

  it('takes off what was counted twice, and keeps the residual of a result from before the breakdown', () => {
    const twice = result2dc();
    twice.cpu.shares = { oursPct: 86.5, kernelPct: 4.2, stealPct: 1.8, notOursPct: 0, overlapPct: 4.1 };
    const line = section(render(twice), 'Self-check')
      .split('\n')
      .find((l) => l.startsWith('| counted twice'));
    assert.match(line ?? '', /\| -4\.1% \| -8\.2% \|$/);
    const old = result2dc();
    delete old.cpu.machine;
    delete old.cpu.shares;
    delete old.cpu.perSecond;
    const s = section(render(old), 'Self-check');
    assert.deepEqual(row(s, 'anything else on the machine'), [
      'anything else on the machine',
      '-',
      '3.0%',
      '-',
    ]);
    assert.doesNotMatch(s, /Share of busy/);
  });

  it("breaks each data center's mean into network, transport, disk, nodes and client", () => {
    const s = section(md, 'Latency anatomy');
    assert.match(s, /One write in 64 is traced/);
    assert.match(s, /455 of 468 traced writes had every stamp/);
    assert.deepEqual(row(s, 'tud', 'before'), [
      'tud',
      'before',
      '115',
      '27.50',
      '20.75',
      '1.25',
      '2.50',
      '2.40',
      '0.60',
      '6.75',
    ]);
    assert.match(
      s,
      /\| tud \| before \| forward hop 11\.20; leader: log write \+ fsync 1\.30; COMMIT hop 10\.80 \|/,
    );
  });

  it('says why there is no floor, and leaves its columns empty', () => {
    const r = result2dc();
    r.floor = {
      source: 'none',
      method: 'not measured: the netem shaping cannot take its delays out during a run',
      leaderMs: null,
      followerMs: null,
      writes: 0,
      perDc: { tud: { before: null, after: null }, cern: { before: null, after: null } },
    };
    const s = section(render(r), 'Latency against the model');
    assert.deepEqual(row(s, 'tud', 'after'), ['tud', 'after', '21.07', '20.75', '-', '0.02', '-', '-', '-']);
    assert.match(s, /Node floor not measured: the netem shaping cannot take its delays out during a run\./);
  });

  it('marks the fault in the timeline at its second', () => {
    const s = section(md, 'Timeline');
    const lines = s.split('\n');
    const writes = lines.find((l) => l.startsWith('writes/s'));
    const faults = lines.find((l) => l.startsWith('faults'));
    assert.ok(writes && faults, s);
    // The ▲ sits under second 15 (column 15 after the label), where throughput drops. The axis
    // line's "0 s" starts at the first column.
    const firstColumn = lines.find((l) => /^\s+0 s/.test(l))?.indexOf('0 s') ?? -1;
    assert.ok(firstColumn > 0);
    assert.equal(faults.indexOf('▲'), firstColumn + 15);
    assert.match(faults, /▲ 15\.0 s: kill p5/);
    // The outage second (no writes) is a gap in the throughput line.
    assert.equal(writes[firstColumn + 16], ' ');
    assert.match(row(s, '15')[4] ?? '', /◀ kill p5/);
    assert.deepEqual(row(s, '16').slice(0, 4), ['16', '0.0', '-', '57']);
    assert.equal(row(s, '17')[2], '912.40');
  });

  it("says what the timeline leaves out at its edges, and which members' loops stalled around the fault", () => {
    const s = section(md, 'Timeline');
    assert.match(s, /Not drawn: 31 writes acknowledged and 0 errors in the 0\.1 s after the load ended/);
    assert.ok(s.includes('| t (s) | writes/s | p99 (ms) | errors |  | stalls |'), 'a stalls column');
    assert.deepEqual(row(s, '15').slice(4), ['◀ kill p5; ◀ p4 elected', 'p4 45 ms']);
    assert.equal(row(s, '17')[5], 'p4 23 ms');
    // A busy second stays one short cell: per member, how many and the longest.
    const busy = result2dc();
    busy.loopStalls?.[0]?.stalls?.push({ atS: 15.1, ms: 22 }, { atS: 15.8, ms: 60 });
    assert.equal(row(section(render(busy), 'Timeline'), '15')[5], 'p1 ×2 (longest 60 ms); p4 45 ms');
    const cut = result2dc();
    cut.timeline.seconds.push({ t: 30, writesPerSec: 1000, p99Ms: 31.5, errors: 0, lengthS: 0.5 });
    assert.match(section(render(cut), 'Timeline'), /Second 30 covered 0\.5 s: its writes\/s are over that/);
    assert.match(section(md, 'Snapshots'), /Event-loop stalls of 20 ms or more/);
    // A result from before the threshold was recorded counted from 100 ms, and had no stall list.
    const old = result2dc();
    delete old.loopStallMs;
    old.loopStalls = [];
    assert.match(section(render(old), 'Snapshots'), /No member's event loop stalled for 100 ms or more/);
  });

  it('accounts for the writes and the load', () => {
    const s = section(md, 'Writes');
    assert.deepEqual(row(s, '30,000'), ['30,000', '29,940', '60', '0', '0']);
    assert.match(s, /target 1,000\.0 writes\/s, achieved 999\.7 writes\/s; send lateness p99 0\.42 ms/);
    assert.match(s, /No acknowledged write was lost/);
  });

  it('lists the keys found short when there are any, and where the final read looked', () => {
    const r = result2dc();
    r.writes = {
      attempted: 30_000,
      acked: 29_940,
      failed: 60,
      lost: 2,
      lostList: ['/w/tud/17@p1', '/w/tud/17@p2', '/w/cern/9@p1 (missing)'],
      finalRead: { keys: 29_940, readOn: ['p1', 'p2', 'p3', 'p4'], notRead: ['p5'] },
    };
    const s = section(render(r), 'Writes');
    assert.match(
      s,
      /\*\*Acknowledged writes lost on 2 keys\*\* of the 29,940 keys with acknowledged writes, read back on p1, p2, p3, p4 \(not read: p5, not running at the end\):/,
    );
    assert.match(s, /- `\/w\/tud\/17@p2`/);
    assert.match(s, /- `\/w\/cern\/9@p1 \(missing\)`/);
    assert.doesNotMatch(s, /only the first/);
    assert.doesNotMatch(s, /No acknowledged write was lost/);
  });

  it('says where the final read looked when nothing was lost; older results say only that', () => {
    const r = result2dc();
    r.writes = { ...r.writes, finalRead: { keys: 900, readOn: ['p1', 'p2', 'p3'], notRead: [] } };
    assert.match(
      section(render(r), 'Writes'),
      /No acknowledged write was lost: the 900 keys with acknowledged writes, read back on p1, p2, p3\./,
    );
    const old = result2dc();
    const { finalRead: _read, unverified: _unverified, ...before } = old.writes;
    old.writes = before;
    assert.match(section(render(old), 'Writes'), /No acknowledged write was lost\./);
    assert.deepEqual(row(section(render(old), 'Writes'), '30,000'), ['30,000', '29,940', '60', '0', '-']);
  });

  it('says how many acknowledged writes the final read left unverified, in bold', () => {
    const r = result2dc();
    r.writes = { ...r.writes, unverified: 940, finalRead: { ...r.writes.finalRead!, writes: 29_000 } };
    assert.match(
      section(render(r), 'Writes'),
      /\*\*940 acknowledged writes were not verified\*\*: the final read covered 29,000 of the 29,940/,
    );
  });

  it('shows each threshold with its result and actual value', () => {
    const s = section(md, 'Thresholds');
    assert.deepEqual(row(s, '`recovery.servingMs < 1s`'), ['`recovery.servingMs < 1s`', 'pass', '702.125']);
    assert.deepEqual(row(s, '`latency.tud.after.p99 <= 20`'), [
      '`latency.tud.after.p99 <= 20`',
      '**FAIL**',
      '23.35',
    ]);
  });

  it('describes the environment', () => {
    const s = section(md, 'Environment');
    for (const text of [
      'pole-bench 0.1.0',
      'Node.js v20.20.0',
      'linux x64, kernel 6.8.0-45-generic',
      '8 × AMD EPYC 7B13',
      'bench-1',
    ]) {
      assert.ok(s.includes(text), `"${text}" not in environment`);
    }
  });

  it('renders a failed run with nothing observed without inventing numbers', () => {
    const r = result2dc();
    r.verdict = 'run-failed';
    r.errors = ['node p3 exited with code 1 before the load started'];
    r.thresholds = [];
    r.leaders = { ...r.leaders, killed: null, elected: null, epoch: null, scores: {} };
    r.recovery = {
      transferMs: null,
      detectMs: null,
      electedMs: null,
      servingMs: null,
      firstCommitMs: null,
      paperRecoveryMs: null,
      faultAtS: null,
      scheduledAtS: null,
      perDc: {},
    };
    r.latency = {};
    r.model = {};
    r.links = {};
    r.load = { targetRate: 1000, achievedRate: null, latenessP99Ms: null };
    r.timeline = { startedAt: null, seconds: [], faults: [] };
    const out = render(r);
    assert.match(out, /\*\*Verdict: run failed\*\*: node p3 exited with code 1/);
    for (const s of REPORT_SECTIONS) assert.ok(out.includes(`\n## ${s}\n`), s);
    assert.equal(row(section(out, 'Recovery'), 'Serving (quorum acked NEWLEADER)')[1], 'not observed');
    assert.deepEqual(
      row(section(out, 'Latency per data center'), 'tud', 'before').slice(2),
      Array(7).fill('-'),
    );
    assert.match(section(out, 'Timeline'), /the load did not run/);
    assert.match(section(out, 'Thresholds'), /No thresholds given/);
    assert.deepEqual(row(section(out, 'Links'), 'tud'), ['tud', '-', '-']);
  });

  it('folds long runs into at most 100 columns, keeping the fault visible', () => {
    const r = result2dc();
    r.timeline.seconds = Array.from({ length: 300 }, (_, t) => ({
      t,
      writesPerSec: t === 150 ? 0 : 1000,
      p99Ms: t === 151 ? 800 : 30,
      errors: t === 150 ? 40 : 0,
    }));
    r.timeline.faults = [{ atS: 150.2, action: 'kill', node: 'p5' }];
    const s = section(render(r), 'Timeline');
    const faults = s.split('\n').find((l) => l.startsWith('faults')) ?? '';
    const writes = s.split('\n').find((l) => l.startsWith('writes/s')) ?? '';
    const firstColumn =
      s
        .split('\n')
        .find((l) => /^\s+0 s/.test(l))
        ?.indexOf('0 s') ?? -1;
    assert.equal(faults.indexOf('▲') - firstColumn, 50, 'fault under column 150 s / 3');
    // The p99 spike of second 151 survives the folding (a column shows its worst p99).
    const p99 = s.split('\n').find((l) => l.startsWith('p99')) ?? '';
    assert.equal(p99[firstColumn + 50], '█');
    assert.match(s, /One column per 3 s/);
    assert.equal(writes.slice(firstColumn).split('  ')[0]?.length, 100);
  });
});
