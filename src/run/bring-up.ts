// Bring-up, the run's first phase: the members started with the shaping between them, the first
// leader that serves, the links measured through the shaping, and the state some recovery
// experiments need before the load (`scenario.preload`). What it learns goes into the run's state
// as it goes, so a bring-up that fails half-way still names the leader it saw.
import { currentLeader } from '../chaos/current-leader.js';
import { preload } from '../load/preload.js';
import type { NodeId } from '../vocabulary/names.js';
import type { RunContext } from './run-context.js';

/** How long the members may take to elect their first leader. */
const FIRST_LEADER_MS = 30_000;

/** Resolves with the first serving leader, once the links are measured and the state preloaded. */
export async function bringUp(run: RunContext): Promise<NodeId> {
  const { rt, state, progress } = run;
  progress('starting nodes');
  await rt.start();
  // The leader serving now: a target may have moved leadership once started (etcd hands it to the
  // topology's initialLeader), so not the first that served, unless none serves yet.
  const leader =
    currentLeader(rt) ??
    (await rt.waitFor((e) => e.ev === 'serving' && e.leader === undefined, FIRST_LEADER_MS)).node;
  state.initial = leader;
  run.note('initial-leader', { leader });
  progress('measuring links', { leader });
  state.links = await rt.shaping.measure(20);
  if (run.t.scenario.preloadBytes !== undefined) await preloadState(run, leader, run.t.scenario.preloadBytes);
  return leader;
}

/** Snapshots of about `total` bytes for the recovery experiments: new keys written to the leader. */
async function preloadState(run: RunContext, leader: NodeId, total: number): Promise<void> {
  const { rt, o, progress } = run;
  progress(`preloading ${Math.round(total / 1e6)} MB`, { leader });
  const preloaded = await preload(rt.clientAddress(leader), {
    bytes: total,
    size: run.t.workload.size,
    connect: rt.target.connect,
    clientId: `run${o.seed}-preload`,
    ...(o.signal ? { signal: o.signal } : {}),
    onProgress: (written, all) => progress(`preloading: ${Math.round((100 * written) / all)} %`, { leader }),
  });
  run.state.preloaded = preloaded;
  run.note('preload', { ...preloaded });
}
