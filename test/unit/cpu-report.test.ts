// The self-check's arithmetic, on made-up /proc samples (ticks are 1/100 s).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuReport, type CpuSample } from '../../src/measure/cpu-sampler.js';

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
    const r = cpuReport(samples, 2, { from: 1000, to: 4000 }, 20_000);
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
