// src/commands/: the command line (oclif), one file per `pole-bench` command (bench/, image/, topology/:
// the subcommands of those topics): flags, output and exit codes; the work itself is in the folders below.
//
// `pole-bench run TOPOLOGY`: chooses the runtime and shaping, runs the scenario (src/run/) under its
// guard, and writes the outputs (src/report/write-outputs.ts).
import chalk from 'chalk';
import type { Topology } from '../topology/topology.js';
import { Flags, Args, type Interfaces } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { join } from 'node:path';
import type { RunResult } from '../report/result.js';
import { exitCodeFor, suspectBecause } from '../report/result.js';
import { parseThresholds } from '../vocabulary/thresholds.js';
import { writeRunOutputs } from '../report/write-outputs.js';
import { withInjectedViolation } from '../report/build-result.js';
import { AUTO_ORDER, makeRuntime, runtimeKinds, runtimeOptions } from '../runtime/registry.js';
import { loadTopologyForRun, parseReadShare, parseShareFlag } from '../run/run-overrides.js';
import { RunAborted, runScenario, type RunProgress } from '../run/run-scenario.js';
import { RunGuard, bounded, exitWhenDone } from '../run/run-guard.js';
import type { Runtime } from '../runtime/runtime.js';
import type { ShapingChoice } from '../vocabulary/names.js';
import { nodeImageTag } from '../image/image-name.js';
import { chooseRuntime, chooseShaping, probesNetemHere } from '../runtime/choose-runtime.js';
import type { RuntimeChoice } from '../runtime/runtime-kind.js';
import { probeNetem } from '../shaping/netem/netem-probe.js';
import { InputError } from '../util/input-error.js';
import { targetNamed, targetOptions } from '../targets/registry.js';
import { TARGET_NAMES } from '../vocabulary/names.js';
import { RUNTIME_CHOICES } from '../vocabulary/runtimes.js';
import { LINK_FAULTS } from '../topology/topology-schema.js';

