// Render a run's charts to SVG files beside report.md. Vega is loaded here, on first use, so that
// commands that draw nothing (the agents, the node) never pay for loading it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HlogInterval } from '../hlog-writer.js';
import type { RunResult } from '../result.js';
import { runCharts } from './run-charts.js';

/** A chart written into the output directory, as the report links it. */
export interface ChartFile {
  readonly file: string;
  readonly title: string;
}

export async function writeRunCharts(
  dir: string,
  result: RunResult,
  intervals: readonly HlogInterval[],
): Promise<ChartFile[]> {
  const charts = runCharts(result, intervals);
  if (charts.length === 0) return [];
  const { renderSvg } = await import('./svg-render.js');
  const written: ChartFile[] = [];
  for (const c of charts) {
    const { svg } = await renderSvg(c.spec);
    await writeFile(join(dir, c.file), svg, 'utf8');
    written.push({ file: c.file, title: c.title });
  }
  return written;
}
