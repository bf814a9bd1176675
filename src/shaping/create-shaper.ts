// The shaper a run chose (runtime/choose-runtime.ts chooseShaping), made.
import type { NodeId } from '../vocabulary/names.js';
import type { ShapingChoice } from '../vocabulary/names.js';
import type { Topology } from '../topology/topology.js';
import { netemShaper } from './netem/netem-shaper.js';
import { noShaper } from './no-shaper.js';
import { relayShaper } from './relay/relay-shaper.js';
import type { Shaper } from './shaper.js';

export function createShaper(
  choice: ShapingChoice,
  t: Topology,
  o: { seed: number; netemPlan?: (addresses: ReadonlyMap<NodeId, string>) => Map<NodeId, string[][]> },
): Shaper {
  switch (choice.kind) {
    case 'relay':
      return relayShaper(t, { seed: o.seed, reason: choice.reason });
    case 'netem':
      return netemShaper(t, { reason: choice.reason, ...(o.netemPlan ? { plan: o.netemPlan } : {}) });
    case 'none':
      return noShaper(t, choice.reason);
  }
}
