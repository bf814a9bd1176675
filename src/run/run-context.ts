// What every phase of a run is handed (run/run-scenario.ts): the run's options, a note in the
// harness's own events, the progress line, a sleep that Ctrl-C cuts short, and the state the run
// collects. The state is one object the phases fill in as they go, so that a phase that fails
// leaves what the earlier ones measured for the result (report/build-result.ts) to say.
import type { FinalRead } from '../vocabulary/names.js';
import type { AgentProcess } from '../load/agent-process.js';
import type { DoneMessage, IntervalMessage } from '../load/agent-protocol.js';
import type { ClockReport } from '../measure/clock-offset.js';
import { cpuReport, type CpuReport, type CpuSampler } from '../measure/cpu-sampler.js';
import { unmeasuredFloor, type NodeFloor } from '../measure/node-floor.js';
import {
  emptyResourceReport,
  type ResourceReport,
  type ResourceSampler,
} from '../measure/resource-sampler.js';
import type { NodeId } from '../vocabulary/names.js';
import type { PreloadInfo } from '../report/result.js';
import type { Threshold } from '../vocabulary/thresholds.js';

import type { Runtime } from '../runtime/runtime.js';
import type { LinkReadings } from '../shaping/shaper.js';
import type { Topology } from '../topology/topology.js';
import { FaultBook } from '../chaos/fault-book.js';
import { abortable } from './abortable.js';
import { wallNowMs } from '../util/wall-clock.js';

export interface RunProgress {
  readonly phase: string;
  readonly elapsedS: number;
  readonly rate?: number;
  readonly errors?: number;
  readonly leader?: string;
}

export interface RunScenarioOptions {
  readonly topology: Topology;
  readonly runtime: Runtime;
  readonly seed: number;
  readonly thresholds: readonly Threshold[];
  readonly version: string;
  readonly onProgress?: (p: RunProgress) => void;
  /** Aborting (Ctrl-C) stops the run; the caller still tears the runtime down. */
  readonly signal?: AbortSignal;
}

/** How often the resource sampler reads every process's memory, files and threads. */
export const RESOURCE_EVERY_MS = 5_000;

/** What a run collects, phase by phase; the result is built from it. */
export interface RunState {
  readonly startedAt: string;
  /** What went wrong; any entry fails the run. */
  readonly errors: string[];
  /** The harness's own events (the initial leader, phases, faults, lost agents), for events.jsonl. */
  readonly harnessEvents: Array<Record<string, unknown>>;
  /** Bring-up: the leader serving first, the measured links, the state written before the load. */
  initial: NodeId | null;
  links: LinkReadings;
  preloaded: PreloadInfo | null;
  /** Load: wall ms of its t = 0 (0 until the load is scheduled), and the agents' interval reports. */
  loadStart: number;
  readonly intervals: IntervalMessage[];
  /** What the load has running: stopped by the drain, or released by the run's end on a failure. */
  readonly agents: Map<string, AgentProcess>;
  cpuSampler: CpuSampler | undefined;
  resourceSampler: ResourceSampler | undefined;
  ticker: NodeJS.Timeout | undefined;
  /** Faults: what they did, and the cause the recovery is timed from (chaos/fault-book.ts). */
  readonly faults: FaultBook;
  /** Drain: the other hosts' clocks, before and after the load (null: every stamp is this host's). */
  clocks: ClockReport | null;
  /** Drain: by data center, each agent's `done`, or why its data was lost. */
  readonly dones: Map<string, DoneMessage>;
  readonly lostAgents: Map<string, string>;
  cpu: CpuReport;
  resources: ResourceReport;
  /** Check: "key@node" of every key the final read found short of its acknowledged writes. */
  lostList: string[];
  /** Check: where the final read looked (null: it did not run). */
  finalRead: FinalRead | null;
  /** Calibration (or the note why there was none). */
  floor: NodeFloor;
}

export interface RunContext {
  readonly o: RunScenarioOptions;
  readonly t: Topology;
  readonly rt: Runtime;
  readonly state: RunState;
  /** Adds an event of the harness's own (node "harness") to the run's events. */
  readonly note: (ev: string, fields?: Record<string, unknown>) => void;
  readonly progress: (phase: string, extra?: Omit<RunProgress, 'phase' | 'elapsedS'>) => void;
  /** Resolves at wall ms `wall`; rejects with RunAborted once the run's signal aborts. */
  readonly sleepUntil: (wall: number) => Promise<void>;
}

/** A run about to begin: nothing measured yet. */
export function openRun(o: RunScenarioOptions): RunContext {
  const state: RunState = {
    startedAt: new Date().toISOString(),
    errors: [],
    harnessEvents: [],
    initial: null,
    links: { rtts: new Map(), readings: null },
    preloaded: null,
    loadStart: 0,
    intervals: [],
    agents: new Map(),
    cpuSampler: undefined,
    resourceSampler: undefined,
    ticker: undefined,
    faults: new FaultBook(),
    clocks: null,
    dones: new Map(),
    lostAgents: new Map(),
    cpu: cpuReport([], 0),
    resources: emptyResourceReport(RESOURCE_EVERY_MS),
    lostList: [],
    finalRead: null,
    floor: unmeasuredFloor('the run ended before the calibration'),
  };
  return {
    o,
    t: o.topology,
    rt: o.runtime,
    state,
    note: (ev, fields = {}) => {
      state.harnessEvents.push({ t: wallNowMs(), node: 'harness', ev, ...fields });
    },
    progress: (phase, extra = {}) =>
      o.onProgress?.({
        phase,
        elapsedS: state.loadStart ? (wallNowMs() - state.loadStart) / 1000 : 0,
        ...extra,
      }),
    sleepUntil: (wall) => abortable(Math.max(0, wall - wallNowMs()), o.signal),
  };
}
