import { Args, Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { runCostBench, type CostBenchResult } from '../../bench/cost-bench.js';
import { InputError } from '../../util/input-error.js';
import { TARGET_NAMES } from '../../vocabulary/names.js';

export default class BenchCost extends CliCommand {
  static override description =
    "What each process of a run costs in CPU per acknowledged write (nodes, relay, agents, harness): the topology's load on the process runtime under its initial leader, no fault, repeated";

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench cost topologies/paper-2dc.yaml',
    '<%= config.bin %> bench cost topologies/lan-5.yaml --rate 1000 --duration 20s --runs 3 --json',
  ];

  static override args = {
    topology: Args.string({ description: 'topology file (YAML)', required: true }),
  };

  static override flags = {
    target: Flags.option({ options: TARGET_NAMES })({
      description: "the system under test (default: the topology's `target:`, else pole)",
    }),
    rate: Flags.integer({ description: "writes per second (default: the topology's)", min: 1 }),
    duration: Flags.string({ description: 'length of each run, e.g. 30s', default: '30s' }),
    runs: Flags.integer({ description: 'runs, one after another', default: 3, min: 1 }),
    seed: Flags.integer({ description: 'seed of the first run (the next ones count up)', default: 1 }),
  };

  async run(): Promise<CostBenchResult> {
    const { args, flags } = await this.parse(BenchCost);
    const say = (line: string): void => {
      if (!this.jsonEnabled()) this.log(line);
    };
    let result: CostBenchResult;
    try {
      result = await runCostBench({
        topologyFile: args.topology,
        duration: flags.duration,
        runs: flags.runs,
        seed: flags.seed,
        version: this.config.version,
        log: say,
        ...(flags.target !== undefined ? { target: flags.target } : {}),
        ...(flags.rate !== undefined ? { rate: flags.rate } : {}),
      });
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
    say(
      `\n${result.topology} on ${result.target}, ${result.rate} writes/s, ${result.runs.length} × ${result.duration}, leader ${result.leader ?? '?'}: ` +
        `machine ${fmt(result.machineBusyPct?.median)} % busy (${fmt(result.machineBusyPct?.min)}-${fmt(result.machineBusyPct?.max)})`,
    );
    say('µs of CPU per acknowledged write, median (min-max) over the runs:');
    for (const [label, s] of Object.entries(result.summary))
      say(`  ${label.padEnd(24)} ${fmt(s.median).padStart(6)}  (${fmt(s.min)}-${fmt(s.max)})`);
    const chunks = result.relayChunksPerWrite;
    const relayUs = result.summary['relay (in the harness)'];
    if (chunks)
      say(
        `the relay per acknowledged write: ${one(chunks.median)} chunks (${one(chunks.min)}-${one(chunks.max)}), ` +
          `${one(result.relayWakesPerWrite?.median)} wake-ups of its threads (${one(result.relayWakesPerWrite?.min)}-${one(result.relayWakesPerWrite?.max)})` +
          (relayUs
            ? `; ${one(relayUs.median / chunks.median)} µs of CPU per chunk (the medians' ratio)`
            : ''),
      );
    say('latency per data center after the warm-up, ms (mean / p50 / p99), run by run:');
    for (const r of result.runs)
      say(
        `  seed ${r.seed}: ` +
          Object.keys(r.meanMs)
            .map((dc) => `${dc} ${ms(r.meanMs[dc])} / ${ms(r.p50Ms[dc])} / ${ms(r.p99Ms[dc])}`)
            .join(', '),
      );
    const failed = result.runs.filter((r) => r.errors.length > 0 || r.failedWrites > 0);
    if (failed.length > 0) {
      for (const r of failed)
        say(`run with seed ${r.seed}: ${r.failedWrites} failed writes; ${r.errors.join('; ') || 'no error'}`);
      process.exitCode = 1;
    }
    return result;
  }
}

function ms(x: number | null | undefined): string {
  return x === null || x === undefined ? '?' : x.toFixed(2);
}

function fmt(x: number | undefined): string {
  return x === undefined ? '?' : x.toFixed(0);
}

function one(x: number | undefined): string {
  return x === undefined ? '?' : x.toFixed(1);
}
