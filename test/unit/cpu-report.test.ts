// The self-check's arithmetic, on made-up /proc samples (ticks are 1/100 s).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cpuReport,
  cpuShares,
  parseProcStat,
  statTicks,
  type CpuSample,
} from '../../src/measure/cpu-sampler.js';
import { parseProcessCpuTicks } from '../../src/measure/proc-cpu.js';

const sample = (
  atMs: number,
  busy: number,
  total: number,
  groups: Record<string, [number, number][]>,
): CpuSample => ({
  atMs,
  busy,
  total,
  groups: Object.fromEntries(Object.entries(groups).map(([g, xs]) => [g, new Map(xs)])),
});

describe('cpuReport', () => {
  it('remote containers read at the start and the end only: their own figures; those on another kernel are not "ours"', () => {
    // 2 cores for 10 s = 2000 ticks; 1000 busy. -1: a member on this kernel (a local swarm's host),
    // -2: one on another machine; both seen at the start and the end only, as the sampler reads them.
    const s0 = sample(0, 0, 0, {
      harness: [[1, 0]],
      nodes: [
        [-1, 50],
        [-2, 70],
      ],
    });
    const s1 = sample(5000, 500, 1000, { harness: [[1, 50]], nodes: [] });
    const s2 = {
      ...sample(10000, 1000, 2000, {
        harness: [[1, 100]],
        nodes: [
          [-1, 250],
          [-2, 470],
        ],
      }),
      labels: new Map([
        [-1, 'p1'],
        [-2, 'p2'],
      ]),
      elsewhere: new Set([-2]),
    };
    const r = cpuReport(
      [{ ...s0, labels: s2.labels, elsewhere: s2.elsewhere }, s1, s2],
      2,
      undefined,
      1000,
      'helpers',
    );
    // p1: 200 ticks in 10 s = 20 % of a core; p2: 400 = 40 %, on another machine.
    assert.deepEqual(
      r.processes.filter((p) => p.group === 'nodes'),
      [
        { group: 'nodes', label: 'p1', pctOfCore: 20, usPerWrite: 2000 },
        { group: 'nodes', label: 'p2', pctOfCore: 40, usPerWrite: 4000, elsewhere: true },
      ],
    );
    assert.equal(r.groups.nodes?.pctOfCore, 60);
    // Ours here: the harness's 100 ticks and p1's 200 (30 % of a core) of the 1000 busy (100 %):
    // 70 % of a core was something else. p2's 400 ticks were another kernel's: not taken off.
    assert.equal(r.otherPctOfCore, 70);
    assert.equal(r.remote, 'helpers');
  });

  it('a remote container read a second before the end counts at its rate over its span; one read once has no figure', () => {
    // 10 s window; the agent (-3) read at 0 and at 9 s: 180 ticks in 9 s = 20 % of a core, 200
    // ticks over the window. p5 (-4) read at the start only (killed): no figure, named as unread.
    const labels = new Map([
      [-3, 'caltech'],
      [-4, 'p5'],
    ]);
    const r = cpuReport(
      [
        { ...sample(0, 0, 0, { agents: [[-3, 100]], nodes: [[-4, 40]] }), labels },
        { ...sample(9000, 900, 1800, { agents: [[-3, 280]], nodes: [] }), labels },
        { ...sample(10000, 1000, 2000, { agents: [], nodes: [] }), labels },
      ],
      2,
      undefined,
      100,
      'helpers',
    );
    assert.deepEqual(r.processes, [{ group: 'agents', label: 'caltech', pctOfCore: 20, usPerWrite: 20_000 }]);
    assert.equal(r.groups.nodes, undefined, 'no figure for a group read once');
    assert.deepEqual(r.unread, ['p5']);
  });

  it('splits a busy machine into its groups and what else ran, and warns above 50 %', () => {
    // 2 cores for 10 s = 2000 ticks in all; 1800 busy (90 %).
    const samples = [
      sample(0, 0, 0, {
        nodes: [
          [11, 0],
          [12, 0],
        ],
        harness: [[1, 0]],
      }),
      sample(5000, 1000, 1000, {
        nodes: [
          [11, 300],
          [12, 300],
        ],
        harness: [[1, 200]],
      }),
      // p12 was killed; p13 (its restart) appears.
      sample(10000, 1800, 2000, {
        nodes: [
          [11, 600],
          [13, 100],
        ],
        harness: [[1, 400]],
      }),
    ];
    const r = cpuReport(
      samples,
      2,
      { from: { cpuMs: 1000, chunks: 500, wakes: 90 }, to: { cpuMs: 4000, chunks: 120_500, wakes: 50_090 } },
      20_000,
    );
    assert.equal(r.sampled, true);
    // 3000 ms of relay CPU in 10 s: 30 % of a core.
    assert.equal(r.shapingPctOfCore, 30);
    assert.equal(r.windowS, 10);
    assert.equal(r.machineBusyPct, 90);
    assert.equal(r.peakBusyPct, 100);
    // nodes: 600 + 300 (p12 until it went) + 0 (p13 seen once) = 900 ticks in 10 s = 90 % of a core.
    // 9 s of CPU for 20,000 writes: 450 µs per write.
    assert.deepEqual(r.groups.nodes, { pctOfCore: 90, usPerWrite: 450, processes: 3 });
    assert.deepEqual(r.groups.harness, { pctOfCore: 40, usPerWrite: 200, processes: 1 });
    assert.equal(r.shapingUsPerWrite, 150);
    // 120,000 chunks and 50,000 wake-ups over the window for 20,000 writes.
    assert.equal(r.shapingChunksPerWrite, 6);
    assert.equal(r.shapingWakesPerWrite, 2.5);
    assert.equal(r.ackedWrites, 20_000);
    // 1800 busy ticks = 180 % of a core; ours 130 %: 50 % was something else.
    assert.equal(r.otherPctOfCore, 50);
    assert.match(
      r.warning ?? '',
      /^the machine was 90 % busy during the load \(all 2 cores; busiest second 100 %\)/,
    );
  });

  it('gives each labelled process its own line, a restarted node counted once under its name', () => {
    const labels = new Map([
      [11, 'p1'],
      [12, 'p2'],
      [13, 'p2'],
    ]);
    const at = (atMs: number, xs: [number, number][]): CpuSample => ({
      ...sample(atMs, atMs / 10, atMs / 5, { nodes: xs }),
      labels,
    });
    // p2 ran as pid 12 until killed (200 ticks), then as pid 13 (100 ticks); p1 used 500 ticks.
    const samples = [
      at(0, [
        [11, 0],
        [12, 0],
      ]),
      at(5000, [
        [11, 250],
        [12, 200],
        [13, 0],
      ]),
      at(10000, [
        [11, 500],
        [13, 100],
      ]),
    ];
    const r = cpuReport(samples, 2, undefined, 10_000);
    assert.deepEqual(r.processes, [
      { group: 'nodes', label: 'p1', pctOfCore: 50, usPerWrite: 500 },
      { group: 'nodes', label: 'p2', pctOfCore: 30, usPerWrite: 300 },
    ]);
    assert.equal(r.shapingUsPerWrite, null);
    assert.equal(r.shapingChunksPerWrite, null);
  });

  it('stays quiet below the line', () => {
    const r = cpuReport([sample(0, 0, 0, {}), sample(1000, 80, 200, {})], 2);
    assert.equal(r.machineBusyPct, 40);
    assert.equal(r.warning, null);
  });

  it('says nothing was sampled rather than making figures up', () => {
    for (const samples of [[], [sample(0, 0, 0, {})]]) {
      const r = cpuReport(samples, 2);
      assert.equal(r.sampled, false);
      assert.equal(r.machineBusyPct, null);
      assert.equal(r.warning, null);
    }
  });
});

