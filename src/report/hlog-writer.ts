// latency.hlog: the per-interval latency histograms of a run in HdrHistogram's interval log format,
// so the standard tools (HistogramLogProcessor, HdrHistogram's plotters, hdr-histogram-js's
// HistogramLogReader) can re-slice them. One tag per data center:
//
//   #[Histogram log format version 1.3]
//   #[StartTime: 1732170000.123 (seconds since epoch), 2024-11-21T06:20:00.123Z]
//   #[BaseTime: 1732170005.000 (seconds since epoch)]
//   #Values are in microseconds; Interval_Max is in milliseconds.
//   "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//   Tag=caltech,0.000,1.000,12.345,HISTFAAAA…
//
// We write the lines ourselves: hdr-histogram-js's HistogramLogWriter takes decoded histograms (the
// agents send them already encoded, and decoding only to re-encode is waste), writes no BaseTime
// line and puts a stray blank line after StartTime.
import { writeFile } from 'node:fs/promises';

/** One interval histogram of one data center, as the load agents stream them. */
export interface HlogInterval {
  /** The data center (no commas or white space: they would break the line format). */
  readonly tag: string;
  /** Wall-clock ms (epoch) the interval started and ended. */
  readonly startMs: number;
  readonly endMs: number;
  /** encodeIntoCompressedBase64 of the interval's histogram. */
  readonly histogramBase64: string;
  /** The interval's largest value, ms. */
  readonly maxMs: number;
}

export interface HlogOptions {
  /** Wall-clock ms the run started; default: the first interval's start. */
  readonly startTimeMs?: number;
  /** Wall-clock ms the interval timestamps count from; default: startTimeMs. */
  readonly baseTimeMs?: number;
  /** The histograms' value unit, for the comment line. Default "microseconds". */
  readonly valueUnit?: string;
  /** Extra comment lines (without the leading "#"), written after the header. */
  readonly comments?: readonly string[];
}

export const HLOG_LEGEND =
  '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"';

/** The whole log as text, intervals in start-time order (ties keep their given order). */
export function renderHlog(intervals: readonly HlogInterval[], opts: HlogOptions = {}): string {
  const first = intervals.reduce((min, iv) => Math.min(min, iv.startMs), Infinity);
  const startTimeMs = opts.startTimeMs ?? (Number.isFinite(first) ? first : 0);
  const baseTimeMs = opts.baseTimeMs ?? startTimeMs;
  const lines = [
    '#[Histogram log format version 1.3]',
    `#[StartTime: ${seconds(startTimeMs)} (seconds since epoch), ${new Date(startTimeMs).toISOString()}]`,
    `#[BaseTime: ${seconds(baseTimeMs)} (seconds since epoch)]`,
    `#Values are in ${opts.valueUnit ?? 'microseconds'}; Interval_Max is in milliseconds.`,
    ...(opts.comments ?? []).map((c) => `#${c.replace(/[\r\n]+/g, ' ')}`),
    HLOG_LEGEND,
  ];
  const ordered = intervals
    .map((iv, i) => ({ iv, i }))
    .sort((a, b) => a.iv.startMs - b.iv.startMs || a.i - b.i);
  for (const { iv } of ordered) lines.push(intervalLine(iv, baseTimeMs));
  return `${lines.join('\n')}\n`;
}

/** renderHlog, written to `file`. */
export async function writeHlog(
  file: string,
  intervals: readonly HlogInterval[],
  opts: HlogOptions = {},
): Promise<void> {
  await writeFile(file, renderHlog(intervals, opts), 'utf8');
}

function intervalLine(iv: HlogInterval, baseTimeMs: number): string {
  if (iv.tag === '' || /[\s,]/.test(iv.tag)) {
    throw new Error(`hlog tag ${JSON.stringify(iv.tag)} must be non-empty, without commas or white space`);
  }
  if (!/^[A-Za-z0-9+/=]+$/.test(iv.histogramBase64)) {
    throw new Error(`interval of ${iv.tag} at ${iv.startMs}: the histogram is not base64`);
  }
  if (!(iv.endMs >= iv.startMs))
    throw new Error(`interval of ${iv.tag} at ${iv.startMs} ends before it starts`);
  const start = seconds(iv.startMs - baseTimeMs);
  const length = seconds(iv.endMs - iv.startMs);
  return `Tag=${iv.tag},${start},${length},${iv.maxMs.toFixed(3)},${iv.histogramBase64}`;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * The intervals of a log renderHlog wrote, back (for re-drawing a stored run's charts): tagged
 * interval lines, their times made absolute again with the log's BaseTime. Lines it does not
 * recognise are skipped.
 */
export function parseHlog(text: string): HlogInterval[] {
  const base = /^#\[BaseTime: ([\d.]+)/m.exec(text) ?? /^#\[StartTime: ([\d.]+)/m.exec(text);
  const baseMs = base ? Number(base[1]) * 1000 : 0;
  const out: HlogInterval[] = [];
  for (const line of text.split('\n')) {
    const m = /^Tag=([^,\s]+),([\d.]+),([\d.]+),([\d.]+),([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) continue;
    const startMs = baseMs + Number(m[2]) * 1000;
    out.push({
      tag: m[1] as string,
      startMs,
      endMs: startMs + Number(m[3]) * 1000,
      maxMs: Number(m[4]),
      histogramBase64: m[5] as string,
    });
  }
  return out;
}
