import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { runRelayBench, type JitterSpec, type RelayBenchResult } from '../../bench/relay-bench.js';
import { DELAY_DISTRIBUTIONS, type DelayDistribution } from '../../shaping/relay/delay-distribution.js';

export default class BenchRelay extends CliCommand {
  static override description =
    "Measure the userspace delay relay (the shaping used where the kernel has no netem): configured vs measured RTT, the relay threads' CPU, and throughput";

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench relay',
    '<%= config.bin %> bench relay --rtt 10,20,40,80 --samples 200 --jitter 2% --distribution pareto --json',
  ];

  static override flags = {
    rtt: Flags.string({ description: 'RTTs to measure, ms, comma-separated', default: '10,20,40,80' }),
    samples: Flags.integer({ description: 'round trips per RTT', default: 200, min: 1 }),
    interval: Flags.integer({
      description: 'pause between a pong and the next ping, ms',
      default: 5,
      min: 0,
    }),
    jitter: Flags.string({
      description: 'jitter per direction: a share of the one-way delay ("2%") or ms ("0.4")',
      default: '0',
    }),
    distribution: Flags.option({
      description: 'jitter distribution',
      options: DELAY_DISTRIBUTIONS,
      default: 'pareto' as DelayDistribution,
    })(),
    seed: Flags.integer({ description: 'seed of the delay samplers', default: 1 }),
    'bulk-mb': Flags.integer({ description: 'MB of the bulk transfer (0 skips it)', default: 128, min: 0 }),
    'load-seconds': Flags.integer({
      description: 'seconds of the paced 5,000 × 1 kB/s load (0 skips it)',
      default: 2,
      min: 0,
    }),
  };

  async run(): Promise<RelayBenchResult> {
    const { flags } = await this.parse(BenchRelay);
    const rttsMs = flags.rtt.split(',').map((t) => Number(t.trim()));
    if (rttsMs.length === 0 || rttsMs.some((r) => !Number.isFinite(r) || r <= 0)) {
      this.error(`--rtt: expected positive numbers of ms separated by commas, got '${flags.rtt}'`, {
        exit: 2,
      });
    }
    const jitter = parseJitter(flags.jitter);
    if (jitter === null) {
      this.error(`--jitter: expected a share like "2%" or ms like "0.4", got '${flags.jitter}'`, { exit: 2 });
    }
    const result = await runRelayBench({
      rttsMs,
      samples: flags.samples,
      intervalMs: flags.interval,
      jitter,
      distribution: flags.distribution,
      seed: flags.seed,
      bulkBytes: flags['bulk-mb'] * 1e6,
      loadSeconds: flags['load-seconds'],
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
    if (!this.jsonEnabled()) {
      const every = (ok: boolean) => (ok ? 'every' : 'NOT every');
      this.log(
        `${every(result.allWithinBar)} measured mean RTT is within max(0.5 ms, 3 %) of the configured one; ` +
          `${every(result.allRelayWithinBar)} one is, net of the baseline`,
      );
    }
    return result;
  }
}

function parseJitter(text: string): JitterSpec | null {
  const t = text.trim();
  const percent = t.endsWith('%');
  const body = percent ? t.slice(0, -1) : t.replace(/ms$/, '');
  if (body.trim() === '') return null;
  const n = Number(body);
  if (!Number.isFinite(n) || n < 0) return null;
  return percent ? { percent: n } : { ms: n };
}
