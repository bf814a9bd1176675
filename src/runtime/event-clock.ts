// A member's event from another host, moved onto the harness's clocks: its stamp `t` is its host's
// wall clock, a trace's steps and ACK stamps its host's CLOCK_MONOTONIC. With the host's offsets
// (measure/clock-offset.ts: remote − harness wall clock), both land on the harness's wall clock,
// as the agents' stamps do (load/agent-clock.ts), so a span between two hosts' stamps is a
// difference on one clock. Only the swarm runtime needs it: every other runtime's members share
// the harness's kernel, hence its clocks.
import type { ClockOffsets } from '../vocabulary/clock-offsets.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';

export function eventOnHarnessClock(e: ClusterEvent, o: ClockOffsets): ClusterEvent {
  const t = e.t - o.wallMs;
  if (e.ev !== 'trace') return { ...e, t };
  const mono = (r: Readonly<Record<string, number>>): Record<string, number> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v - o.monoMs]));
  return { ...e, t, s: mono(e.s), ...(e.acks ? { acks: mono(e.acks) } : {}) };
}
