// Result, the run's last phase: the state the phases collected and the members' events handed to
// report/build-result.ts (pure), with this run's setting and environment; beside the result, the
// agents' intervals for the HdrHistogram log and every event, the harness's own merged in by time.
import * as hdr from 'hdr-histogram-js';
import { buildResult } from '../report/build-result.js';
import { collectEnvironment } from '../report/environment.js';
import type { HlogInterval } from '../report/hlog-writer.js';
import type { RunResult } from '../report/result.js';
import type { RunContext } from './run-context.js';
import { checkRunHistory, runHistory } from './run-history.js';
import type { HistoryEvent } from '../vocabulary/history.js';

export interface RunScenarioOutput {
  readonly result: RunResult;
  readonly intervals: HlogInterval[];
  readonly events: unknown[];
  /** Every operation, where the run had reads (history.jsonl). */
  readonly history?: HistoryEvent[];
}

export function finishRun(run: RunContext): RunScenarioOutput {
  const { o, rt, state: s } = run;
  const nodeEvents = rt.events;
  const book = s.faults;
  const history = o.topology.workload.reads > 0 ? runHistory(s.dones.values()) : undefined;
  const safety = history
    ? checkRunHistory(history, rt.target, s.loadStart ?? 0, o.topology.workload.readMode)
    : undefined;
  const result = buildResult(
    {
      topology: o.topology,
      target: rt.target,
      runtime: rt.name,
      shaping: rt.shaping,
      seed: o.seed,
      thresholds: o.thresholds,
      environment: collectEnvironment(o.version, rt.target.name),
    },
    {
      startedAt: s.startedAt,
      finishedAt: new Date().toISOString(),
      errors: s.errors,
      initial: s.initial,
      killed: book.killed,
      killAt: book.killAt,
      causeScheduledAt: book.causeScheduledAt,
      cause: book.cause,
      links: s.links.rtts,
      linkReadings: s.links.readings,
      dones: s.dones,
      intervals: s.intervals,
      lostList: s.lostList,
      finalRead: s.finalRead,
      lostAgents: s.lostAgents,
      nodeEvents,
      loadStart: s.loadStart,
      faults: book.marks,
      floor: s.floor,
      cpu: s.cpu,
      resources: s.resources,
      depositions: book.depositions,
      preloaded: s.preloaded,
      clocks: s.clocks,
      ...(safety ? { safety } : {}),
    },
  );
  const events = [...nodeEvents, ...s.harnessEvents].sort((a, b) => (a.t as number) - (b.t as number));
  return {
    result,
    intervals: s.intervals.map((m) => ({
      tag: m.dc,
      startMs: m.startMs,
      endMs: m.endMs,
      histogramBase64: m.histogram,
      maxMs: maxOf(m.histogram) / 1000,
    })),
    events,
    ...(history ? { history } : {}),
  };
}

function maxOf(base64: string): number {
  const h = hdr.decodeFromCompressedBase64(base64);
  const max = h.maxValue;
  h.destroy();
  return max;
}
