import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { durationFlag } from '../../util/duration-flag.js';
import { runHeartbeatBench, type HeartbeatBenchResult } from '../../bench/heartbeat-bench.js';

export default class BenchHeartbeat extends CliCommand {
  static override description =
    'Measure what heartbeats cost: CPU of an idle cluster of node processes with heartbeats off, then on';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench heartbeat',
    '<%= config.bin %> bench heartbeat --nodes 9 --period 100ms --duration 30s --json',
  ];

  static override flags = {
    nodes: Flags.integer({ description: 'number of node processes', default: 9, min: 3 }),
    period: durationFlag({ description: 'heartbeat period, e.g. 100ms', default: '100ms', minMs: 1 }),
    duration: durationFlag({ description: 'CPU measurement per run, e.g. 20s', default: '20s', minMs: 1000 }),
  };

  async run(): Promise<HeartbeatBenchResult> {
    const { flags } = await this.parse(BenchHeartbeat);
    const r = await runHeartbeatBench({
      nodes: flags.nodes,
      periodMs: flags.period,
      durationS: flags.duration / 1000,
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
    if (!this.jsonEnabled()) {
      this.log(
        `heartbeat cost: ${r.costPerNodePct.toFixed(2)} % of a core per node, ` +
          `${r.costTotalPct.toFixed(2)} % for the cluster (${r.messagesPerSec} messages/s)`,
      );
      this.log(
        `peers in RTT_i: ${Object.entries(r.measuredPeers)
          .map(([id, n]) => `${id}:${n}`)
          .join(' ')}`,
      );
    }
    return r;
  }
}
