import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { HLOG_LEGEND, renderHlog, writeHlog, type HlogInterval } from '../../src/report/hlog-writer.js';

const BASE_MS = 1_732_170_005_000;

/** An interval of `values` (µs), as an agent would send it. */
function interval(tag: string, startS: number, values: readonly number[]): HlogInterval {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
  for (const v of values) h.recordValue(v);
  return {
    tag,
    startMs: BASE_MS + startS * 1000,
    endMs: BASE_MS + (startS + 1) * 1000,
    histogramBase64: hdr.encodeIntoCompressedBase64(h),
    maxMs: h.maxValue / 1000,
  };
}

/** Everything HistogramLogReader gets back: per tag, its intervals' counts, starts and maxima. */
function readBack(text: string): Map<string, { count: number; startMs: number; max: number }[]> {
  const reader = new hdr.HistogramLogReader(text);
  const out = new Map<string, { count: number; startMs: number; max: number }[]>();
  for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
    const list = out.get(h.tag) ?? [];
    list.push({ count: h.totalCount, startMs: h.startTimeStampMsec, max: h.maxValue });
    out.set(h.tag, list);
  }
  return out;
}

describe('latency.hlog', () => {
  const intervals = [
    interval('tud', 0, [31_000, 31_500, 32_250]),
    interval('cern', 0, [10_400, 10_900]),
    interval('tud', 1, [30_900, 31_100, 33_000, 41_200]),
    interval('cern', 1, [10_300]),
    interval('cern', 2, []),
  ];

  it('reads back with HistogramLogReader: same tags, counts, starts and maxima', () => {
    const text = renderHlog(intervals, { startTimeMs: BASE_MS - 5000, baseTimeMs: BASE_MS });
    const back = readBack(text);
    assert.deepEqual([...back.keys()].sort(), ['cern', 'tud']);
    assert.deepEqual(
      back.get('tud')?.map((i) => i.count),
      [3, 4],
    );
    assert.deepEqual(
      back.get('cern')?.map((i) => i.count),
      [2, 1, 0],
    );
    // Starts are absolute again once the reader adds BaseTime.
    assert.deepEqual(
      back.get('tud')?.map((i) => Math.round(i.startMs)),
      [BASE_MS, BASE_MS + 1000],
    );
    assert.ok(Math.abs((back.get('tud')?.[1]?.max ?? 0) - 41_200) <= 41_200 * 0.001);
    assert.deepEqual(hdr.listTags(text).sort(), ['cern', 'tud']);
  });

  it('writes the standard header, legend and interval lines', () => {
    const text = renderHlog(intervals.slice(0, 2), {
      startTimeMs: BASE_MS - 5000,
      baseTimeMs: BASE_MS,
      comments: ['run r1'],
    });
    const lines = text.split('\n');
    assert.equal(lines[0], '#[Histogram log format version 1.3]');
    assert.equal(
      lines[1],
      `#[StartTime: ${(BASE_MS - 5000) / 1000}.000 (seconds since epoch), 2024-11-21T06:20:00.000Z]`,
    );
    assert.equal(lines[2], `#[BaseTime: ${BASE_MS / 1000}.000 (seconds since epoch)]`);
    assert.match(lines[3] ?? '', /^#Values are in microseconds; Interval_Max is in milliseconds\.$/);
    assert.equal(lines[4], '#run r1');
    assert.equal(lines[5], HLOG_LEGEND);
    assert.equal(
      lines[6],
      `Tag=tud,0.000,1.000,${(intervals[0]?.maxMs ?? 0).toFixed(3)},${intervals[0]?.histogramBase64}`,
    );
    assert.match(lines[7] ?? '', /^Tag=cern,0\.000,1\.000,10\.\d{3},HIST/);
    assert.equal(lines[8], '');
    assert.equal(lines.length, 9);
  });

  it('orders intervals by start time and defaults the base to the first start', () => {
    const text = renderHlog([intervals[2] as HlogInterval, intervals[0] as HlogInterval]);
    const data = text.split('\n').filter((l) => l.startsWith('Tag='));
    assert.deepEqual(
      data.map((l) => l.split(',')[1]),
      ['0.000', '1.000'],
    );
    assert.match(text, new RegExp(`#\\[BaseTime: ${BASE_MS / 1000}\\.000 `));
  });

  it('refuses tags that would break the line format', () => {
    for (const tag of ['', 'a,b', 'us east']) {
      assert.throws(() => renderHlog([{ ...(intervals[0] as HlogInterval), tag }]), /tag/);
    }
  });

  it('writes the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-hlog-'));
    try {
      const file = join(dir, 'latency.hlog');
      await writeHlog(file, intervals, { baseTimeMs: BASE_MS });
      const back = readBack(await readFile(file, 'utf8'));
      assert.equal(
        back.get('tud')?.reduce((s, i) => s + i.count, 0),
        7,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
