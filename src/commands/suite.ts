import { Args, Flags } from '@oclif/core';
import { parseReadShare } from '../run/run-overrides.js';
import { CliCommand } from '../util/cli-command.js';
import { SingleBar } from 'cli-progress';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSuite } from '../experiment/suite-file.js';
import { runSuite, type SuiteProgress } from '../experiment/suite-runner.js';
import { suiteCharts } from '../experiment/suite-charts.js';
import { renderSuiteMarkdown, suiteDocument, type SuiteDocument } from '../experiment/suite-summary.js';
import { RunGuard, exitWhenDone } from '../run/run-guard.js';
import { InputError } from '../util/input-error.js';
import { EXIT_CODES } from '../report/result.js';
import { RUNTIME_CHOICES } from '../vocabulary/runtimes.js';

export default class Suite extends CliCommand {
  static override description =
    'Run a suite of runs (topologies × targets × oracles × swept parameters × repeats) one after another; resumable; writes suite.json and suite.md';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> suite suites/targets.yaml --quick --out reports/targets-quick',
    '<%= config.bin %> suite suites/paper.yaml --quick --out reports/paper-quick',
  ];

  static override args = {
    suite: Args.string({ description: 'suite file (YAML)', required: true }),
  };

  static override flags = {
    quick: Flags.boolean({ description: "the suite's quick variant (fewer repeats, shorter runs)" }),
    runtime: Flags.option({ options: RUNTIME_CHOICES })({
      description: 'where every run’s nodes run (default: each run’s own choice, auto)',
    }),
    out: Flags.string({
      description: 'output directory; a suite already there is resumed (default reports/suite-<name>)',
    }),
    quiet: Flags.boolean({ description: 'print nothing but errors' }),
    reads: Flags.string({
      description:
        "every run's share of reads, e.g. 0.2, where the suite file gives none (run --reads; history.jsonl and its check)",
    }),
  };

  async run(): Promise<SuiteDocument> {
    const { args, flags } = await this.parse(Suite);
    const json = this.jsonEnabled();
    let suite;
    try {
      suite = loadSuite(args.suite, {
        quick: flags.quick,
        ...(flags.reads !== undefined ? { reads: parseReadShare(flags.reads) } : {}),
      });
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
    const out = flags.out ?? join('reports', `suite-${suite.name}${suite.quick ? '-quick' : ''}`);
    const command = [
      'pole-bench suite',
      args.suite,
      ...(flags.quick ? ['--quick'] : []),
      ...(flags.runtime ? ['--runtime', flags.runtime] : []),
      ...(flags.reads !== undefined ? ['--reads', flags.reads] : []),
      '--out',
      out,
    ].join(' ');
    // No suite should take more than a day; each run is bounded by the suite too.
    const guard = new RunGuard({ deadlineMs: 24 * 3600_000 }).start();
    const progress = progressDisplay(flags.quiet || json);
    const startedAt = new Date().toISOString();
    try {
      const outcome = await runSuite(suite, {
        out,
        cli: join(this.config.root, 'bin', 'run.js'),
        ...(flags.runtime ? { runtime: flags.runtime } : {}),
        signal: guard.signal,
        onProgress: progress.update,
      });
      progress.stop();
      const doc = suiteDocument(suite, outcome, {
        runtime: flags.runtime ?? 'auto',
        startedAt,
        finishedAt: new Date().toISOString(),
      });
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'suite.json'), `${JSON.stringify(doc, null, 2)}\n`);
      const charts = suiteCharts(doc.cells);
      if (charts.length > 0) {
        const { renderSvg } = await import('../report/charts/svg-render.js');
        for (const c of charts) await writeFile(join(out, c.file), (await renderSvg(c.spec)).svg);
      }
      await writeFile(join(out, 'suite.md'), renderSuiteMarkdown(doc, command, charts));
      const failed = outcome.runs.filter((r) => r.status === 'failed');
      if (!flags.quiet && !json) {
        this.log(`suite: ${join(out, 'suite.md')}`);
        for (const f of failed) this.log(`failed: ${f.cell} run ${f.repeat}: ${f.error ?? ''}`);
      }
      if (outcome.interrupted !== null)
        this.error(`suite stopped: ${outcome.interrupted}; run the same command to resume (${command})`, {
          exit: 3,
        });
      const suspect = outcome.runs.filter((r) => r.verdict === 'suspect');
      if (!flags.quiet && !json)
        for (const r of suspect)
          this.log(`suspect: ${r.cell} run ${r.repeat}: its cross-checks disagree (${r.dir}/report.md)`);
      // A run that broke is the suite's failure, then a run whose figures disagree; thresholds that
      // failed are reported, as in `run`.
      process.exitCode =
        failed.length > 0
          ? EXIT_CODES['run-failed']
          : suspect.length > 0
            ? EXIT_CODES.suspect
            : outcome.runs.some((r) => r.verdict === 'threshold-failed')
              ? EXIT_CODES['threshold-failed']
              : EXIT_CODES.passed;
      return doc;
    } catch (err) {
      progress.stop();
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    } finally {
      guard.stop();
      exitWhenDone();
    }
  }
}

/** A bar over the whole suite with the time left on a terminal; a line per run otherwise. */
function progressDisplay(silent: boolean): { update: (p: SuiteProgress) => void; stop: () => void } {
  if (silent) return { update: () => undefined, stop: () => undefined };
  if (process.stderr.isTTY) {
    const bar = new SingleBar({
      stream: process.stderr,
      format: 'suite [{bar}] {value}/{total} runs | {current} | about {left} left',
      hideCursor: true,
    });
    let started = false;
    return {
      update: (p) => {
        const fields = {
          current: p.current ? `${p.current.cell} #${p.current.repeat}` : 'done',
          left: clock(p.etaS),
        };
        if (!started) bar.start(p.total, p.finished, fields);
        else bar.update(p.finished, fields);
        started = true;
      },
      stop: () => bar.stop(),
    };
  }
  return {
    update: (p) => {
      const now = p.current ? `running ${p.current.cell} #${p.current.repeat}` : 'done';
      process.stderr.write(
        `suite: ${p.finished}/${p.total} runs finished (${p.resumed} resumed, ${p.failed} failed), ${now}, about ${clock(p.etaS)} left\n`,
      );
    },
    stop: () => undefined,
  };
}

function clock(s: number): string {
  const m = Math.floor(s / 60);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}
