// The nemesis: the scenario's fault schedule carried out on time against the running cluster. It owns
// resolving each fault's target, dispatching it to the runtime or shaping, and the recovery's bookkeeping.
import { DEGRADED_PHASE, FAULT_PHASE } from '../load/agent-protocol.js';
import type { FaultMark } from '../vocabulary/names.js';

import { LEADER, type FaultSpec } from '../topology/topology-schema.js';
import { currentLeader } from './current-leader.js';
import { awaitElection, watchDeposition, watchLaterElection } from './election-watch.js';
import { carryOut, healCuts } from './fault-actions.js';
import type { FaultBook } from './fault-book.js';
import { resolveFault } from './fault-target.js';
import type { ChaosContext } from './chaos-context.js';
import { wallNowMs } from '../util/wall-clock.js';
import { Random } from '../util/random.js';

export type { ChaosContext, LoadPhases } from './chaos-context.js';

/** How long a roll waits for the leader after a member it took down to serve. */
const ROLL_SERVING_MS = 30_000;

/** How late a fault may strike before its mark says so (a timer on a busy event loop is a few ms late). */
const LATE_MS = 100;

/**
 * Every fault of the schedule at its time, booked in `book`; then waits for the elections they
 * caused and restores what is still cut, so that the final read reaches every live member.
 *
 * A fault starts when its time comes, not when the one before it has finished: a restart waits
 * for its process to announce itself (seconds on a busy machine), and a link change scheduled
 * three seconds later struck 0.5 s late behind it in a CI run. A fault whose target depends on
 * what the earlier ones did ("leader", "killed", a heal of their cuts) waits for them first; a
 * link change names its data centers and goes ahead on time.
 */
export async function runFaults(c: ChaosContext, book: FaultBook): Promise<void> {
  const inFlight: Array<Promise<void>> = [];
  let failure: { error: unknown } | undefined;
  const settleAll = async (): Promise<void> => {
    await Promise.allSettled(inFlight);
    if (failure) throw failure.error;
  };
  for (const f of [...c.topology.scenario.faults].sort((a, b) => a.atMs - b.atMs)) {
    await c.sleepUntil(c.loadStart + f.atMs);
    if (failure) throw failure.error;
    if (f.action !== 'link') await settleAll();
    // An undo holds its fault as long as `for` says from when that one struck, late or not.
    if (f.undoes !== undefined) await c.sleepUntil(heldUntil(c, book, f));
    const p = runFault(c, book, f);
    // Observed at once, so a rejection is never unhandled while the schedule sleeps; rethrown
    // at the next fault (or the end) by settleAll.
    p.catch((error: unknown) => (failure ??= { error }));
    inFlight.push(p);
  }
  await settleAll();
  if (book.electing) await book.electing;
  await Promise.all(book.watchers);
  await healCuts(c.rt, book);
  c.progress('load', { leader: currentLeader(c.rt) ?? '?' });
}

/**
 * When undo `f` may strike (wall ms): its fault's own strike plus its `for` (the two faults' times
 * as planned). A fault that struck late (behind a roll, an election) is held the whole of it; a
 * `for` cut short would be a fault the report names and the run never made.
 */
function heldUntil(c: ChaosContext, book: FaultBook, f: FaultSpec): number {
  const planned = c.topology.scenario.faults.find((g) => g.ref === f.undoes);
  const struck = book.marks.find((m) => m.ref === f.undoes);
  if (!planned || !struck) return c.loadStart + f.atMs;
  return c.loadStart + struck.atS * 1000 + (f.atMs - planned.atMs);
}

