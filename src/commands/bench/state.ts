import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { runStateBench, type StateBenchResult } from '../../bench/state-bench.js';
import { DEFAULT_DEDUP_WINDOW } from '../../node/core/data-tree.js';

export default class BenchState extends CliCommand {
  static override description =
    'Measure what the replicated state costs per write: applying txns to the tree (dedup table full) and freezing a snapshot, in-process';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench state',
    '<%= config.bin %> bench state --fill 0 --txns 100000 --runs 5 --json',
    '<%= config.bin %> bench state --keys 3000',
    '<%= config.bin %> bench state --keys 20480 --clients 320',
  ];

  static override flags = {
    fill: Flags.integer({
      description: `writes applied before timing (default: the dedup window, ${DEFAULT_DEDUP_WINDOW}, plus 50,000)`,
      default: DEFAULT_DEDUP_WINDOW + 50_000,
      min: 0,
    }),
    txns: Flags.integer({ description: 'writes timed per run', default: 100_000, min: 1 }),
    runs: Flags.integer({ description: 'timed runs', default: 5, min: 1 }),
    keys: Flags.integer({
      description: 'distinct paths written over and over (0: a new path per write)',
      default: 0,
      min: 0,
    }),
    size: Flags.integer({ description: 'bytes per write', default: 1024, min: 0 }),
    clients: Flags.integer({
      description:
        'clients the writes come from, round robin (bench node has 320: --clients 320 --keys 20480)',
      default: 1,
      min: 1,
    }),
  };

  async run(): Promise<StateBenchResult> {
    const { flags } = await this.parse(BenchState);
    const r = runStateBench({
      fill: flags.fill,
      txns: flags.txns,
      runs: flags.runs,
      keys: flags.keys,
      size: flags.size,
      clients: flags.clients,
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
    if (!this.jsonEnabled()) {
      this.log(
        `apply: median ${r.applyUs.median.toFixed(2)} µs per txn (${r.applyUs.min.toFixed(2)}-${r.applyUs.max.toFixed(2)} over ${r.runs} runs of ${r.txns}); ` +
          `freeze ${r.freezeMs.median.toFixed(1)} ms for ${r.znodes} znodes`,
      );
    }
    return r;
  }
}
