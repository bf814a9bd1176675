// The faults' bookkeeping: what each one did (its timeline mark), which took the serving leader
// out (the depositions, for every election of the run), and the first of those (the cause) that
// the recovery figures are timed from; besides, what later faults need: the node the latest kill
// or pause took down ("killed"), the links still cut, and the elections still awaited.
import type { NodeId } from '../vocabulary/names.js';
import type { Deposition } from '../report/elections.js';
import type { FaultMark } from '../vocabulary/names.js';

import type { Cut, ResolvedFault } from './fault-target.js';

export class FaultBook {
  /** Every fault carried out, in order. */
  readonly marks: FaultMark[] = [];
  /** Every fault that took the serving leader out (the first is the cause), as they happened. */
  readonly depositions: Deposition[] = [];
  /** The leader the cause took out, and when it was carried out (wall ms): the recovery's zero. */
  killed: NodeId | null = null;
  killAt: number | null = null;
  /** When the cause was scheduled (wall ms): beside the instant it was carried out (`killAt`). */
  causeScheduledAt: number | null = null;
  cause: FaultMark | null = null;
  /** The node the latest kill or pause took down: what `restart: killed` brings back. */
  lastDown: NodeId | undefined = undefined;
  /** Links cut until a heal (or the end of the faults) restores them. */
  readonly cuts: Cut[] = [];
  /** Each fault a later one undoes (`for`), by its ref, as it was resolved when it struck. */
  readonly undoable = new Map<number, ResolvedFault>();
  /** Elections a link fault may cause later; settled before the load ends. */
  readonly watchers: Array<Promise<void>> = [];
  /** The election after the fault that took the leader out, until it is done. */
  electing: Promise<void> | undefined = undefined;

  /** Whether a fault has taken the serving leader out yet (after it, no window is "before"). */
  get hasCause(): boolean {
    return this.killAt !== null;
  }

  /** The fault the recovery is timed from: it took `leader` out at `at` (wall ms). */
  setCause(leader: NodeId, at: number, scheduledAt: number, mark: FaultMark): void {
    this.killed = leader;
    this.killAt = at;
    this.causeScheduledAt = scheduledAt;
    this.cause = mark;
  }

  /** A kill or pause took `node` down. */
  wentDown(node: NodeId): void {
    this.lastDown = node;
  }

  /** A restart or resume brought `node` back. */
  cameBack(node: NodeId): void {
    // Not the last one down (two were killed, the first restarts): "killed" still names that one.
    if (node === this.lastDown) this.lastDown = undefined;
  }
}
