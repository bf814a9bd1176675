// Drain, once the load's time is up: the samplers stopped, every agent told to stop and its `done`
// awaited (drain-agents.ts: one agent lost fails the run but keeps what the others measured), and
// the self-check's per-write costs divided by every write acknowledged by then.
import { drainAgents } from './drain-agents.js';
import { withTimeout } from '../util/with-timeout.js';
import type { Load } from './load-phase.js';
import type { RunContext } from './run-context.js';

/**
 * How long before the load's end the other hosts' containers are read and their clocks probed
 * again (a burst takes ms, the reading of every node's containers a few hundred on a busy machine).
 */
const CLOCK_PROBE_LEAD_MS = 2_000;
/** How long an agent may take to send `done` once told to stop. */
const DONE_TIMEOUT_MS = 30_000;

export async function drainLoad(run: RunContext, load: Load): Promise<void> {
  const { state } = run;
  const end = state.loadStart + run.t.scenario.durationMs;
  if (run.rt.clockReport) {
    // The other hosts' clocks again, beside the estimates their stamps were moved by: a moment
    // before the load's end, while the agents still answer (each ends with its schedule). A probe
    // that fails takes nothing from the run: its stamps stay moved by the estimates before the load.
    await run.sleepUntil(end - CLOCK_PROBE_LEAD_MS);
    // First the containers read elsewhere, for the self-check, while the agents still run (an
    // ended container reads as nothing; a clock report on a busy machine took over a second).
    await load.cpuSampler.sampleRemoteNow();
    state.clocks = (await run.rt.clockReport().catch(() => null)) ?? null;
  }
  await run.sleepUntil(end);
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
