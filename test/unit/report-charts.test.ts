import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { RunResult } from '../../src/report/result.js';
import { writeRunOutputs } from '../../src/report/write-outputs.js';
import { parseHlog, renderHlog, type HlogInterval } from '../../src/report/hlog-writer.js';
import { faultPeriods } from '../../src/report/charts/fault-periods.js';
import { perDcSeconds, timelineSpec, windowSpans } from '../../src/report/charts/run-charts.js';
import { result2dc } from './report-fixture.js';

function interval(tag: string, startMs: number, baseUs: number): HlogInterval {
  const h = hdr.build();
  for (let i = 0; i < 100; i++) h.recordValue(baseUs + i * 10);
  return {
    tag,
    startMs,
    endMs: startMs + 1000,
    histogramBase64: hdr.encodeIntoCompressedBase64(h),
    maxMs: h.maxValue / 1000,
  };
}

/** Every text node of an SVG document, in order. */
function texts(svg: string): string[] {
  const out: string[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n !== null && typeof n === 'object')
      for (const [k, v] of Object.entries(n)) {
        if (k === 'text')
          (Array.isArray(v) ? v : [v]).forEach((t) =>
            out.push(
              String(
                typeof t === 'object' && t !== null ? ((t as Record<string, unknown>)['#text'] ?? '') : t,
              ),
            ),
          );
        else walk(v);
      }
  };
  walk(new XMLParser({ ignoreAttributes: false }).parse(svg));
  return out;
}

describe('fault periods', () => {
  it('lasts until what undoes the fault (a link back at its configured delay), or to the end of the load', () => {
    const periods = faultPeriods(
      [
        { atS: 10, action: 'kill', node: 'p5' },
        { atS: 12, action: 'kill', node: 'p4' },
        { atS: 25, action: 'restart', node: 'p5' },
        { atS: 30, action: 'partition', node: 'caltech' },
        { atS: 40, action: 'heal', node: 'all' },
        { atS: 42, action: 'link', node: 'caltech-slac rtt 60 ms' },
        { atS: 44, action: 'link', node: 'fnal-slac rtt 90 ms' },
        { atS: 50, action: 'link', node: 'caltech-slac rtt 9.88 ms' },
      ],
      60,
      (a, b) => (a === 'caltech' && b === 'slac' ? 9.88 : a === 'fnal' && b === 'slac' ? 53.26 : undefined),
    );
    assert.deepEqual(
      periods.map((p) => [p.label, p.fromS, p.toS, p.kind]),
      [
        ['kill p5', 10, 25, 'node'],
        ['kill p4', 12, 60, 'node'],
        ['partition caltech', 30, 40, 'network'],
        ['link caltech-slac rtt 60 ms', 42, 50, 'link'],
        ['link fnal-slac rtt 90 ms', 44, 60, 'link'],
      ],
    );
  });
});

