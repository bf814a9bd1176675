// src/commands/bench/: the `pole-bench bench` subcommands, one file each: flags and output of the
// measurements in src/bench/ (node, state, heartbeat, relay, load, cost, docker).
//
// `pole-bench bench node`: src/bench/node-bench.ts.
import { TARGET_NAMES } from '../../vocabulary/names.js';
import { Flags, type Interfaces } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { RunGuard } from '../../run/run-guard.js';
import { durationFlag } from '../../util/duration-flag.js';
import { LAN_TIMERS, runNodeBench, type NodeBenchResult } from '../../bench/node-bench.js';
import { describeDeathCheck } from '../../bench/death-check.js';

/** A bench that has not finished in this long is stopped (its members and files with it). */
const BENCH_DEADLINE_MS = 30 * 60_000;

export default class BenchNode extends CliCommand {
  static override description =
    'Measure the POLE node on this machine: write throughput and latency with many writes in flight, then leader failovers (SIGKILL) and lost writes';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> bench node',
    '<%= config.bin %> bench node --nodes 5 --duration 10s --kills 10 --json',
  ];

  static override flags = {
    target: Flags.option({ options: TARGET_NAMES, default: 'pole' as const })({
      description: 'the system under test: our node, or stock ZooKeeper 3.8 with the same tick',
    }),
    nodes: Flags.integer({ description: 'number of node processes', default: 5, min: 3 }),
    duration: durationFlag({
      description: 'length of the throughput phase (after 1 s of warm-up), e.g. 10s',
      default: '10s',
      minMs: 1000,
    }),
    kills: Flags.integer({ description: 'leader kills in the failover phase', default: 5, min: 0 }),
    size: Flags.integer({ description: 'bytes per write', default: 1024, min: 1 }),
    depth: Flags.integer({ description: 'writes in flight per connection', default: 32, min: 1 }),
    connections: Flags.integer({ description: 'client connections per node', default: 2, min: 1 }),
    fsync: Flags.boolean({
      description: 'fsync the log before acknowledging (off only for tmpfs-like experiments)',
      default: true,
      allowNo: true,
    }),
    'tick-ms': Flags.integer({
      description: 'node tick (LAN timers by default)',
      default: LAN_TIMERS.tickMs,
      min: 1,
    }),
    'snapshot-every': Flags.integer({
      description:
        'POLE only: each node snapshots every this many txns and keeps only the log after its snapshot in memory (the node default: 100,000)',
      min: 1,
    }),
    'election-timeout-ms': Flags.integer({
      description: 'POLE election timeout T',
      default: LAN_TIMERS.electionTimeoutMs,
      min: 1,
    }),
  };

  async run(): Promise<NodeBenchResult> {
    const { flags } = await this.parse(BenchNode);
    // Ctrl-C, SIGTERM or a parent that went away stop the members and remove their files (exit 3).
    const guard = new RunGuard({ deadlineMs: BENCH_DEADLINE_MS }).start();
    let result: NodeBenchResult;
    try {
      result = await this.measure(flags, guard.signal);
    } catch (err) {
      if (guard.reason !== undefined) this.error(`bench node stopped: ${guard.reason}`, { exit: 3 });
      throw err;
    } finally {
      guard.stop();
    }
    if (!this.jsonEnabled()) {
      if (result.failover.kills === 0) this.log('failover: not measured (--kills 0)');
      else {
        this.log(
          `failover over ${result.failover.kills} kills (median/max ms from the kill): detect ${fmt(result.failover.detectMs)}, elected ${fmt(result.failover.electedMs)}, serving ${fmt(result.failover.servingMs)}, first commit ${fmt(result.failover.firstCommitMs)}, first ack ${fmt(result.failover.firstAckMs)}; killed process reaped ${fmt(result.failover.goneMs)}`,
        );
        this.log(describeDeathCheck(result.failover.detectCheck));
      }
      this.log(
        `lost writes: ${result.lostWrites} of ${result.details.acked} acknowledged (${result.details.checkedPaths} paths checked on every live node)`,
      );
    }
    return result;
  }

  private measure(
    flags: Interfaces.InferredFlags<typeof BenchNode.flags>,
    signal: AbortSignal,
  ): Promise<NodeBenchResult> {
    return runNodeBench({
      signal,
      target: flags.target,
      nodes: flags.nodes,
      durationS: flags.duration / 1000,
      kills: flags.kills,
      size: flags.size,
      depth: flags.depth,
      connectionsPerNode: flags.connections,
      fsync: flags.fsync,
      ...(flags['snapshot-every'] !== undefined ? { snapshotEvery: flags['snapshot-every'] } : {}),
      timers: {
        ...LAN_TIMERS,
        tickMs: flags['tick-ms'],
        electionTimeoutMs: flags['election-timeout-ms'],
        retryBaseMs: flags['election-timeout-ms'],
      },
      log: (line) => {
        if (!this.jsonEnabled()) this.log(line);
      },
    });
  }
}

function fmt(s: { median: number; max: number } | null): string {
  return s === null ? '-' : `${s.median}/${s.max}`;
}
