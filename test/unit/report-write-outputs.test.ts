import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { parseResult, type RunResult } from '../../src/report/result.js';
import { writeRunOutputs } from '../../src/report/write-outputs.js';
import type { HlogInterval } from '../../src/report/hlog-writer.js';
import { result2dc } from './report-fixture.js';

function interval(tag: string, startMs: number, n: number): HlogInterval {
  const h = hdr.build();
  for (let i = 0; i < n; i++) h.recordValue(20_000 + i);
  return {
    tag,
    startMs,
    endMs: startMs + 1000,
    histogramBase64: hdr.encodeIntoCompressedBase64(h),
    maxMs: h.maxValue / 1000,
  };
}

describe('writeRunOutputs', () => {
  it('writes report.md, result.json, latency.hlog and events.jsonl into a new directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pole-bench-out-'));
    try {
      const dir = join(root, 'reports', 'run-1');
      const result = result2dc() as RunResult;
      const loadStart = Date.parse(result.timeline.startedAt ?? '');
      const events = [
        { t: loadStart + 15_004.25, node: 'harness', ev: 'fault', action: 'kill', target: 'p5' },
        {
          t: loadStart + 15_659.75,
          node: 'p4',
          ev: 'elected',
          epoch: 2,
          leader: 'p4',
          scores: { p4: [1, 15003] },
        },
      ];
      const files = await writeRunOutputs(dir, {
        result,
        intervals: [
          interval('tud', loadStart, 5),
          interval('cern', loadStart, 7),
          interval('tud', loadStart + 1000, 2),
        ],
        events,
      });
      assert.deepEqual((await readdir(dir)).sort(), [
        'events.jsonl',
        'latency-per-dc.svg',
        'latency.hlog',
        'recovery.svg',
        'report.md',
        'result.json',
        'timeline.svg',
      ]);
      assert.equal(files.result, join(dir, 'result.json'));

      assert.deepEqual(parseResult(JSON.parse(await readFile(files.result, 'utf8'))), result);
      assert.match(await readFile(files.report, 'utf8'), /^# pole-bench run: paper-2dc\n/);

      const lines = (await readFile(files.events, 'utf8')).split('\n');
      assert.equal(lines.pop(), '', 'ends with a newline');
      assert.deepEqual(
        lines.map((l) => JSON.parse(l) as unknown),
        events,
      );

      const hlog = await readFile(files.hlog, 'utf8');
      const reader = new hdr.HistogramLogReader(hlog);
      const counts: Record<string, number> = {};
      let first: number | undefined;
      for (let h = reader.nextIntervalHistogram(); h !== null; h = reader.nextIntervalHistogram()) {
        counts[h.tag] = (counts[h.tag] ?? 0) + h.totalCount;
        first ??= h.startTimeStampMsec;
      }
      assert.deepEqual(counts, { tud: 7, cern: 7 });
      // Relative to the load start, read back as absolute.
      assert.match(hlog, /^Tag=tud,0\.000,1\.000,/m);
      assert.equal(Math.round(first ?? 0), loadStart);
      assert.match(hlog, new RegExp(`#\\[StartTime: ${Date.parse(result.startedAt) / 1000}\\.000 `));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
