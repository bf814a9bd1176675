import { Command, Flags } from '@oclif/core';
import { runHeartbeatBench, type HeartbeatBenchResult } from '../../bench/heartbeat-bench.js';

export default class BenchHeartbeat extends Command {
  static override description =
    'Measure what heartbeats cost: CPU of an idle cluster of node processes with heartbeats off, then on';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench heartbeat',
    '<%= config.bin %> bench heartbeat --nodes 9 --period 100 --duration 30 --json',
  ];

  static override flags = {
    nodes: Flags.integer({ description: 'number of node processes', default: 9, min: 3 }),
    period: Flags.integer({ description: 'heartbeat period, ms', default: 100, min: 1 }),
    duration: Flags.integer({ description: 'seconds of CPU measurement per run', default: 20, min: 1 }),
  };

  async run(): Promise<HeartbeatBenchResult> {
    const { flags } = await this.parse(BenchHeartbeat);
    const r = await runHeartbeatBench({
      nodes: flags.nodes,
      periodMs: flags.period,
      durationS: flags.duration,
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
