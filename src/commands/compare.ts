import { Args, Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { appendFile, writeFile } from 'node:fs/promises';
import { compareScopes, type Comparison } from '../report/compare/compare.js';
import { benchmarkJson, compareMarkdown } from '../report/compare/compare-output.js';
import { DEFAULT_RULES, parseRule } from '../report/compare/compare-rules.js';
import { loadOutputs } from '../report/compare/load-outputs.js';
import { InputError } from '../util/input-error.js';
import { EXIT_CODES } from '../report/result.js';

export default class Compare extends CliCommand {
  static override description =
    'Compare a run or suite with a baseline, metric by metric, with a noise allowance from the repeats; exit 1 on a regression';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> compare reports/last-night reports/tonight',
    '<%= config.bin %> compare base/ cur/ --fail-on "latency.*.after.mean +10%" --fail-on "writes.lost > 0"',
    '<%= config.bin %> compare base/ cur/ --benchmark-json bench.json',
  ];

  static override args = {
    baseline: Args.string({
      description: 'run or suite output directory (or a result.json)',
      required: true,
    }),
    current: Args.string({ description: 'run or suite output directory (or a result.json)', required: true }),
  };

  static override flags = {
    'fail-on': Flags.string({
      description: `a regression rule, repeatable; replaces the defaults (${DEFAULT_RULES.map((r) => `"${r}"`).join(', ')})`,
      multiple: true,
      // One value per flag: `--fail-on RULE BASELINE CURRENT` leaves the arguments be.
      multipleNonGreedy: true,
    }),
    'benchmark-json': Flags.string({
      description: "write the current side's metrics as github-action-benchmark's customSmallerIsBetter JSON",
    }),
    'allow-suspect': Flags.boolean({
      description:
        'compare even where a side holds a suspect run (its own cross-checks disagree); refused otherwise, exit 4',
    }),
    quiet: Flags.boolean({ description: 'print nothing but errors (the exit code still tells)' }),
  };

  async run(): Promise<Comparison> {
    const { args, flags } = await this.parse(Compare);
    let comparison: Comparison;
    let markdown: string;
    try {
      const rules = (flags['fail-on'] ?? DEFAULT_RULES).map((r) => parseRule(r));
      const base = loadOutputs(args.baseline);
      const cur = loadOutputs(args.current);
      if (base.kind !== cur.kind)
        throw new InputError({
          file: args.current,
          problem: `is a ${cur.kind}, the baseline a ${base.kind}: compare like with like`,
        });
      const suspect = [...base.suspect, ...cur.suspect];
      if (suspect.length > 0 && !flags['allow-suspect'])
        this.error(
          `${suspect.join(', ')}: suspect (the run's own cross-checks disagree, see its report.md), so its figures are no baseline and no measurement; --allow-suspect compares them all the same`,
          { exit: EXIT_CODES.suspect },
        );
      comparison = compareScopes(base.scopes, cur.scopes, rules);
      markdown = compareMarkdown(comparison, { baseline: args.baseline, current: args.current });
      if (suspect.length > 0)
        markdown = `**Suspect runs compared (--allow-suspect)**: ${suspect.join(', ')}.\n\n${markdown}`;
      if (flags['benchmark-json'])
        await writeFile(flags['benchmark-json'], `${JSON.stringify(benchmarkJson(cur.scopes), null, 2)}\n`);
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
    if (!flags.quiet && !this.jsonEnabled()) this.log(markdown);
    // In a GitHub Actions job the table also goes to the job's summary page.
    const summary = process.env['GITHUB_STEP_SUMMARY'];
    if (summary) await appendFile(summary, markdown);
    process.exitCode = comparison.regressions > 0 ? 1 : 0;
    return comparison;
  }
}
