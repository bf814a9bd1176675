import { Flags, Args } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS, runElection, type ElectionResult } from '../election/election-run.js';
import { electionVerdict, renderElectionReport } from '../election/election-report.js';
import { openBackend, backendSettings, type BackendFlags } from '../election/open-backend.js';
import { RunGuard, bounded, exitWhenDone } from '../run/run-guard.js';
import { parseDuration } from '../util/duration.js';
import { loadTopology } from '../topology/topology.js';
import { InputError } from '../util/input-error.js';
import { endpointOf } from '../election/db/db-backend.js';

export default class Election extends CliCommand {
  static override description =
    "Leader election through a SQL database (the NewSQL paper's algorithm on PostgreSQL) or ZooKeeper's leader recipe: N processes in the topology's data centers, the leader killed K times, failover and leader overlaps per group size";

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> election topologies/lan-5.yaml --backend db --processes 10,50,100,200 --kills 3',
    '<%= config.bin %> election topologies/paper-2dc.yaml --backend zookeeper --processes 50 --database-dc cern',
  ];

  static override args = {
    topology: Args.string({
      description: 'topology file (YAML): its data centers and links',
      required: true,
    }),
  };

  static override flags = {
    backend: Flags.option({ options: BACKENDS, default: 'db' })({
      description: 'what elects: db (rounds on PostgreSQL) or zookeeper (the leader recipe)',
    }),
    processes: Flags.string({
      description: 'group sizes, run one after another, e.g. 10,50,100,200',
      default: '10',
    }),
    kills: Flags.integer({ description: 'leader kills per group', default: 3, min: 1 }),
    round: Flags.string({ description: 'db: the initial round time Tp', default: '2s' }),
    'max-missed': Flags.integer({
      description: 'db: Max_mhb, missed rounds before a process is dead',
      default: 2,
      min: 1,
    }),
    delta: Flags.string({
      description: 'db: Δ, what the leader adds to Tp when an evicted process rejoins',
      default: '50ms',
    }),
    mu: Flags.string({ description: 'db: μ, the lease is Tp × Max_mhb − μ', default: '100ms' }),
    'session-timeout': Flags.string({
      description: "zookeeper: the recipe's session timeout",
      default: '4s',
    }),
    tick: Flags.string({ description: "zookeeper: the ensemble's tickTime", default: '2s' }),
    database: Flags.string({
      description:
        'db: an existing PostgreSQL (postgres://user@host:port/db); the harness creates and drops only its own schema',
    }),
    'database-dc': Flags.string({ description: "the store's data center (default: the topology's first)" }),
    seed: Flags.integer({ description: 'seed of the kills’ timing (default: from the clock)' }),
    out: Flags.string({ description: 'output directory (default reports/<time>-election-<backend>)' }),
    quiet: Flags.boolean({ description: 'print nothing but errors' }),
  };

  async run(): Promise<ElectionResult> {
    const { args, flags } = await this.parse(Election);
    const json = this.jsonEnabled();
    const say = (line: string): void => {
      if (!flags.quiet && !json) this.log(line);
    };
    let topology;
    let sizes: number[];
    let bf: BackendFlags;
    let storeDc: string;
    try {
      topology = loadTopology(args.topology);
      sizes = flags.processes.split(',').map((s) => {
        const n = Number(s.trim());
        if (!Number.isInteger(n) || n < 2)
          throw new InputError({
            file: '--processes',
            problem: `expected whole numbers of at least 2, got ${JSON.stringify(s)}`,
          });
        return n;
      });
      const dur = (flag: string, text: string): number => {
        try {
          return parseDuration(text);
        } catch (err) {
          throw new InputError({ file: `--${flag}`, problem: (err as Error).message });
        }
      };
      bf = {
        backend: flags.backend,
        timers: {
          roundMs: dur('round', flags.round),
          maxMissed: flags['max-missed'],
          deltaMs: dur('delta', flags.delta),
          muMs: dur('mu', flags.mu),
        },
        sessionTimeoutMs: dur('session-timeout', flags['session-timeout']),
        tickMs: dur('tick', flags.tick),
        ...(flags.database !== undefined ? { databaseUrl: flags.database } : {}),
      };
      if (bf.timers.muMs >= bf.timers.roundMs * bf.timers.maxMissed)
        throw new InputError({
          file: '--mu',
          problem: 'must be shorter than Tp × Max_mhb (the lease would be empty)',
        });
      if (flags.database !== undefined && flags.backend !== 'db')
        throw new InputError({ file: '--database', problem: 'goes with --backend db' });
      if (flags.database !== undefined)
        try {
          endpointOf(flags.database);
        } catch (err) {
          throw new InputError({
            file: '--database',
            problem: (err as Error).message.replace(/^--database: /, ''),
          });
        }
      storeDc = flags['database-dc'] ?? topology.datacenters[0]!.name;
      if (!topology.datacenters.some((d) => d.name === storeDc))
        throw new InputError({
          file: '--database-dc',
          problem: `${JSON.stringify(storeDc)} is not a data center of ${args.topology} (${topology.datacenters.map((d) => d.name).join(', ')})`,
        });
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
    const seed = flags.seed ?? Date.now() % 1_000_000_000;
    const runId = `e${Date.now().toString(36)}${process.pid}`;
    const out =
      flags.out ??
      join('reports', `${new Date().toISOString().replace(/[:.]/g, '-')}-election-${bf.backend}`);
    // A failover takes about Tp × (Max_mhb + 1) (db) or the session timeout and a tick (recipe);
    // four times that, and at least 30 s, before the run gives up on one.
    const expected =
      bf.backend === 'db' ? bf.timers.roundMs * (bf.timers.maxMissed + 1) : bf.sessionTimeoutMs + bf.tickMs;
    const failoverBoundMs = Math.max(30_000, 4 * expected);
    const roundMs = bf.backend === 'db' ? bf.timers.roundMs : bf.tickMs;
    const deadlineMs =
      5 * 60_000 +
      sizes.reduce(
        (s, n) => s + failoverBoundMs + n * 200 + flags.kills * (3 * roundMs + 2 * failoverBoundMs),
        0,
      );
    const guard = new RunGuard({ deadlineMs }).start();
    let backend;
    try {
      say(`opening the ${bf.backend} backend in ${storeDc}`);
      backend = await guard.settle(openBackend(bf, { runId, topology, maxProcesses: Math.max(...sizes) }));
      const { result, events } = await guard.settle(
        runElection({
          topology,
          backend,
          sizes,
          kills: flags.kills,
          storeDc,
          failoverBoundMs,
          roundMs,
          seed,
          signal: guard.signal,
          onProgress: say,
        }),
      );
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'election.json'), `${JSON.stringify(result, null, 2)}\n`);
      await writeFile(join(out, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      await writeFile(join(out, 'report.md'), renderElectionReport(result, backendSettings(bf, seed)));
      const verdict = electionVerdict(result);
      for (const g of result.sizes)
        say(
          `${g.processes} processes: failover median ${g.failoverMs?.median.toFixed(0) ?? '?'} ms (max ${g.failoverMs?.max.toFixed(0) ?? '?'}), Tp ${g.roundMs ? `${g.roundMs.start} → ${g.roundMs.end} ms` : '-'}, ${g.leaderOverlaps} overlaps`,
        );
      say(
        `verdict: ${verdict}${result.errors.map((e) => `\nerror: ${e}`).join('')}\nreport: ${join(out, 'report.md')}`,
      );
      // 0: a new leader after every kill and never two; 1: two believed they led at once; 3: the run failed.
      process.exitCode = verdict === 'passed' ? 0 : verdict === 'overlap' ? 1 : 3;
      return result;
    } catch (err) {
      return this.error(`election failed: ${(err as Error).message}`, { exit: 3 });
    } finally {
      if (backend)
        await bounded(backend.close(), 30_000, 'closing the backend').catch((e: Error) =>
          this.warn(e.message),
        );
      guard.stop();
      exitWhenDone();
    }
  }
}
