// Check, Jepsen's final read: every write an agent saw acknowledged must be on every live member,
// read back by the target's own checker through the leader serving at the end. A write missing
// is lost, and the result lists it.
import type { NodeId } from '../vocabulary/names.js';
import { currentLeader } from '../chaos/current-leader.js';
import type { RunContext } from './run-context.js';

/** Resolves with the leader serving at the end (the floor's calibration writes through it). */
export async function checkWrites(run: RunContext): Promise<NodeId> {
  const { rt, t, o, state } = run;
  run.progress('checking writes');
  const leader = currentLeader(rt);
  if (leader === undefined) throw new Error('no serving leader at the end of the run for the final read');
  const acked = [...state.dones.values()].flatMap((d) =>
    d.acked.map(([path, epoch, counter]) => ({ path, zxid: { epoch, counter } })),
  );
  const running = t.nodes.filter((n) => rt.isRunning(n.id)).map((n) => n.id);
  const check = await rt.target.checkAckedWrites({
    leader: rt.clientAddress(leader),
    nodes: running.map((id) => ({ id, address: rt.clientAddress(id) })),
    acked,
    runId: `run${o.seed}`,
  });
  state.lostList = check.lost;
  state.finalRead = {
    keys: check.checked,
    writes: check.writes,
    readOn: running,
    notRead: t.nodes.map((n) => n.id).filter((id) => !running.includes(id)),
  };
  return leader;
}
