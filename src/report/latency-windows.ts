// Each data center's latency windows (warm-up, before, degraded, during, after) from its load
// agent's `done`: the phases the harness switched the agents through are the windows, so this only
// reshapes the agent's summaries. A data center whose agent was lost says why instead. Pure.
import {
  DEGRADED_PHASE,
  FAULT_PHASE,
  type DoneMessage,
  type LatencySummary,
} from '../load/agent-protocol.js';
import type { LatencyStats, LatencyWindows } from './result.js';

export function latencyWindows(
  dcs: readonly string[],
  dones: ReadonlyMap<string, DoneMessage>,
  lostAgents: ReadonlyMap<string, string>,
): Record<string, LatencyWindows> {
  const latency: Record<string, LatencyWindows> = {};
  for (const dc of dcs) {
    const d = dones.get(dc);
    const window = (name: string): LatencyStats | null => {
      const p = d?.phases[name];
      return p ? stats(p.corrected, p.uncorrected) : null;
    };
    const degraded = window(DEGRADED_PHASE);
    latency[dc] = {
      warmup: window('warmup'),
      before: window('before'),
      // Only runs with a fault that left the leader serving have this window.
      ...(degraded ? { degraded } : {}),
      during: window(FAULT_PHASE),
      after: window('after'),
      attempted: d?.totals.attempted ?? 0,
      failed: d?.totals.failed ?? 0,
      lost: lostAgents.get(dc) ?? (d ? null : 'the load agent reported nothing'),
    };
  }
  return latency;
}

/** One window: corrected latency (from the intended send time), and the mean from the actual send. */
export function stats(s: LatencySummary, fromSend: LatencySummary): LatencyStats {
  if (s.count === 0)
    return {
      count: 0,
      mean: null,
      sentMean: null,
      sentSd: null,
      p50: null,
      p90: null,
      p99: null,
      p999: null,
      max: null,
    };
  return {
    count: s.count,
    mean: s.mean,
    sentMean: fromSend.mean,
    sentSd: fromSend.sd,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    p999: s.p999,
    max: s.max,
  };
}
