// `pole-bench check FILE...`: a history checked for linearizability, key by key (src/check/): a
// run's history.jsonl or Jepsen's history.edn. Exit 0 every key linearizable, 1 some key violated,
// 5 some key undecided (and none violated), 2 a history that breaks its format, 3 a file that
// cannot be read.
import { Args, Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { durationFlag } from '../util/duration-flag.js';
import { checkCounts, type CheckCounts, type HistoryCheck } from '../check/check-history.js';
import { HistoryError, type Op } from '../check/history-ops.js';
import { MODEL_NAMES, type ModelName } from '../check/register-model.js';
import { HISTORY_FORMATS, type HistoryFormat } from '../check/read-history.js';
import { checkFile, UnreadableHistory, type CheckedFile } from '../check/check-files.js';
import { formatCheck } from '../check/check-report.js';

export const CHECK_EXIT = { linearizable: 0, violated: 1, badInput: 2, unreadable: 3, unknown: 5 } as const;

interface OpJson {
  readonly index: number;
  readonly line: number;
  readonly process: string;
  readonly f: string;
  readonly value: unknown;
  readonly call: number;
  /** null: in doubt (never completed). */
  readonly ret: number | null;
}

export interface FileCheck extends CheckCounts {
  readonly file: string;
  readonly format: HistoryFormat;
  readonly model: ModelName;
  readonly counterexamples: ReadonlyArray<{ key: string; minimal: boolean; ops: OpJson[] }>;
  readonly unknownKeys: ReadonlyArray<{ key: string; ops: number; steps: number }>;
}

export default class Check extends CliCommand {
  static override description =
    "Check histories for linearizability, key by key: a run's history.jsonl or Jepsen's history.edn (told apart by content). Each key comes out linearizable, violated (with the shortest stretch of operations that shows it), or unknown (its time ran out). Exit 0 all linearizable, 1 a key violated, 5 a key unknown and none violated, 2 a history that breaks its format (its line), 3 a file that cannot be read";

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> check reports/2026-12-07T10-00-00-000Z-paper-2dc/history.jsonl',
    '<%= config.bin %> check store/*/history.edn --model cas-register --budget 5m',
  ];

  static override args = {
    file: Args.string({ description: 'history file(s)', required: true }),
  };

  static override strict = false;

  static override flags = {
    model: Flags.option({ options: ['auto', ...MODEL_NAMES] as const, default: 'auto' })({
      description:
        'register (read, write), cas-register (and cas [old new]); auto: cas-register where the history has a cas',
    }),
    format: Flags.option({ options: ['auto', ...HISTORY_FORMATS] as const, default: 'auto' })({
      description: "the files' format (auto: JSON lines where the first line is JSON, else EDN)",
    }),
    budget: durationFlag({
      description: "each file's time; keys not decided in it are unknown",
      default: '60s',
      minMs: 1,
    }),
  };

  async run(): Promise<FileCheck[]> {
    const { argv, flags } = await this.parse(Check);
    const results: FileCheck[] = [];
    for (const file of argv as string[]) {
      let checked: CheckedFile;
      try {
        checked = await checkFile(file, { model: flags.model, format: flags.format, budgetMs: flags.budget });
      } catch (err) {
        if (err instanceof UnreadableHistory) this.error(err.message, { exit: CHECK_EXIT.unreadable });
        if (err instanceof HistoryError)
          this.error(`${file}:${err.line}: ${err.problem}`, { exit: CHECK_EXIT.badInput });
        throw err;
      }
      if (!this.jsonEnabled()) this.log(formatCheck(file, checked.format, checked.check));
      results.push(asJson(file, checked.format, checked.check));
    }
    process.exitCode = results.some((r) => r.violated > 0)
      ? CHECK_EXIT.violated
      : results.some((r) => r.unknown > 0)
        ? CHECK_EXIT.unknown
        : CHECK_EXIT.linearizable;
    return results;
  }
}

function asJson(file: string, format: HistoryFormat, c: HistoryCheck): FileCheck {
  const op = (o: Op): OpJson => ({
    index: o.index,
    line: o.line,
    process: o.process,
    f: o.f,
    value: o.f === 'read' ? o.output : o.input,
    call: o.call,
    ret: o.ret === Infinity ? null : o.ret,
  });
  return {
    file,
    format,
    model: c.model,
    ...checkCounts(c),
    counterexamples: c.problems
      .filter((p) => p.counterexample)
      .map((p) => ({ key: p.key, minimal: p.counterexample!.minimal, ops: p.counterexample!.ops.map(op) })),
    unknownKeys: c.problems
      .filter((p) => p.verdict === 'unknown')
      .map((p) => ({ key: p.key, ops: p.ops, steps: p.steps })),
  };
}