export default class Run extends CliCommand {
  static override description =
    'Run a topology: start its cluster, shape its links, drive the open-loop write load, kill the leader, and report recovery and per-data-center latency';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> run topologies/paper-2dc.yaml --duration 60s --kill-at 25s',
    '<%= config.bin %> run topologies/paper-3dc-deployment-1.yaml --oracle worst-case --threshold "recovery.servingMs < 500"',
  ];

  static override args = {
    topology: Args.string({ description: 'topology file (YAML)', required: true }),
  };

  static override flags = {
    target: Flags.option({ options: TARGET_NAMES })({
      description: "the system under test (default: the topology's `target:`, else pole)",
    }),
    runtime: Flags.option({ options: RUNTIME_CHOICES, default: 'auto' })({
      description: `where nodes run (auto: the first of ${AUTO_ORDER.join(', ')} that can run the target here; ${runtimeKinds()
        .map((k) => `${k.name}: ${k.summary}`)
        .join('; ')})`,
    }),
    // Each runtime's own option (the swarm's --place), declared by the runtime (RuntimeKind.option).
    ...(runtimeOptionFlags() as object),
    'dry-run': Flags.boolean({
      description:
        "print the target's member plan as the docker containers and tc commands a run would use, run nothing",
    }),
    shaping: Flags.option({ options: ['auto', 'relay', 'netem', 'none'] as const, default: 'auto' })({
      description: 'how inter-data-center delay is applied',
    }),
    oracle: Flags.string({ description: "oracle spec overriding the topology's, e.g. latency:10ms,history" }),
    'election-wait-for': Flags.option({ options: ['all', 'live'] as const })({
      description:
        "whom the POLE election waits for before its timeout, overriding the topology's cluster.election.waitFor: every member (the paper) or every member not known to be down",
    }),
    // Each target's own option (etcd's --etcd-prefer), declared by the target (Target.option).
    ...(targetOptionFlags() as object),
    rate: Flags.integer({ description: 'writes per second, all data centers together', min: 1 }),
    size: Flags.integer({ description: 'bytes per write', min: 0 }),
    poisson: Flags.boolean({ description: 'Poisson arrivals instead of a constant rate' }),
    'read-mode': Flags.string({
      description: `the target's read path the reads take: default (what its clients get without asking for more), or another the target names (${otherReadModes()})`,
    }),
    reads: Flags.string({
      description:
        "the share of operations that are reads of other data centers' keys, e.g. 0.2: every operation into history.jsonl, checked for linearizability against what the target promises",
    }),
    preload: Flags.string({
      description: 'state written before the load, e.g. 50MB (the POLE node; replaces scenario.preload)',
    }),
    share: Flags.string({
      description:
        "each data center's weight in the load, e.g. tud=1,cern=3 (a data center left out gets none)",
    }),
    duration: Flags.string({ description: 'run length, e.g. 60s' }),
    'kill-at': Flags.string({
      description: 'kill the serving leader at this time, e.g. 25s (replaces the faults)',
    }),
    'nemesis-seed': Flags.integer({
      description: "the seed the topology's scenario.nemesis draws its faults with, instead of the file's",
      min: 0,
    }),
    seed: Flags.integer({ description: 'seed of every random choice (default: from the clock)' }),
    out: Flags.string({ description: 'output directory (default reports/<time>-<name>)' }),
    // Non-greedy: `--threshold A TOPOLOGY` takes one value per flag, and leaves the argument be.
    threshold: Flags.string({
      description: 'e.g. "recovery.servingMs < 500" (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    quiet: Flags.boolean({ description: 'print nothing but errors' }),
  };

  async run(): Promise<RunResult> {
    const { args, flags } = await this.parse(Run);
    const plan = await this.plan(args.topology, flags);
    if (flags['dry-run']) {
      this.log(await dryRun(plan, flags, this.config.version));
      return undefined as unknown as RunResult;
    }
    const quiet = flags.quiet || this.jsonEnabled();
    if (!quiet)
      this.log(
        `target ${plan.topology.target}, runtime ${plan.choice.runtime} (${plan.choice.reason}), shaping ${plan.shaping.kind} (${plan.shaping.reason})`,
      );
    // Named by when the run started.
    const out =
      flags.out ?? join('reports', `${new Date().toISOString().replace(/[:.]/g, '-')}-${plan.topology.name}`);
    const ran = await this.execute(plan, flags, quiet);
    return this.write(out, ran, quiet);
  }

  /** The topology with the flags' overrides, the thresholds, the runtime and the shaping; bad input exits 2. */
  private async plan(file: string, flags: RunFlags): Promise<RunPlan> {
    try {
      const topology = loadTopologyForRun(file, topologyOverrides(flags));
      const thresholds = parseThresholds(flags.threshold ?? []);
      const targetOption = targetOptionOf(topology, flags);
      const runtimeOption = runtimeOptionOf(flags);
      const choice: RuntimeChoice = flags['dry-run']
        ? { runtime: 'docker', reason: 'dry run', image: nodeImageTag(this.config.version) }
        : await chooseRuntime(flags.runtime, {
            version: this.config.version,
            target: targetNamed(topology.target),
            datacenters: topology.datacenters.map((d) => d.name),
            ...(runtimeOption !== undefined ? { option: runtimeOption } : {}),
          });
      // A dry run shows the netem plan even on a kernel without netem: nothing is applied.
      const netem =
        flags['dry-run'] && flags.shaping === 'netem'
          ? { available: true, reason: 'dry run: planned, not applied' }
          : probesNetemHere(choice.runtime, flags.shaping)
            ? await probeNetem()
            : { available: false, reason: 'not probed' };
      const shaping = chooseShaping(flags.shaping, choice.runtime, topology.datacenters.length, netem);
      checkLinkFaults(topology, shaping);
      checkReadMode(topology);
      return {
        topology,
        thresholds,
        choice,
        shaping,
        seed: flags.seed ?? Date.now() % 1_000_000_000,
        ...(targetOption !== undefined ? { targetOption } : {}),
        ...(runtimeOption !== undefined ? { runtimeOption } : {}),
      };
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
  }

  /** The scenario on the chosen runtime, bounded as a whole; the runtime torn down whatever happens. */
  private async execute(plan: RunPlan, flags: RunFlags, quiet: boolean): Promise<ScenarioOutcome> {
    const { topology, shaping, seed, choice } = plan;
    const runtime: Runtime = await makeRuntime(choice.runtime, topology, {
      shaping,
      seed,
      target: targetNamed(topology.target),
      ...(choice.image !== undefined ? { image: choice.image } : {}),
      ...(choice.images ? { images: choice.images } : {}),
      ...(plan.targetOption !== undefined ? { targetOption: plan.targetOption } : {}),
      ...(plan.runtimeOption !== undefined ? { runtimeOption: plan.runtimeOption } : {}),
    });
    // The whole run is bounded: its scenario, the start-up and checks around it, and some slack.
    const guard = new RunGuard({
      deadlineMs:
        topology.scenario.durationMs +
        RUN_DEADLINE_SLACK_MS +
        (topology.scenario.preloadBytes ?? 0) / PRELOAD_BYTES_PER_MS,
    }).start();
    try {
      const ran = await guard.settle(
        runScenario({
          topology,
          runtime,
          seed,
          thresholds: plan.thresholds,
          version: this.config.version,
          onProgress: progressPrinter(quiet),
          signal: guard.signal,
        }),
      );
      await this.teardown(runtime);
      return ran;
    } catch (err) {
      await this.teardown(runtime);
      exitWhenDone();
      if (err instanceof RunAborted)
        this.error(`${err.message}: every process, relay and temp dir was removed`, { exit: 3 });
      this.error(`run failed: ${(err as Error).message}`, { exit: 3 });
    } finally {
      guard.stop();
    }
  }

  /** result.json, report.md and the rest, the verdict line, and the exit code it sets. */
  private async write(out: string, ran: ScenarioOutcome, quiet: boolean): Promise<RunResult> {
    try {
      const injected = process.env[INJECT_VIOLATION_ENV];
      const result = injected ? withInjectedViolation(ran.result, injected) : ran.result;
      const files = await writeRunOutputs(out, {
        result,
        intervals: ran.intervals,
        events: ran.events,
        ...(ran.history ? { history: ran.history } : {}),
      });
      if (!quiet) this.log(`\n${verdictLine(result)}\nreport: ${files.report}`);
      process.exitCode = exitCodeFor(result.verdict);
      return result;
    } catch (err) {
      this.error(`run failed: ${(err as Error).message}`, { exit: 3 });
    } finally {
      exitWhenDone();
    }
  }

  /** Tear-down is bounded too: what it could not remove in time is said, and `pole-bench clean` reaps it. */
  private async teardown(runtime: Runtime): Promise<void> {
    await bounded(runtime.teardown(), TEARDOWN_LIMIT_MS, 'tear-down').catch((err: Error) =>
      this.warn(`${err.message}; run pole-bench clean to remove what is left`),
    );
  }
}

type RunFlags = Interfaces.InferredFlags<typeof Run.flags>;

/** What a run was planned as, before anything starts. */
interface RunPlan {
  readonly topology: Topology;
  readonly thresholds: ReturnType<typeof parseThresholds>;
  readonly choice: RuntimeChoice;
  readonly shaping: ShapingChoice;
  readonly seed: number;
  /** The value of the target's own option (Target.option), if given. */
  readonly targetOption?: string;
  /** The value of the runtime's own option (RuntimeKind.option), if given. */
  readonly runtimeOption?: string;
}

type ScenarioOutcome = Awaited<ReturnType<typeof runScenario>>;

/** The flags that change the topology as loaded. */
function topologyOverrides(flags: RunFlags): Parameters<typeof loadTopologyForRun>[1] {
  return {
    ...(flags.target !== undefined ? { target: flags.target } : {}),
    ...(flags.oracle !== undefined ? { oracle: flags.oracle } : {}),
    ...(flags['election-wait-for'] !== undefined ? { electionWaitFor: flags['election-wait-for'] } : {}),
    ...(flags.rate !== undefined ? { rate: flags.rate } : {}),
    ...(flags.reads !== undefined ? { reads: parseReadShare(flags.reads) } : {}),
    ...(flags['read-mode'] !== undefined ? { readMode: flags['read-mode'] } : {}),
    ...(flags.size !== undefined ? { size: flags.size } : {}),
    ...(flags.poisson ? { arrival: 'poisson' as const } : {}),
    ...(flags.share !== undefined ? { share: parseShareFlag(flags.share) } : {}),
    ...(flags.preload !== undefined ? { preload: flags.preload } : {}),
    ...(flags.duration !== undefined ? { duration: flags.duration } : {}),
    ...(flags['kill-at'] !== undefined ? { killAt: flags['kill-at'] } : {}),
    ...(flags['nemesis-seed'] !== undefined ? { nemesisSeed: flags['nemesis-seed'] } : {}),
  };
}

/** netem cuts and heals (filters to a dropping class) but cannot change a delay during a run. */
function checkLinkFaults(topology: Topology, shaping: ShapingChoice): void {
  const canDo = (action: string): boolean =>
    shaping.kind === 'relay' || (shaping.kind === 'netem' && action !== 'link');
  const linkFault = topology.scenario.faults.find(
    (f) => (LINK_FAULTS as readonly string[]).includes(f.action) && !canDo(f.action),
  );
  if (linkFault)
    throw new InputError({
      file: '--shaping',
      problem:
        shaping.kind === 'netem'
          ? `the scenario's ${linkFault.action} fault needs the relay shaping (netem shaping cuts and heals links, but cannot change a delay during a run); use --shaping relay`
          : `the scenario's ${linkFault.action} fault needs the relay or netem shaping (the ${shaping.kind} shaping cannot cut or change links during a run); use --shaping relay`,
    });
}

/** --dry-run: the member plan as the docker runtime would run it. */
async function dryRun(plan: RunPlan, flags: RunFlags, version: string): Promise<string> {
  const { dockerDryRun } = await import('../runtime/docker/docker-dry-run.js');
  return dockerDryRun(plan.topology, {
    seed: plan.seed,
    image: plan.choice.image as string,
    shaping: plan.shaping,
    version,
    ...(flags.oracle !== undefined ? { oracle: flags.oracle } : {}),
    ...(plan.targetOption !== undefined ? { targetOption: plan.targetOption } : {}),
  });
}

/** Set, a run adds a violation of that text to its self-check: tests drive the suspect verdict so. */
const INJECT_VIOLATION_ENV = 'POLE_BENCH_INJECT_VIOLATION';

/** Beyond the scenario's duration: starting members and agents, the warm-up, the checks, the floor. */
const RUN_DEADLINE_SLACK_MS = 5 * 60_000;
const TEARDOWN_LIMIT_MS = 60_000;
/** A preload may write as slowly as 1 MB/s and still finish within the run's limit. */
const PRELOAD_BYTES_PER_MS = 1_000;

/**
 * The verdict in colour for a person at a terminal; chalk leaves it plain where stdout is a pipe or
 * a file (and `--json` never prints this line).
 */
function colourOf(verdict: RunResult['verdict']): (text: string) => string {
  if (verdict === 'passed') return chalk.green;
  if (verdict === 'suspect') return chalk.yellow;
  return chalk.red;
}

function verdictLine(r: RunResult): string {
  const rec = r.recovery;
  const why = r.verdict === 'suspect' ? ` (${suspectBecause(r).join('; ')})` : '';
  const unverified = r.writes.unverified ?? 0;
  const parts = [
    `verdict: ${colourOf(r.verdict)(r.verdict)}${why}`,
    `leaders ${r.leaders.initial ?? '?'} → ${r.leaders.elected ?? '?'}`,
    `serving after ${rec.servingMs?.toFixed(1) ?? '?'} ms`,
    `writes ${r.writes.acked} acked, ${r.writes.failed} failed, ${r.writes.lost} lost, ${unverified} unverified`,
  ];
  return [...parts, ...r.errors.map((e) => `error: ${e}`)].join('\n');
}

/** One rewritten line on a terminal, plain lines otherwise (only when the phase changes). */
function progressPrinter(silent: boolean): (p: RunProgress) => void {
  let last = '';
  return (p) => {
    if (silent) return;
    const rate = p.rate !== undefined ? `, ${p.rate} writes/s` : '';
    const errors = p.errors !== undefined ? `, ${p.errors} errors` : '';
    const line = `[${p.elapsedS.toFixed(0).padStart(4)} s] ${p.phase}${rate}${errors}${p.leader ? `, leader ${p.leader}` : ''}`;
    // A terminal gets one line rewritten in place; a log gets a line when the phase or leader changes.
    const key = `${p.phase}/${p.leader ?? ''}`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(80)}`);
    else if (key !== last) process.stderr.write(`${line}\n`);
    last = key;
  };
}

/** Each target's own run option as a flag of `run` (Target.option). */
function runtimeOptionFlags(): Record<string, Interfaces.OptionFlag<string | undefined>> {
  return Object.fromEntries(
    runtimeOptions().map(({ option }) => [option.flag, Flags.string({ description: option.description })]),
  );
}

/** The value of the chosen runtime's own option; one given for another runtime is bad input (exit 2). */
function runtimeOptionOf(flags: RunFlags): string | undefined {
  const given = flags as unknown as Record<string, unknown>;
  let value: string | undefined;
  for (const { runtime, option } of runtimeOptions()) {
    const v = given[option.flag];
    if (typeof v !== 'string') continue;
    if (flags.runtime !== runtime)
      throw new InputError({
        file: `--${option.flag}`,
        problem: `is the ${runtime} runtime's own option and needs --runtime ${runtime}, not ${flags.runtime}`,
      });
    value = v;
  }
  return value;
}

