// How many of a run's writes its POLE nodes and agents trace for the latency anatomy: decided once
// from the topology's load, so the nodes (in their config) and the agents (in their spec) agree.
import { traceEveryFor } from '../node/trace/write-tracer.js';
import type { Topology } from './topology.js';

export function traceEveryOf(t: Topology): number {
  let total = 0;
  for (const rate of t.workload.ratePerDc.values()) total += rate;
  return traceEveryFor(total);
}
