// Shared by the schedule test files: runs a range of seeds and reports every failing one with
// the command that replays it. SIM_SCHEDULES=N multiplies the count; SIM_SEED=S runs one seed.
import assert from 'node:assert/strict';
import { describeFailure, runSimulation, type SimOptions } from '../../src/node/sim/simulator.js';

export function scheduleCount(defaultCount: number): number {
  const env = process.env.SIM_SCHEDULES;
  return env ? Math.max(1, Math.ceil(Number(env) / 2)) : defaultCount;
}

export function runSeeds(
  first: number,
  count: number,
  extra: Partial<SimOptions> = {},
): { acked: number; crashes: number; leaders: number } {
  const only = process.env.SIM_SEED;
  const seeds = only ? [Number(only)] : Array.from({ length: count }, (_, i) => first + i);
  const failures: string[] = [];
  const totals = { acked: 0, crashes: 0, leaders: 0 };
  for (const seed of seeds) {
    const r = runSimulation({ seed, ...extra });
    totals.acked += r.stats.acked;
    totals.crashes += r.stats.crashes;
    totals.leaders += r.stats.leaders;
    if (r.violations.length > 0) {
      failures.push(describeFailure(r));
      if (failures.length >= 5) break;
    }
  }
  assert.deepEqual(failures, [], failures.join('\n'));
  return totals;
}
