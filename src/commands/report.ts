// `pole-bench report DIR`: draw a stored run's report.md and charts again from its result.json and
// latency.hlog (after an upgrade of pole-bench, or to time how long drawing takes); with --check,
// hold its figures against each other instead (report/self-check.ts) and exit 4 (suspect) if any disagree.
import { Args, Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeRunCharts } from '../report/charts/write-charts.js';
import { parseHlog } from '../report/hlog-writer.js';
import { renderReport } from '../report/markdown-report.js';
import { EXIT_CODES, readResultFile } from '../report/result.js';
import { selfCheck } from '../report/self-check.js';
import { OUTPUT_FILE_NAMES } from '../report/write-outputs.js';
import { InputError } from '../util/input-error.js';

export default class Report extends CliCommand {
  static override description =
    "Draw a run's report.md and charts (*.svg) again from the result.json and latency.hlog in its output directory";

  static override examples = [
    '<%= config.bin %> report reports/2026-11-25T12-00-00-000Z-paper-2dc',
    '<%= config.bin %> report --check reports/2026-11-25T12-00-00-000Z-paper-2dc',
  ];

  static override flags = {
    check: Flags.boolean({
      description:
        "check the stored run's figures against each other (as every run does) and exit 4 (suspect) if any check fails or writes went unverified; draws nothing",
      default: false,
    }),
  };

  static override args = {
    dir: Args.string({ description: 'a run output directory', required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Report);
    try {
      const result = readResultFile(join(args.dir, OUTPUT_FILE_NAMES.result));
      if (flags.check) {
        // Checked again from the figures themselves: the file's own selfCheck may be stale or edited.
        const { checked, violations, notEvaluated = [] } = selfCheck(result);
        for (const v of violations) this.log(`violated: ${v}`);
        for (const n of notEvaluated) this.log(`not evaluated: ${n.check} (${n.why})`);
        const held = checked.filter((c) => !violations.some((v) => v.startsWith(`${c}: `)));
        const unverified = result.writes.unverified ?? 0;
        if (unverified > 0)
          this.log(`unverified: ${unverified} acknowledged writes not covered by the final read`);
        this.log(
          `${held.length} of ${checked.length + notEvaluated.length} checks held, ${checked.length - held.length} violated, ${notEvaluated.length} not evaluated`,
        );
        if (violations.length > 0 || unverified > 0) this.exit(EXIT_CODES.suspect);
        return;
      }
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
