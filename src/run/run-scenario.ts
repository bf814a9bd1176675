// One benchmark run, start to finish, as the sequence of its phases; each is a module of its own,
// handed the run's context (run-context.ts) and filling in the state the result is built from:
//   bring-up      bring-up.ts        the members started, the first leader, the links measured, the preload
//   warm-up       warm-up.ts         unmeasured writes to the leader; the agents' paths prepared;
//                 load-phase.ts      meanwhile one agent per data center spawned
//   load          load-phase.ts      the agents started from a common t = 0; the samplers
//   faults        chaos/             the fault schedule, and the cause the recovery is timed from
//   drain         drain-phase.ts     the load's end: every agent's `done`
//   check         check-phase.ts     every acknowledged write read back on every live member
//   calibration   calibration.ts     the node floor, for a target whose members trace no writes
//   result        result-phase.ts    report/build-result.ts over what the phases collected
// A phase that fails ends the run there: its error goes into the result beside what the earlier
// phases measured (an abort, Ctrl-C, is thrown instead), and the load is released either way.
// Client (agents), nemesis (faults) and checker stay separate; this file only sequences them.
import { runFaults, type ChaosContext } from '../chaos/fault-schedule.js';
import { RunAborted } from './abortable.js';
import { bringUp } from './bring-up.js';
import { calibrate } from './calibration.js';
import { checkWrites } from './check-phase.js';
import { drainLoad } from './drain-phase.js';
import { releaseLoad, spawnAgents, startLoad, type Load } from './load-phase.js';
import { finishRun, type RunScenarioOutput } from './result-phase.js';
import { openRun, type RunContext, type RunScenarioOptions } from './run-context.js';
import { warmUpCluster } from './warm-up.js';

export type { RunProgress, RunScenarioOptions } from './run-context.js';
export type { RunScenarioOutput } from './result-phase.js';
export { RunAborted };

export async function runScenario(o: RunScenarioOptions): Promise<RunScenarioOutput> {
  const run = openRun(o);
  // Named in an error: "connection closed" alone does not say whether the load, the check of the
  // acknowledged writes or the calibration after it lost its connection.
  let step = 'bring-up';
  let agentsSpawned: Promise<void> = Promise.resolve();
  try {
    const initial = await bringUp(run);
    step = 'warm-up';
    run.progress('warming up, starting load agents', { leader: initial });
    agentsSpawned = spawnAgents(run);
    // Awaited after the warm-up (and in `finally`); this only keeps a failure from going unhandled
    // while the warm-up runs.
    agentsSpawned.catch(() => undefined);
    await warmUpCluster(run, initial);
    step = "the load agents' start";
    await agentsSpawned;
    step = 'the load';
    const load = await startLoad(run, initial);
    await runFaults(chaosContext(run, load), run.state.faults);
    step = "the load's end";
    await drainLoad(run, load);
    step = 'the check of the acknowledged writes';
    const leader = await checkWrites(run);
    step = 'the calibration after the load';
    await calibrate(run, leader);
  } catch (err) {
    if (err instanceof RunAborted) throw err;
    run.state.errors.push(`${step}: ${(err as Error).message}`);
  } finally {
    // An agent still starting when a phase failed is killed with the others, not left behind.
    await agentsSpawned.catch(() => undefined);
    await releaseLoad(run);
  }
  reportTroubles(run);
  return finishRun(run);
}

/**
 * What the runtime lost beneath the members (a swarm host gone), first among the run's errors
 * however far the run got: it says why the agents, members and faults on it failed too.
 */
function reportTroubles(run: RunContext): void {
  const troubles = run.rt.troubles?.() ?? [];
  run.state.errors.unshift(...troubles.map((t) => t.message));
  for (const t of troubles) run.note('runtime-trouble', { t: t.at, reason: t.message });
}

/** What the faults act on and through: the runtime, the load's phases, the run's clock and notes. */
function chaosContext(run: RunContext, load: Load): ChaosContext {
  return {
    rt: run.rt,
    topology: run.t,
    seed: run.o.seed,
    loadStart: run.state.loadStart,
    phases: load.phases,
    sleepUntil: run.sleepUntil,
    note: run.note,
    progress: run.progress,
  };
}
