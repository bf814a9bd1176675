// What each data center's clients saw of a failover, from its load agent's own records: when the
// first write committed in the new epoch came back (the outage), and the longest silence between
// two acknowledgements in the fault's window. Both are measured from the instant the fault was
// carried out, the recovery's one time zero, so the outage cannot come out negative: a write of
// the new epoch is committed only after the new leader was elected, which is after the fault. (An
// earlier "first acknowledgement after the fault" picked up writes the dead leader had committed
// before it died, acknowledged a few ms after the kill: negative gaps.) Pure: tested on a recorded run.
import { FAULT_PHASE } from '../load/agent-protocol.js';
import type { DoneMessage } from '../load/agent-protocol.js';
import type { ClientRecovery } from './result.js';

export type AgentRecord = Pick<DoneMessage, 'firstAckByEpoch' | 'longestAckGap'>;

/**
 * Per data center of `dcs`: `faultAt` (wall ms) to its first acknowledgement of a write of epoch
 * `fromEpoch` (the first election's after the fault) or later, and its agent's longest silence in
 * the fault's window; null where not observed. Later epochs count: on a starved machine the first
 * new leader may lose its quorum before it commits anything, and the clients wait for the next.
 */
export function clientRecovery(
  dcs: readonly string[],
  agents: ReadonlyMap<string, AgentRecord>,
  faultAt: number | null,
  fromEpoch: number | null,
): Record<string, ClientRecovery> {
  const out: Record<string, ClientRecovery> = {};
  for (const dc of dcs) {
    const a = agents.get(dc);
    const firstNew = fromEpoch === null ? undefined : firstAckFrom(a?.firstAckByEpoch ?? {}, fromEpoch);
    // The silences that overlap the outage: any that ended in the fault's window, and the one that
    // ended after it when the outage outlasted the window (its settle time).
    const gaps = [a?.longestAckGap[FAULT_PHASE], a?.longestAckGap.after].filter(
      (g) => g !== undefined && (firstNew === undefined || g.fromMs <= firstNew),
    );
    out[dc] = {
      outageMs: faultAt === null || firstNew === undefined ? null : round3(firstNew - faultAt),
      longestAckGapMs: faultAt === null || gaps.length === 0 ? null : Math.max(...gaps.map((g) => g!.ms)),
    };
  }
  return out;
}

/**
 * The first acknowledgement (wall ms) of a write of epoch `fromEpoch` or later in one agent's
 * records. The outage and ZooKeeper's first commit both read the records through this, so the
 * two figures cannot drift apart in what they count as "the new epoch".
 */
export function firstAckFrom(
  byEpoch: Readonly<Record<string, number>>,
  fromEpoch: number,
): number | undefined {
  const acks = Object.entries(byEpoch)
    .filter(([e]) => Number(e) >= fromEpoch)
    .map(([, at]) => at);
  return acks.length > 0 ? Math.min(...acks) : undefined;
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
