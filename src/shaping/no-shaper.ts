// No shaping: one data center, or `--shaping none` (a calibration of the members alone).
import type { Topology } from '../topology/topology.js';
import { directDial, unmeasuredLinks, type Shaper } from './shaper.js';

export function noShaper(t: Topology, reason: string): Shaper {
  return {
    kind: 'none',
    reason,
    install: (req) => Promise.resolve(directDial(req.members)),
    // Nothing to take out or put back.
    change: () => Promise.resolve(true),
    // Nothing stands between the members to cut or slow.
    cut: () => Promise.resolve(false),
    setRtt: () => Promise.resolve(false),
    measure: () => Promise.resolve(unmeasuredLinks(t)),
    usage: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  };
}
