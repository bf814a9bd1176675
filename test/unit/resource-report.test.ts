// The resource report from made-up samples: growth judged per process after its start-up, only
// for processes sampled long enough, a restarted node a process of its own, series thinned.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MIN_JUDGED_MS,
  SERIES_POINTS,
  processResources,
  resourceReport,
  type ResourceSample,
} from '../../src/measure/resource-sampler.js';

const EVERY = 5_000;

/** One sample every 5 s from `fromMs` to `toMs` for pid, with rss/fds a function of time. */
function series(
  pid: number,
  label: string,
  fromMs: number,
  toMs: number,
  rss: (ms: number) => number,
  fds: (ms: number) => number = () => 20,
): ResourceSample[] {
  const out: ResourceSample[] = [];
  for (let t = fromMs; t <= toMs; t += EVERY)
    out.push({
      atMs: t,
      pid,
      group: 'nodes',
      label,
      rssMiB: rss(t - fromMs),
      fds: fds(t - fromMs),
      threads: 11,
    });
  return out;
}

describe('resourceReport', () => {
  it('a steady process grows by nothing, whatever its start-up did', () => {
    // Start-up: 40 → 90 MiB over the first 50 s, then flat with GC noise of ±3 MiB.
    const r = resourceReport(
      series(1, 'p1', 0, 20 * 60_000, (t) => (t < 50_000 ? 40 + t / 1000 : 90 + ((t / EVERY) % 3) * 3 - 3)),
      EVERY,
    );
    const p = r.processes[0]!;
    assert.equal(r.judged, 1);
    assert.ok(Math.abs(p.rssGrowthMiB!) <= 3, `growth ${p.rssGrowthMiB}`);
    assert.equal(p.fdGrowth, 0);
    assert.equal(p.first.rssMiB, 40);
    assert.ok(p.peak.rssMiB >= 92);
  });

  it('a leak shows as growth from the first quarter to the last', () => {
    // 1 MiB a minute for 20 minutes, plus one file every 2 minutes.
    const r = resourceReport(
      series(
        2,
        'p2',
        0,
        20 * 60_000,
        (t) => 80 + t / 60_000,
        (t) => 20 + Math.floor(t / 120_000),
      ),
      EVERY,
    );
    const p = r.processes[0]!;
    // Medians of the first and last quarter of the samples after the first minute: ~14 min apart.
    assert.ok(p.rssGrowthMiB! > 12 && p.rssGrowthMiB! < 16, `growth ${p.rssGrowthMiB}`);
    assert.ok(p.fdGrowth! >= 6 && p.fdGrowth! <= 8, `fds ${p.fdGrowth}`);
    assert.equal(r.maxRssGrowthMiB, p.rssGrowthMiB);
    assert.equal(r.maxFdGrowth, p.fdGrowth);
  });

  it('a process sampled less than the minimum is not judged, and a restart is a new process', () => {
    const killedAt = 3 * 60_000;
    const samples = [
      ...series(10, 'p5', 0, killedAt, (t) => 60 + t / 1000),
      ...series(11, 'p5', killedAt + 15_000, killedAt + 15_000 + MIN_JUDGED_MS, () => 70),
    ];
    const r = resourceReport(samples, EVERY);
    assert.deepEqual(
      r.processes.map((p) => [p.pid, p.label, p.rssGrowthMiB]),
      [
        [10, 'p5', null],
        [11, 'p5', 0],
      ],
    );
    assert.equal(r.judged, 1);
    assert.equal(r.maxRssGrowthMiB, 0);
  });

  it('nothing judged: the maxima are null, so a threshold on them fails instead of passing', () => {
    const r = resourceReport(
      series(3, 'harness', 0, 60_000, () => 100),
      EVERY,
    );
    assert.equal(r.sampled, true);
    assert.equal(r.judged, 0);
    assert.equal(r.maxRssGrowthMiB, null);
    assert.equal(resourceReport([], EVERY).sampled, false);
  });

  it('keeps at most SERIES_POINTS points per process, first and last included', () => {
    const r = resourceReport(
      series(4, 'p4', 0, 30 * 60_000, (t) => t / 60_000),
      EVERY,
    );
    const s = r.processes[0]!.series;
    assert.ok(s.length <= SERIES_POINTS + 1, `${s.length} points`);
    assert.equal(s[0]!.tS, 0);
    assert.equal(s.at(-1)!.tS, 1800);
  });

  it('reads this very process from /proc', async () => {
    const u = await processResources(process.pid);
    assert.ok(u, 'this process has a /proc entry');
    assert.ok(u.rssMiB > 10 && u.fds >= 3 && u.threads >= 1, JSON.stringify(u));
    assert.equal(await processResources(2 ** 22 + 12345), null, 'a pid that does not exist');
  });
});
