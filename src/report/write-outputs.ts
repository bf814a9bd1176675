// The files of a finished run in its --out directory: report.md, result.json, latency.hlog,
// events.jsonl and the charts (*.svg, linked from report.md). The run orchestration builds the data; this only writes it down.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderHlog, type HlogInterval } from './hlog-writer.js';
import { renderReport } from './markdown-report.js';
import type { RunResult } from './result.js';
import { writeRunCharts, type ChartFile } from './charts/write-charts.js';

export interface RunOutputs {
  readonly result: RunResult;
  /** Every data center's interval histograms (tag = data center). */
  readonly intervals: readonly HlogInterval[];
  /** Node events and faults, time-ordered by the caller; one line each, as given. */
  readonly events: readonly unknown[];
  /** Every operation, where the run had reads: history.jsonl (result.safety.history names it). */
  readonly history?: readonly unknown[];
}

/** Paths of the files written. */
export interface OutputFiles {
  readonly report: string;
  readonly result: string;
  readonly hlog: string;
  readonly events: string;
  /** The SVG charts, in the report's order. */
  readonly charts: readonly string[];
}

export const OUTPUT_FILE_NAMES = {
  report: 'report.md',
  result: 'result.json',
  hlog: 'latency.hlog',
  events: 'events.jsonl',
} as const;

/** Write the files into `dir` (created if missing; existing files are replaced). */
export async function writeRunOutputs(dir: string, outputs: RunOutputs): Promise<OutputFiles> {
  const { result, intervals, events, history } = outputs;
  await mkdir(dir, { recursive: true });
  const files: OutputFiles = {
    report: join(dir, OUTPUT_FILE_NAMES.report),
    result: join(dir, OUTPUT_FILE_NAMES.result),
    hlog: join(dir, OUTPUT_FILE_NAMES.hlog),
    events: join(dir, OUTPUT_FILE_NAMES.events),
    charts: [],
  };
  // Interval timestamps count from the load start, like the timeline; the log's StartTime is the run's.
  const startTimeMs = Date.parse(result.startedAt);
  const loadStartMs = result.timeline.startedAt === null ? NaN : Date.parse(result.timeline.startedAt);
  const hlog = renderHlog(intervals, {
    ...(Number.isFinite(startTimeMs) ? { startTimeMs } : {}),
    ...(Number.isFinite(loadStartMs) ? { baseTimeMs: loadStartMs } : {}),
    comments: [
      `pole-bench ${result.environment.poleBenchVersion}, topology ${result.topology.name}, one tag per data center`,
    ],
  });
  // The run's data first: a chart that cannot be drawn must not cost the result, only the chart.
  await Promise.all([
    writeFile(files.result, `${JSON.stringify(result, null, 2)}\n`, 'utf8'),
    writeFile(files.report, renderReport(result), 'utf8'),
    writeFile(files.hlog, hlog, 'utf8'),
    writeFile(files.events, eventLines(events), 'utf8'),
    ...(history && result.safety
      ? [writeFile(join(dir, result.safety.history), eventLines(history), 'utf8')]
      : []),
  ]);
  let charts: ChartFile[] = [];
  try {
    charts = await writeRunCharts(dir, result, intervals);
  } catch (err) {
    process.stderr.write(`pole-bench: the charts could not be drawn: ${(err as Error).message}\n`);
  }
  if (charts.length > 0) await writeFile(files.report, renderReport(result, charts), 'utf8');
  return { ...files, charts: charts.map((c) => join(dir, c.file)) };
}

function eventLines(events: readonly unknown[]): string {
  let out = '';
  for (const e of events) out += `${JSON.stringify(e)}\n`;
  return out;
}
