// The nemesis's schedule, drawn from its seed when the file is read: one fault of the mix every
// `every` from the warmup on, each undone `for` later (a roll undoes itself), the last one with
// room after it for the settle time and its undoing; a roll gets room for every member's restart
// before the next one. Drawn before the run,
// not during it, so that the report prints the whole schedule and the same seed replays it exactly;
// only "leader" is left to the moment, as a hand-written fault leaves it.
import type { NodeId } from '../vocabulary/names.js';
import { Random, shuffled } from '../util/random.js';
import { drawMinority } from './fault-shapes.js';
import {
  LEADER,
  MINORITY,
  UNDONE_BY,
  type FaultSpec,
  type NemesisKind,
  type NemesisSpec,
} from './topology-schema.js';

/**
 * The room a roll gets per member before the next fault is drawn. A roll restarts the members one
 * at a time, each awaited until it announces itself (and a new leader where it led), and the faults
 * after it wait for it: ZooKeeper's members took about 5 s each under the nemesis's load here, so a
 * roll drawn with no room pushed the later faults past the end of the load, where they measured
 * nothing (faultsAsPlanned). One figure for every target, so that a seed draws one schedule
 * whichever target runs it; a faster target's roll leaves the cluster quiet for the rest.
 */
export const ROLL_ROOM_PER_MEMBER_MS = 6_000;

/** What a draw needs of the run: its members and data centers in the topology's order, its span. */
export interface NemesisGround {
  readonly members: readonly NodeId[];
  readonly datacenters: readonly string[];
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The "after" window's delay: a fault that deposes a leader must leave room for it. */
  readonly settleMs: number;
}

/** The faults `n` draws over `g`, numbered after `refsBefore` (the written faults' refs). */
export function drawNemesis(g: NemesisGround, n: NemesisSpec, refsBefore: number): FaultSpec[] {
  const random = new Random(n.seed);
  const { members, datacenters: dcs } = g;
  const out: FaultSpec[] = [];
  let ref = refsBefore;
  if (n.everyMs <= 0 || n.forMs <= 0 || n.forMs >= n.everyMs) return out;
  const last = g.durationMs - Math.max(n.forMs, g.settleMs);
  const rollRoom = members.length * ROLL_ROOM_PER_MEMBER_MS;
  const rest = n.mix.filter((k) => k !== 'roll');
  for (let at = g.warmupMs + n.everyMs; at < last; at += n.everyMs) {
    // A roll that would not be over before the end gives way to another kind (none: no fault).
    let kind = random.pick(n.mix);
    if (kind === 'roll' && at + rollRoom > g.durationMs - g.settleMs) {
      if (rest.length === 0) continue;
      kind = random.pick(rest);
    }
    const fault = { ...drawOne(kind, members, dcs, random), atMs: at, drawn: true };
    if (fault.action === 'roll') {
      out.push(fault);
      // The next fault at the first of its instants the roll leaves room before.
      const over = at + rollRoom;
      while (at + n.everyMs < over) at += n.everyMs;
      continue;
    }
    const undo = UNDONE_BY[fault.action];
    if (undo === undefined) {
      out.push(fault);
      continue;
    }
    ref++;
    out.push({ ...fault, ref });
    out.push({ atMs: at + n.forMs, action: undo, target: fault.target, undoes: ref, drawn: true });
  }
  return out;
}

/** One fault of `kind`, its members drawn where the kind leaves them to chance. */
function drawOne(
  kind: NemesisKind,
  members: readonly NodeId[],
  dcs: readonly string[],
  random: Random,
): Omit<FaultSpec, 'atMs'> {
  switch (kind) {
    case 'kill-leader':
      return { action: 'kill', target: LEADER };
    case 'kill':
      return { action: 'kill', target: random.pick(members) };
    case 'pause-leader':
      return { action: 'pause', target: LEADER };
    case 'pause-minority':
      return { action: 'pause', target: MINORITY, nodes: drawMinority(members, random) };
    case 'oneway-leader':
      return { action: 'oneway', target: LEADER };
    case 'isolate-leader':
      return { action: 'isolate', target: LEADER };
    case 'partition': {
      const dc = random.pick(dcs);
      return { action: 'partition', target: dc, datacenters: [dc] };
    }
    case 'bridge':
      return { action: 'bridge', target: random.pick(members) };
    case 'ring': {
      const order = shuffled(members, random);
      return { action: 'ring', target: order.join(','), nodes: order };
    }
    case 'roll':
      return { action: 'roll', target: 'all' };
  }
}
