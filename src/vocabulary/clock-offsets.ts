// A remote's two clocks less the harness's wall clock, as stamps are moved by them while a run goes
// on: a member's events (runtime/event-clock.ts), an agent's messages (load/agent-clock.ts). Here,
// at the bottom, because both sides use it; how offsets are measured is measure/clock-offset.ts's.

/** Remote − harness wall clock, ms: its wall clock (instants) and its monotonic clock (traces). */
export interface ClockOffsets {
  readonly wallMs: number;
  readonly monoMs: number;
}