function targetOptionFlags(): Record<string, Interfaces.OptionFlag<string | undefined>> {
  return Object.fromEntries(
    targetOptions().map(({ option }) => [option.flag, Flags.string({ description: option.description })]),
  );
}

/**
 * The value of the run's target's own option; a target's option given for another target, or a
 * value its target refuses, is bad input (exit 2).
 */
function targetOptionOf(topology: Topology, flags: RunFlags): string | undefined {
  const given = flags as unknown as Record<string, unknown>;
  let value: string | undefined;
  for (const { target, option } of targetOptions()) {
    const v = given[option.flag];
    if (typeof v !== 'string') continue;
    const file = `--${option.flag}`;
    if (target !== topology.target)
      throw new InputError({
        file,
        problem: `is the ${target} target's own option (${option.handOver}) and needs --target ${target}, not ${topology.target}`,
      });
    const problem = option.check(topology, v);
    if (problem !== undefined) throw new InputError({ file, problem });
    value = v;
  }
  return value;
}

/** The topology's read mode must be one its target has (Target.readModes); else exit 2 naming them. */
function checkReadMode(t: Topology): void {
  const modes = targetNamed(t.target).readModes;
  if (Object.hasOwn(modes, t.workload.readMode)) return;
  throw new InputError({
    file: '--read-mode',
    problem: `the ${t.target} target reads by ${Object.keys(modes).join(' or ')}, not ${t.workload.readMode}`,
  });
}

/** Each target's read paths beyond its default, for --read-mode's help. */
function otherReadModes(): string {
  return TARGET_NAMES.flatMap((name) =>
    Object.entries(targetNamed(name).readModes)
      .filter(([mode]) => mode !== 'default')
      .map(([mode, m]) => `${name}: ${mode}, ${m.describe}`),
  ).join('; ');
}
