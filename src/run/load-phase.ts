// The load: one agent per data center, all starting their open-loop schedules together at the
// load's t = 0, recording in "warmup" and then "before" (the faults and the recovery switch the
// later phases); the self-check's samplers over exactly the load; and the progress line's ticker.
// What it starts is kept in the run's state as it starts it, so that a run failing at any point
// still stops the samplers and kills the agents (releaseLoad).
import type { AgentProcess } from '../load/agent-process.js';
import { CpuSampler } from '../measure/cpu-sampler.js';
import { ResourceSampler } from '../measure/resource-sampler.js';
import type { NodeId } from '../vocabulary/names.js';

import type { LoadPhases } from '../chaos/fault-schedule.js';
import { currentLeader } from '../chaos/current-leader.js';
import { RESOURCE_EVERY_MS, type RunContext } from './run-context.js';
import { traceEveryOf } from '../topology/trace-sampling.js';
import { wallNowMs } from '../util/wall-clock.js';

/** The load's paths: `${PATH_PREFIX}/${dc}/${seq}`. */
export const PATH_PREFIX = '/pb';

/** How far ahead of now the agents' common t = 0 is set: time for every `start` to arrive. */
const START_AHEAD_MS = 500;

/** What the load has running, for the faults and the drain. */
export interface Load {
  readonly phases: AgentPhases;
  readonly cpuSampler: CpuSampler;
  readonly resourceSampler: ResourceSampler;
}

/** The phase every agent records in, switched for all at once and noted in the run's events. */
export class AgentPhases implements LoadPhases {
  current = 'warmup';

  constructor(
    private readonly agents: ReadonlyMap<string, AgentProcess>,
    private readonly note: RunContext['note'],
  ) {}

  switchTo(name: string, atMs: number): void {
    this.current = name;
    for (const a of this.agents.values()) a.phase(name, atMs);
    this.note('phase', { phase: name, at: atMs });
  }
}

/**
 * Every data center's agent, spawned together; each one that started is kept in the run's state
 * (in the topology's order) whatever became of the others, so that releaseLoad kills it.
 * run-scenario.ts runs this beside the warm-up: an agent's start (a Node process, a container)
 * costs a second or more and measures nothing, and the warm-up's writes are not measured either.
 */
export async function spawnAgents(run: RunContext): Promise<void> {
  const { rt, t, state } = run;
  const spawned = await Promise.allSettled(
    t.datacenters.map((dc) => rt.spawnAgent(dc.name, (m) => state.intervals.push(m))),
  );
  spawned.forEach((s, i) => {
    if (s.status === 'fulfilled') state.agents.set(t.datacenters[i]!.name, s.value);
  });
  const failed = spawned.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Starts the spawned agents and, at the load's t = 0, the samplers; resolves once the load runs. */
export async function startLoad(run: RunContext, leader: NodeId): Promise<Load> {
  const { rt, t, state } = run;
  state.loadStart = wallNowMs() + START_AHEAD_MS;
  startAgents(run);
  const phases = new AgentPhases(state.agents, run.note);
  phases.switchTo('before', state.loadStart + t.scenario.warmupMs);
  await run.sleepUntil(state.loadStart);
  const { cpuSampler, resourceSampler } = await startSamplers(run);
  run.progress('load', { leader });
  // While the load runs: once a second, the last second's writes/s and errors, and the leader.
  state.ticker = setInterval(() => {
    const last = Math.max(-1, ...state.intervals.map((m) => m.index));
    const lastSecond = state.intervals.filter((m) => m.index === last);
    run.progress('load', {
      rate: lastSecond.reduce((n, m) => n + m.acked, 0),
      errors: state.intervals.reduce((n, m) => n + m.failed, 0),
      leader: currentLeader(rt) ?? 'electing',
    });
  }, 1000);
  return { phases, cpuSampler, resourceSampler };
}

/** Each data center's agent, with its share of the rate, on its own data center's members. */
function startAgents(run: RunContext): void {
  const { rt, t, o, state } = run;
  for (const dc of t.datacenters) {
    const rate = t.workload.ratePerDc.get(dc.name) ?? 0;
    if (rate <= 0) continue;
    state.agents.get(dc.name)?.start({
      dc: dc.name,
      endpoints: dc.nodes.map((n) => ({
        node: n.id,
        ...(rt.agentAddress?.(n.id) ?? rt.clientAddress(n.id)),
      })),
      rate,
      size: t.workload.size,
      arrival: t.workload.arrival,
      seed: o.seed + dc.nodes[0]!.sid,
      durationMs: t.scenario.durationMs,
      requestTimeoutMs: 2_000,
      writeDeadlineMs: 15_000,
      clientIdPrefix: `run${o.seed}`,
      pathPrefix: PATH_PREFIX,
      ...(t.workload.keys !== undefined ? { keys: t.workload.keys } : {}),
      ...(t.workload.reads > 0
        ? {
            reads: t.workload.reads,
            readMode: t.workload.readMode,
            // Each data center reads what the others write (its own where it is alone).
            readFrom:
              t.datacenters.length > 1
                ? t.datacenters.filter((d) => d.name !== dc.name).map((d) => d.name)
                : [dc.name],
          }
        : {}),
      protocol: rt.target.protocol,
      traceEvery: traceEveryOf(t),
      phase: 'warmup',
      startAtMs: state.loadStart,
    });
  }
}

/**
 * The self-check covers the load and nothing else: the harness itself (with the relay thread),
 * the runtime's nodes and agents, and the machine as a whole.
 */
async function startSamplers(
  run: RunContext,
): Promise<{ cpuSampler: CpuSampler; resourceSampler: ResourceSampler }> {
  const { rt, state } = run;
  const cpuSampler = new CpuSampler(
    { harness: () => [{ pid: process.pid, label: 'harness' }], ...rt.cpuGroups() },
    () => rt.shaping.usage(),
    undefined,
    rt.remoteCpu?.(),
  );
  state.cpuSampler = cpuSampler;
  await cpuSampler.start(state.loadStart);
  const resourceSampler = new ResourceSampler(
    { harness: () => [{ pid: process.pid, label: 'harness' }], ...rt.cpuGroups() },
    RESOURCE_EVERY_MS,
  );
  state.resourceSampler = resourceSampler;
  await resourceSampler.start();
  return { cpuSampler, resourceSampler };
}

/**
 * The end of the run, whatever became of it: the ticker stopped, the samplers stopped (a run that
 * failed during the load still says how busy the machine was until then), every agent killed.
 */
export async function releaseLoad(run: RunContext): Promise<void> {
  const { state } = run;
  clearInterval(state.ticker);
  if (state.cpuSampler && !state.cpu.sampled) {
    const acked = state.intervals.reduce((n, m) => n + m.acked, 0);
    state.cpu = await state.cpuSampler.stop(acked).catch(() => state.cpu);
  }
  if (state.resourceSampler && !state.resources.sampled)
    state.resources = await state.resourceSampler.stop().catch(() => state.resources);
  await Promise.allSettled([...state.agents.values()].map((a) => a.kill()));
}
