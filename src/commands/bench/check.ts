import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { runCheckBench, type CheckBenchResult } from '../../bench/check-bench.js';
import { durationFlag } from '../../util/duration-flag.js';

export default class BenchCheck extends CliCommand {
  static override description =
    'Measure the linearizability checker: seeded histories of a model register with violations planted, checked key by key; exit 1 if a planted violation is missed or a key is left unknown';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench check',
    '<%= config.bin %> bench check --ops 200000 --keys 1000 --json',
  ];

  static override flags = {
    ops: Flags.integer({ description: 'operations per history', default: 200_000, min: 1 }),
    keys: Flags.integer({ description: 'keys they are spread over', default: 1_000, min: 1 }),
    processes: Flags.integer({ description: 'concurrent clients', default: 50, min: 1 }),
    violations: Flags.integer({ description: 'keys given a violation', default: 5, min: 0 }),
    runs: Flags.integer({ description: 'histories checked (seeds seed, seed+1, …)', default: 3, min: 1 }),
    seed: Flags.integer({ description: 'seed of the first history', default: 1 }),
    files: Flags.integer({
      description:
        'then this many single-key Jepsen history.edn files of 100-200 ops, checked in one call (0: none)',
      default: 1_000,
      min: 0,
    }),
    search: Flags.boolean({
      description:
        'decide every key by the search, not by its zones (the path of histories with cas or repeated values)',
    }),
    budget: durationFlag({ description: "the checker's time for one history", default: '60s', minMs: 1 }),
  };

  async run(): Promise<CheckBenchResult> {
    const { flags } = await this.parse(BenchCheck);
    const r = await runCheckBench({
      ops: flags.ops,
      keys: flags.keys,
      processes: flags.processes,
      violations: flags.violations,
      runs: flags.runs,
      seed: flags.seed,
      budgetMs: flags.budget,
      method: flags.search ? 'search' : 'auto',
      files: flags.files,
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
    if (!this.jsonEnabled())
      this.log(
        `median ${r.seconds.toFixed(2)} s for ${r.ops} ops over ${r.keys} keys (${r.runs.length} runs)`,
      );
    if (r.runs.some((x) => !x.found) || (r.files && !r.files.found)) process.exitCode = 1;
    return r;
  }
}
