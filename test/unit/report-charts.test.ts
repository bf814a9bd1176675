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
import { perDcSeconds } from '../../src/report/charts/run-charts.js';
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
      const report = await readFile(files.report, 'utf8');
      for (const f of ['timeline.svg', 'latency-per-dc.svg', 'recovery.svg'])
        assert.match(report, new RegExp(`!\\[[^\\]]+\\]\\(${f}\\)`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
