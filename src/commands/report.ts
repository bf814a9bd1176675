// `pole-bench report DIR`: draw a stored run's report.md and charts again from its result.json and
// latency.hlog (after an upgrade of pole-bench, or to time how long drawing takes).
import { Args, Command } from '@oclif/core';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeRunCharts } from '../report/charts/write-charts.js';
import { parseHlog } from '../report/hlog-writer.js';
import { renderReport } from '../report/markdown-report.js';
import { readResultFile } from '../report/result.js';
import { OUTPUT_FILE_NAMES } from '../report/write-outputs.js';
import { InputError } from '../util/input-error.js';

export default class Report extends Command {
  static override description =
    "Draw a run's report.md and charts (*.svg) again from the result.json and latency.hlog in its output directory";

  static override examples = ['<%= config.bin %> report reports/2026-11-25T12-00-00-000Z-paper-2dc'];

  static override args = {
    dir: Args.string({ description: 'a run output directory', required: true }),
  };

  async run(): Promise<void> {
    const { args } = await this.parse(Report);
    try {
      const result = readResultFile(join(args.dir, OUTPUT_FILE_NAMES.result));
      const hlogFile = join(args.dir, OUTPUT_FILE_NAMES.hlog);
      const hlog = await readFile(hlogFile, 'utf8').catch(() => {
        throw new InputError({
          file: hlogFile,
          problem: 'cannot read the interval log the charts are drawn from',
        });
      });
      const charts = await writeRunCharts(args.dir, result, parseHlog(hlog));
      await writeFile(join(args.dir, OUTPUT_FILE_NAMES.report), renderReport(result, charts), 'utf8');
      this.log(`${join(args.dir, OUTPUT_FILE_NAMES.report)} and ${charts.length} charts written`);
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
  }
}
