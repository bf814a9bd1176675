// The elections the faults cause, watched while the schedule goes on: the one after the cause
// (which starts the "after" window, and which a later fault aimed at "leader" waits for), and the
// one a link change may cause some seconds later, when the leader resigns over it or loses its
// quorum (its first such election becomes the cause if nothing took the leader out before).
import { FAULT_PHASE } from '../load/agent-protocol.js';
import type { NodeId } from '../vocabulary/names.js';
import type { FaultMark } from '../vocabulary/names.js';
import type { ClusterEvent } from '../vocabulary/node-events.js';

import type { FaultSpec } from '../topology/topology-schema.js';
import type { FaultBook } from './fault-book.js';
import type { ChaosContext } from './chaos-context.js';
import { wallNowMs } from '../util/wall-clock.js';

/** How long the election after the cause may take before the run fails. */
const ELECTION_TIMEOUT_MS = 30_000;

/**
 * The election after the cause took `gone` out at `since`: once a new leader is elected, "after"
 * begins settleMs later (unless `opensAfter` is false: an election after a later fault). Rejects
 * when none is within the bound.
 */
export function awaitElection(
  c: ChaosContext,
  gone: NodeId,
  since: number,
  opensAfter = true,
): Promise<void> {
  const electing = c.rt
    .waitFor(
      (e) => e.ev === 'elected' && e.node === e.leader && e.t >= since && e.node !== gone,
      ELECTION_TIMEOUT_MS,
    )
    .then((elected) => {
      c.progress('recovering', { leader: elected.node });
      if (opensAfter) c.phases.switchTo('after', elected.t + c.topology.scenario.settleMs);
    });
  // Awaited later (before any later fault aimed at the leader, and at the end of the faults);
  // this only keeps a rejection meanwhile from counting as unhandled.
  electing.catch(() => undefined);
  return electing;
}

/**
 * After fault `f` (carried out at `at`, marked `mark`) that took `leader` out while it lasts (a
 * pause, a cut that leaves it no majority or no way out): it deposed the leader if another member
 * is elected before the next fault other than its own undo, and then it is the cause unless one
 * came before it; the clients' gap is timed from the fault. Undone before anyone stood, it deposed
 * no one: its writes were held up, which "degraded" (where it struck) shows. Never rejects.
 */
export function watchDeposition(
  c: ChaosContext,
  book: FaultBook,
  f: FaultSpec,
  mark: FaultMark,
  leader: NodeId,
  at: number,
): Promise<void> {
  const sc = c.topology.scenario;
  const later = sc.faults.filter((g) => g.atMs > f.atMs && (f.ref === undefined || g.undoes !== f.ref));
  const untilAt = Math.min(sc.durationMs, ...later.map((g) => g.atMs));
  const left = Math.max(0, c.loadStart + untilAt - wallNowMs());
  return (
    c.rt
      .waitFor(electedOtherThan(leader, at), left)
      .then((elected) => {
        book.depositions.push({ at, mark, leader });
        if (book.hasCause) return;
        c.phases.switchTo(FAULT_PHASE, at);
        becomeCause(c, book, f, mark, leader, at, elected);
      })
      // Said in the run's events: the leader was taken out and nobody replaced it.
      .catch(() => c.note('not-deposed', { leader, action: f.action, atS: mark.atS }))
  );
}

/**
 * After fault `f` (struck at `at`, marked `mark`) that left `leader` in place (a link change, a
 * cut or a pause that spared its quorum): the first election that follows before the next fault,
 * if any, is this fault's. Never rejects: no election is an outcome.
 */
export function watchLaterElection(
  c: ChaosContext,
  book: FaultBook,
  f: FaultSpec,
  mark: FaultMark,
  leader: NodeId,
  at: number,
): Promise<void> {
  const sc = c.topology.scenario;
  const nextAt = sc.faults.find((g) => g.atMs > f.atMs)?.atMs ?? sc.durationMs;
  const left = (): number => Math.max(0, c.loadStart + nextAt - wallNowMs());
  return c.rt
    .waitFor(
      (e) => e.node === leader && e.t >= at && (e.ev === 'resigned' || e.ev === 'stepped-down'),
      left(),
    )
    .then((gone) => {
      book.depositions.push({ at, mark, leader });
      // The clients' gap starts when the leader stops serving.
      if (!book.hasCause) c.phases.switchTo(FAULT_PHASE, gone.t);
      return c.rt.waitFor(electedOtherThan(leader, at), left());
    })
    .then((elected) => {
      if (!book.hasCause) becomeCause(c, book, f, mark, leader, at, elected);
    })
    .catch(() => undefined);
}

/** An election won by a member other than `leader`, at `at` or later. */
const electedOtherThan =
  (leader: NodeId, at: number) =>
  (e: ClusterEvent): boolean =>
    e.ev === 'elected' && e.node === e.leader && e.t >= at && e.node !== leader;

/** Fault `f`, which took `leader` out at `at`, is the cause: "after" starts a settle past `elected`. */
function becomeCause(
  c: ChaosContext,
  book: FaultBook,
  f: FaultSpec,
  mark: FaultMark,
  leader: NodeId,
  at: number,
  elected: ClusterEvent,
): void {
  book.setCause(leader, at, c.loadStart + f.atMs, mark);
  c.progress('recovering', { leader: elected.node });
  c.phases.switchTo('after', elected.t + c.topology.scenario.settleMs);
}