async function runFault(c: ChaosContext, book: FaultBook, f: FaultSpec): Promise<void> {
  // A fault aimed at "the leader" needs the one elected after the last leader was taken out;
  // any other goes ahead (restarting the members that election needs to reach a quorum), and so
  // does the undo of an earlier fault: its members were resolved when that one struck, and a
  // `for` that waited for an election would hold the leader out longer than it says.
  const aimsAtLeader = f.target === LEADER || f.datacenters?.includes(LEADER) === true;
  if (book.electing && aimsAtLeader && f.undoes === undefined) await book.electing;
  c.progress('load', { leader: currentLeader(c.rt) ?? '?' });
  const leaderBefore = currentLeader(c.rt);
  const r = resolveFault(c.topology, f, {
    leader: leaderBefore,
    lastDown: book.lastDown,
    ...(f.undoes !== undefined ? { undoing: book.undoable.get(f.undoes) } : {}),
    // Its own draw per instant: the same seed and schedule draw the same minorities.
    random: new Random((c.seed * 1_000_003 + Math.round(f.atMs)) >>> 0),
  });
  if (f.ref !== undefined) book.undoable.set(f.ref, r);
  // The first fault that takes the serving leader out is the one the recovery phases are measured
  // from. A kill takes it out for good; a pause or a cut only while it lasts, and deposes it only
  // if another member is elected meanwhile (watchDeposition): a leader back before anyone stood
  // was held up, not replaced, and an outage timed to some later election would be a wrong figure.
  const kills = r.takesLeaderOut && f.action === 'kill';
  const deposes = !book.hasCause && kills;
  const at = wallNowMs();
  if (deposes) c.phases.switchTo(FAULT_PHASE, at);
  // Any other fault ends the steady state the model describes (and "before" with it).
  else if (!book.hasCause && c.phases.current === 'before') c.phases.switchTo(DEGRADED_PHASE, at);
  const lateMs = at - (c.loadStart + f.atMs);
  const mark: FaultMark = {
    atS: (at - c.loadStart) / 1000,
    action: f.action,
    node: f.action === 'link' ? `${r.target} rtt ${f.rttMs} ms` : r.target,
    ...(f.ref !== undefined ? { ref: f.ref } : {}),
    ...(f.undoes !== undefined ? { undoes: f.undoes } : {}),
    // Only where it shows: behind an election it had to wait for, or a machine that was late.
    ...(lateMs >= LATE_MS ? { lateMs: Math.round(lateMs) } : {}),
  };
  // Booked as it strikes, so that the marks keep the schedule's order while faults overlap.
  book.marks.push(mark);
  if (f.action === 'roll') return roll(c, book, f);
  const when = await carryOut(c.rt, f, r, book, at);
  c.note('fault', {
    action: f.action,
    target: r.target,
    at,
    ...(r.cutOff.length > 0 ? { cutOff: r.cutOff } : {}),
    ...(f.rttMs !== undefined ? { rttMs: f.rttMs } : {}),
  });
  if (leaderBefore === undefined) return;
  if (kills) book.depositions.push({ at: when, mark, leader: leaderBefore });
  else if (r.takesLeaderOut) {
    const watching = watchDeposition(c, book, f, mark, leaderBefore, when);
    book.watchers.push(watching);
    // A later fault aimed at "the leader" waits for the one this election may bring.
    if (!book.hasCause) book.electing = watching;
  }
  // A link that changes or a cut that leaves the leader in place may make it resign (or lose its
  // quorum) some seconds later: the first election that follows, before the next fault, is this
  // fault's.
  else if (f.action === 'link' || r.cuts.length > 0 || f.action === 'pause')
    book.watchers.push(watchLaterElection(c, book, f, mark, leaderBefore, at));
  if (deposes) {
    book.setCause(leaderBefore, when, c.loadStart + f.atMs, mark);
    book.electing = awaitElection(c, leaderBefore, when);
  }
}

/**
 * Every member restarted in the topology's order, one at a time: killed, then (where it led) a new
 * leader awaited, then restarted and awaited until it announces itself; each step marked as a kill
 * and a restart of its own, so that the model and the charts see who was down when.
 */
async function roll(c: ChaosContext, book: FaultBook, f: FaultSpec): Promise<void> {
  for (const node of c.topology.nodes.map((n) => n.id)) {
    const leader = currentLeader(c.rt);
    const at = wallNowMs();
    const mark: FaultMark = { atS: (at - c.loadStart) / 1000, action: 'kill', node };
    book.marks.push(mark);
    const gone = await c.rt.kill(node);
    book.wentDown(node);
    c.note('fault', { action: 'kill', target: node, at, roll: true });
    if (node === leader) {
      book.depositions.push({ at: gone, mark, leader });
      const cause = !book.hasCause;
      if (cause) {
        c.phases.switchTo(FAULT_PHASE, at);
        book.setCause(leader, gone, c.loadStart + f.atMs, mark);
      }
      // The next member goes down only once the cluster has a leader serving again (its own
      // `serving`, which names no leader), so that no election of the roll is cut short by the next.
      await awaitElection(c, leader, gone, cause);
      await c.rt.waitFor(
        (e) => e.ev === 'serving' && e.leader === undefined && e.node !== leader && e.t >= gone,
        ROLL_SERVING_MS,
      );
    }
    const back = wallNowMs();
    book.marks.push({ atS: (back - c.loadStart) / 1000, action: 'restart', node });
    await c.rt.restart(node);
    book.cameBack(node);
    c.note('fault', { action: 'restart', target: node, at: back, roll: true });
  }
}
