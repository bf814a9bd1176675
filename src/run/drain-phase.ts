// Drain, once the load's time is up: the samplers stopped, every agent told to stop and its `done`
// awaited (drain-agents.ts: one agent lost fails the run but keeps what the others measured), and
// the self-check's per-write costs divided by every write acknowledged by then.
import { drainAgents } from './drain-agents.js';
import { withTimeout } from './abortable.js';
import type { Load } from './load-phase.js';
import type { RunContext } from './run-context.js';

/** How long an agent may take to send `done` once told to stop. */
const DONE_TIMEOUT_MS = 30_000;

export async function drainLoad(run: RunContext, load: Load): Promise<void> {
  const { state } = run;
  await run.sleepUntil(state.loadStart + run.t.scenario.durationMs);
  await load.cpuSampler.stop();
  state.resources = await load.resourceSampler.stop();
  clearInterval(state.ticker);
  run.progress('draining');
  for (const a of state.agents.values()) a.stop();
  const drained = await drainAgents(state.agents, (done) =>
    withTimeout(done, DONE_TIMEOUT_MS, 'the load agent'),
  );
  for (const [dc, d] of drained.dones) state.dones.set(dc, d);
  for (const [dc, why] of drained.lost) {
    state.lostAgents.set(dc, why);
    state.errors.push(`data center ${dc}: ${why}`);
    run.note('agent-lost', { dc, reason: why });
  }
  // Per write: every write sent during the load, acknowledged by now (some after the window).
  state.cpu = load.cpuSampler.report([...state.dones.values()].reduce((n, d) => n + d.totals.acked, 0));
}
