// The load agent's HDR histograms: values in microseconds from 1 µs to 60 s at 3 significant
// digits (a value beyond 60 s is recorded as 60 s; nothing the agent measures legitimately gets
// near it, since writes time out long before). The agent is single-threaded, so plain histograms
// reset after each interval do the job of hdr-histogram-js's double-buffered Recorder.
import * as hdr from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';
import type { LatencySummary } from './agent-protocol.js';

export const HISTOGRAM_LOWEST_US = 1;
export const HISTOGRAM_HIGHEST_US = 60_000_000;
export const HISTOGRAM_DIGITS = 3;

export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: HISTOGRAM_LOWEST_US,
    highestTrackableValue: HISTOGRAM_HIGHEST_US,
    numberOfSignificantValueDigits: HISTOGRAM_DIGITS,
    autoResize: false,
  });
}

/** Records a duration given in ms, clamped into the histogram's range. */
export function recordMs(h: Histogram, ms: number): void {
  const us = Math.round(ms * 1000);
  h.recordValue(
    us < HISTOGRAM_LOWEST_US ? HISTOGRAM_LOWEST_US : us > HISTOGRAM_HIGHEST_US ? HISTOGRAM_HIGHEST_US : us,
  );
}

/** The ms summary of a µs histogram; all zero when it is empty. */
export function summarizeMs(h: Histogram): LatencySummary {
  const count = h.totalCount;
  if (count === 0) return { count: 0, mean: 0, sd: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  const at = (p: number): number => round3(h.getValueAtPercentile(p) / 1000);
  return {
    count,
    mean: round3(h.mean / 1000),
    sd: round3(h.stdDeviation / 1000),
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: round3(h.maxValue / 1000),
  };
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function decodeHistogram(base64: string): Histogram {
  return hdr.decodeFromCompressedBase64(base64);
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
