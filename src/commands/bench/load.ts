import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { durationFlag } from '../../util/duration-flag.js';
import { runLoadBench, type LoadBenchResult } from '../../bench/load-bench.js';
import { ARRIVALS, type Arrival } from '../../load/open-loop-schedule.js';
import { DEFAULT_AGENT_NICE } from '../../load/agent-protocol.js';

export default class BenchLoad extends CliCommand {
  static override description =
    'Measure the open-loop load agent on this machine: for each target rate, one `pole-bench agent` child process writes to a local cluster; reports the rate sent and acknowledged, send lateness and write latency';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench load',
    '<%= config.bin %> bench load --rate 1000,5000 --duration 10s --arrival poisson --json',
  ];

  static override flags = {
    rate: Flags.string({ description: 'target rates, writes/s, comma-separated', default: '1000,5000' }),
    duration: durationFlag({
      description: 'load per rate (the first second is warm-up), e.g. 10s',
      default: '10s',
      minMs: 2000,
    }),
    arrival: Flags.option({
      description: 'arrival process',
      options: ARRIVALS,
      default: 'constant' as Arrival,
    })(),
    nodes: Flags.integer({ description: 'number of node processes', default: 3, min: 3 }),
    size: Flags.integer({ description: 'bytes per write', default: 1024, min: 0 }),
    seed: Flags.integer({ description: 'seed of the schedule, server picks and payloads', default: 1 }),
    wake: Flags.option({
      description: "how the agent's send loop sleeps: a clock thread, setTimeout, or chosen by rate",
      options: ['auto', 'thread', 'timeout'] as const,
      default: 'auto' as const,
    })(),
    nice: Flags.string({
      description: 'the agent\'s CPU priority, -20..19, or "none" to leave it',
      default: String(DEFAULT_AGENT_NICE),
    }),
  };

  async run(): Promise<LoadBenchResult> {
    const { flags } = await this.parse(BenchLoad);
    const rates = flags.rate.split(',').map((t) => Number(t.trim()));
    if (rates.length === 0 || rates.some((r) => !Number.isFinite(r) || r <= 0)) {
      this.error(`--rate: expected positive numbers of writes/s separated by commas, got '${flags.rate}'`, {
        exit: 2,
      });
    }
    const nice = flags.nice === 'none' ? null : Number(flags.nice);
    if (nice !== null && (!Number.isInteger(nice) || nice < -20 || nice > 19)) {
      this.error(`--nice: expected an integer in -20..19 or "none", got '${flags.nice}'`, { exit: 2 });
    }
    const result = await runLoadBench({
      nice,
      ...(flags.wake === 'auto' ? {} : { wake: flags.wake }),
      rates,
      durationS: flags.duration / 1000,
      arrival: flags.arrival,
      nodes: flags.nodes,
      size: flags.size,
      seed: flags.seed,
      warmupS: 1,
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
    if (!this.jsonEnabled()) {
      this.log(
        `bar (acknowledged rate within 1 % of the target, send-lateness p99 < 2 ms): ${result.barMet ? 'met' : 'MISSED'}`,
      );
    }
    return result;
  }
}
