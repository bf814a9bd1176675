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
    const r = cpuReport(samples, 2, { from: 1000, to: 4000 });
    assert.equal(r.sampled, true);
    // 3000 ms of relay CPU in 10 s: 30 % of a core.
    assert.equal(r.shapingPctOfCore, 30);
    assert.equal(r.windowS, 10);
    assert.equal(r.machineBusyPct, 90);
    assert.equal(r.peakBusyPct, 100);
    // nodes: 600 + 300 (p12 until it went) + 0 (p13 seen once) = 900 ticks in 10 s = 90 % of a core.
    assert.deepEqual(r.groups.nodes, { pctOfCore: 90, processes: 3 });
    assert.deepEqual(r.groups.harness, { pctOfCore: 40, processes: 1 });
    // 1800 busy ticks = 180 % of a core; ours 130 %: 50 % was something else.
    assert.equal(r.otherPctOfCore, 50);
    assert.match(
      r.warning ?? '',
      /^the machine was 90 % busy during the load \(all 2 cores; busiest second 100 %\)/,
    );
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