/** A /proc/stat as the kernel writes it: the all-cores line, one line per core, then the rest. */
function procStat(
  user: number,
  nice: number,
  system: number,
  idle: number,
  iowait: number,
  irq: number,
  softirq: number,
  steal: number,
): string {
  const all = [user, nice, system, idle, iowait, irq, softirq, steal, 0, 0];
  const half = all.map((v) => Math.floor(v / 2));
  return [
    `cpu  ${all.join(' ')}`,
    `cpu0 ${half.join(' ')}`,
    `cpu1 ${all.map((v, i) => v - (half[i] ?? 0)).join(' ')}`,
    'intr 123456 0 0',
    'ctxt 987654',
    'btime 1732600000',
    '',
  ].join('\n');
}

/** A /proc/<pid>/stat line; the command name has a space and a parenthesis, as names may. */
function pidStat(pid: number, utime: number, stime: number): string {
  return `${pid} (node (pole) x) S 1 ${pid} ${pid} 0 -1 4194560 1234 0 0 0 ${utime} ${stime} 0 0 20 0 11 0 12345 1000000 500\n`;
}

const near = (actual: number | null | undefined, expected: number, what: string): void =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual} ≠ ${expected}`,
  );

describe('the self-check on one basis', () => {
  it('reads /proc/stat and /proc/<pid>/stat', () => {
    const s = parseProcStat(procStat(1000, 10, 500, 3000, 10, 3, 20, 5));
    assert.deepEqual(s, {
      cpus: 2,
      user: 1000,
      nice: 10,
      system: 500,
      idle: 3000,
      iowait: 10,
      irq: 3,
      softirq: 20,
      steal: 5,
    });
    // Busy leaves out idle and iowait; guest time (already in user) is not added again.
    assert.deepEqual(statTicks(s!), { busy: 1538, total: 4548 });
    assert.equal(parseProcStat('intr 1 2 3\n'), null);
    assert.equal(parseProcessCpuTicks(pidStat(200, 160, 80)), 240);
    assert.equal(parseProcessCpuTicks('garbage'), null);
  });

  it('splits the busy ticks into ours, the kernel, steal and not ours, adding up to busy, per second too', () => {
    // Two cores whose ticks run a little behind wall time (a VM): 200 ticks a second in all, but
    // the samples came 1.1 s and then 0.95 s apart. Shares are over ticks, never over wall time.
    const texts = [
      {
        atMs: 0,
        stat: procStat(1000, 0, 500, 3000, 10, 0, 20, 5),
        pids: [
          [10, 5],
          [100, 50],
          [0, 0],
        ],
      },
      // Second 1: 118 of 200 ticks busy (user 60, nice 10, system 30, irq 1, softirq 12, steal 5).
      {
        atMs: 1100,
        stat: procStat(1060, 10, 530, 3080, 12, 1, 32, 10),
        pids: [
          [30, 10],
          [140, 65],
          [10, 5],
        ],
      },
      // Second 2: 86 of 200 busy (user 40, nice 10, system 20, irq 1, softirq 8, steal 7).
      {
        atMs: 2050,
        stat: procStat(1100, 20, 550, 3190, 16, 2, 40, 17),
        pids: [
          [40, 15],
          [160, 80],
          [20, 10],
        ],
      },
    ];
    const groups = ['harness', 'nodes', 'agents'];
    const samples: CpuSample[] = texts.map(({ atMs, stat, pids }) => {
      const parsed = parseProcStat(stat)!;
      return {
        atMs,
        ...statTicks(parsed),
        stat: parsed,
        groups: Object.fromEntries(
          groups.map((g, i) => {
            const [u, s] = pids[i] as [number, number];
            return [g, new Map([[100 + i, parseProcessCpuTicks(pidStat(100 + i, u, s))!]])];
          }),
        ),
      };
    });
    const r = cpuReport(samples, 8, undefined, 1000);
    // The core count is /proc/stat's, not the caller's guess.
    assert.equal(r.cores, 2);
    const m = r.machine!;
    near(m.busyPct, 51, 'busy'); // 204 of 400 ticks
    near(m.userPct, 30, 'user with nice');
    near(m.systemPct, 12.5, 'system');
    near(m.irqPct, 0.5, 'irq');
    near(m.softirqPct, 5, 'softirq');
    near(m.stealPct, 3, 'steal');
    near(m.iowaitPct, 1.5, 'iowait');
    near(m.userPct + m.systemPct + m.irqPct + m.softirqPct + m.stealPct, m.busyPct, 'categories');
    near(r.machineBusyPct, m.busyPct, 'the headline is the same figure');
    // Ours: 40 + 90 + 30 = 160 ticks of 400 = 40 % of the machine.
    const sh = r.shares!;
    near(sh.oursPct, 40, 'ours');
    near(sh.kernelPct, 5.5, 'kernel: irq + softirq');
    near(sh.stealPct, 3, 'steal');
    near(sh.notOursPct, 2.5, 'not ours');
    near(sh.overlapPct, 0, 'counted twice');
    near(sh.oursPct + sh.kernelPct + sh.stealPct + sh.notOursPct - sh.overlapPct, m.busyPct, 'shares');
    // Per process in % of one core on the same ticks: the node's 90 of 200 ticks a core had is 45 %
    // (over wall time, 0.9 s in 2.05 s, it would read 43.9 %).
    near(r.groups.nodes?.pctOfCore ?? null, 45, 'node');
    near(r.otherPctOfCore, 5, 'else, % of one core');
    assert.deepEqual(r.perSecond, [
      { t: 0, busyPct: 59, stealPct: 2.5 },
      { t: 1.1, busyPct: 43, stealPct: 3.5 },
    ]);
    near(r.peakBusyPct, 59, 'busiest second');
  });

  it('says what ours, the kernel and steal count twice instead of a negative else', () => {
    // Tick-based accounting charges a softirq to the process it interrupted as well.
    const m = {
      busyPct: 50,
      userPct: 30,
      systemPct: 12,
      irqPct: 0,
      softirqPct: 6,
      stealPct: 2,
      iowaitPct: 0,
    };
    const sh = cpuShares(m, 45);
    assert.equal(sh.notOursPct, 0);
    near(sh.overlapPct, 3, 'counted twice');
    near(sh.oursPct + sh.kernelPct + sh.stealPct + sh.notOursPct - sh.overlapPct, m.busyPct, 'shares');
  });
});