describe('run charts', () => {
  const result = result2dc() as RunResult;
  const loadStart = Date.parse(result.timeline.startedAt ?? '');

  it("reads each data center's p50 and p99 per second from its interval histograms", () => {
    const s = perDcSeconds(result, [
      interval('tud', loadStart + 2000, 20_000),
      interval('cern', loadStart, 1000),
    ]);
    assert.deepEqual(
      s.map((x) => [x.dc, x.t]),
      [
        ['cern', 0],
        ['tud', 2],
      ],
    );
    assert.ok(Math.abs((s[1]?.p50 ?? 0) - 20.5) < 0.05, `tud p50 ${s[1]?.p50}`);
    assert.ok(Math.abs((s[1]?.p99 ?? 0) - 20.99) < 0.05, `tud p99 ${s[1]?.p99}`);
  });

  it('writes SVG charts with the fault, the new leader and every data center, linked from report.md', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-charts-'));
    try {
      const intervals: HlogInterval[] = [];
      for (let s = 0; s < 30; s++) {
        const after = s >= 15;
        intervals.push(interval('tud', loadStart + s * 1000, after ? 41_000 : 21_000));
        intervals.push(interval('cern', loadStart + s * 1000, after ? 21_000 : 500));
      }
      const files = await writeRunOutputs(dir, { result, intervals, events: [] });
      assert.deepEqual(
        files.charts.map((f) => f.slice(dir.length + 1)),
        ['timeline.svg', 'latency-per-dc.svg', 'recovery.svg'],
      );
      const svgs = await Promise.all(files.charts.map((f) => readFile(f, 'utf8')));
      for (const [i, svg] of svgs.entries()) {
        assert.equal(XMLValidator.validate(svg), true, `${files.charts[i]} is well-formed XML`);
        assert.match(
          svg,
          /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/,
          `${files.charts[i]} is an SVG document`,
        );
      }
      const [timeline, latency, recovery] = svgs.map(texts) as [string[], string[], string[]];
      assert.ok(timeline.includes('▲ kill p5'), `fault marker in ${timeline.join(' | ')}`);
      assert.ok(timeline.includes('p4 serves'), 'new leader marked');
      for (const dc of ['tud', 'cern']) {
        assert.ok(timeline.includes(dc), `${dc} in the timeline's legend`);
        assert.ok(latency.includes(dc), `${dc} panel in the latency chart`);
        assert.ok(recovery.includes(`outage ${dc}`), `${dc} outage`);
      }
      assert.ok(recovery.includes('elected (p4)'));
      // The latency windows, named in their strip; the machine's busy and steal; the stalls per member.
      for (const label of ['before', 'after (elected + settle)', 'machine busy', 'steal', 'p1', 'p4'])
        assert.ok(timeline.includes(label), `${label} in ${timeline.join(' | ')}`);
      const report = await readFile(files.report, 'utf8');
      for (const f of ['timeline.svg', 'latency-per-dc.svg', 'recovery.svg'])
        assert.match(report, new RegExp(`!\\[[^\\]]+\\]\\(${f}\\)`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the timeline chart', () => {
  it('lays the latency windows out apart from the faults: after from the election + settle', () => {
    const r = result2dc() as RunResult;
    // Killed at 15.004 s, p4 elected 655.75 ms later, 5 s of settling: after starts at 20.65975 s.
    assert.deepEqual(windowSpans(r), [
      { window: 'before', fromS: 5, toS: 15.004 },
      { window: 'after', fromS: 15.004 + 0.65575 + 5, toS: 30 },
    ]);
    const linkFirst = result2dc();
    linkFirst.timeline.faults.unshift({ atS: 8, action: 'link', node: 'tud-cern rtt 60 ms' });
    assert.deepEqual(
      windowSpans(linkFirst as RunResult).map((w) => [w.window, w.fromS, w.toS]),
      [
        ['before', 5, 8],
        ['degraded', 8, 15.004],
        ['after', 15.004 + 0.65575 + 5, 30],
      ],
    );
  });

  it('draws the last second over the time it covered, and leaves out the wait after the load', () => {
    const r = result2dc();
    r.timeline.seconds.push({ t: 30, writesPerSec: 1000, p99Ms: 31.5, errors: 0, lengthS: 0.5 });
    const spec = timelineSpec(r as RunResult, []) as unknown as {
      vconcat: {
        layer?: { mark: { type: string }; data?: { values: { t: number; writesPerSec?: number }[] } }[];
      }[];
    };
    const line = spec.vconcat
      .flatMap((p) => p.layer ?? [])
      .find((l) => l.mark.type === 'line' && l.data?.values.some((v) => v.writesPerSec !== undefined));
    // The step of second 30 closes at 30.5 s at the same rate, no drop to a last, nearly empty one.
    assert.deepEqual(
      line?.data?.values.slice(-2).map((v) => [v.t, v.writesPerSec]),
      [
        [30, 1000],
        [30.5, 1000],
      ],
    );
    const loadStart = Date.parse(r.timeline.startedAt ?? '');
    const dcs = perDcSeconds(r as RunResult, [
      interval('tud', loadStart + 29_000, 20_000),
      interval('tud', loadStart + 30_000, 900_000),
    ]);
    assert.deepEqual(
      dcs.map((d) => d.t),
      [29],
    );
  });
});

describe('latency.hlog read back', () => {
  it('gives the intervals it was written from, for re-drawing a stored run', () => {
    const base = Date.parse('2024-11-21T06:20:05.000Z');
    const intervals = [interval('tud', base, 20_000), interval('cern', base + 1000, 500)];
    const back = parseHlog(renderHlog(intervals, { startTimeMs: base - 5000, baseTimeMs: base }));
    assert.deepEqual(
      back.map((i) => [i.tag, i.startMs, i.endMs, i.histogramBase64]),
      intervals.map((i) => [i.tag, i.startMs, i.endMs, i.histogramBase64]),
    );
  });
});
