// An agent on another host speaks its own clocks: its instants are its host's wall clock, its
// traces its host's CLOCK_MONOTONIC. Everything above AgentProcess works on the harness's wall
// clock, so the stamps are moved at the boundary, both ways: an instant the harness asks for
// (the schedule's start, a phase switch) is moved onto the agent's clock on the way out; every
// instant and trace stamp that comes back is moved onto the harness's wall clock. Offsets are
// measure/clock-offset.ts's (remote − harness); an agent on the harness's own host needs none.
import type { ClockOffsets } from '../vocabulary/clock-offsets.js';
import type { DoneMessage, IntervalMessage, LoadSpec, StartedMessage } from './agent-protocol.js';

/** A harness instant as the agent's wall clock reads it. */
export function toAgentWall(harnessMs: number, o: ClockOffsets): number {
  return harnessMs + o.wallMs;
}

export function specOnAgentClock(spec: LoadSpec, o: ClockOffsets): LoadSpec {
  return spec.startAtMs === undefined ? spec : { ...spec, startAtMs: toAgentWall(spec.startAtMs, o) };
}

export function startedOnHarnessClock(m: StartedMessage, o: ClockOffsets): StartedMessage {
  return { ...m, startMs: m.startMs - o.wallMs };
}

export function intervalOnHarnessClock(m: IntervalMessage, o: ClockOffsets): IntervalMessage {
  return { ...m, startMs: m.startMs - o.wallMs, endMs: m.endMs - o.wallMs };
}

export function doneOnHarnessClock(m: DoneMessage, o: ClockOffsets): DoneMessage {
  const wall = (ms: number): number => ms - o.wallMs;
  const mono = (ms: number): number => ms - o.monoMs;
  const each = (r: Readonly<Record<string, number>>): Record<string, number> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, wall(v)]));
  return {
    ...m,
    startMs: wall(m.startMs),
    sendEndMs: wall(m.sendEndMs),
    firstAckAfter: each(m.firstAckAfter),
    firstAckByEpoch: each(m.firstAckByEpoch),
    longestAckGap: Object.fromEntries(
      Object.entries(m.longestAckGap).map(([k, g]) => [
        k,
        { ...g, fromMs: wall(g.fromMs), toMs: wall(g.toMs) },
      ]),
    ),
    traces: m.traces.map(([id, phase, intended, sent, received]) => [
      id,
      phase,
      mono(intended),
      mono(sent),
      mono(received),
    ]),
  };
}
