// The shortest stretch of a violated key's operations that is still not linearizable: what a
// person reads to see the violation (a read of a value overwritten before it was invoked, say,
// and the writes that make it so). Found by removing operations while the rest stays violated,
// in halves first, then quarters, down to one at a time (delta debugging), so that what is left
// is violated and loses that with any one operation taken away.
import { searchLinearization } from './linearizable.js';
import { zoneVerdict } from './register-zones.js';
import type { Model } from './register-model.js';
import type { Op } from './history-ops.js';
import type { RegisterValue } from '../vocabulary/history.js';

export interface Counterexample {
  /** The operations, by invoke time. */
  readonly ops: readonly Op[];
  /** False where the time ran out first: still violated, but perhaps not the shortest. */
  readonly minimal: boolean;
}

/**
 * `ops` must be violated under `model`. Each trial gets what is left of the time; a trial that
 * runs out counts as linearizable (the operation it would remove stays). `start`, if given, is a
 * violated stretch already known (the zones' witness), from which the trials begin.
 */
export function shortestCounterexample<S>(
  ops: readonly Op[],
  model: Model<S>,
  deadline = Infinity,
  start?: readonly Op[],
): Counterexample {
  // The search knows an operation by its place in the list it is given, so any sublist will do.
  const writers = writersOf(ops);
  let kept = start && isViolated(start, model, deadline) ? [...start] : [...ops];
  let chunk = Math.max(1, kept.length >> 1);
  for (;;) {
    let removedAny = false;
    for (let at = 0; at < kept.length;) {
      if (performance.now() > deadline) return { ops: byCall(kept), minimal: false };
      const without = [...kept.slice(0, at), ...kept.slice(at + chunk)];
      if (
        without.length > 0 &&
        readsKeepTheirWrites(without, writers) &&
        isViolated(without, model, deadline)
      ) {
        kept = without;
        removedAny = true;
      } else at += chunk;
    }
    if (chunk === 1 && !removedAny) return { ops: byCall(kept), minimal: true };
    if (!removedAny || chunk > 1) chunk = Math.max(1, chunk >> 1);
  }
}

/** Whether ops are violated: by the zones where they apply, else by the search (run out: no). */
function isViolated<S>(ops: readonly Op[], model: Model<S>, deadline: number): boolean {
  const zones = model.name === 'register' || !ops.some((o) => o.f === 'cas') ? zoneVerdict(ops) : undefined;
  if (zones) return zones.verdict === 'violated';
  return searchLinearization(ops, model, deadline).verdict === 'violated';
}

/** The operation that wrote each value (write, or cas's new value): values are unique per write. */
function writersOf(ops: readonly Op[]): Map<RegisterValue, Op> {
  const m = new Map<RegisterValue, Op>();
  for (const o of ops)
    if (o.f === 'write') m.set(o.input as RegisterValue, o);
    else if (o.f === 'cas') m.set((o.input as readonly [RegisterValue, RegisterValue])[1], o);
  return m;
}

/**
 * Whether every read left still has the write of what it read: taking that write away would turn
 * the read into one of a value nobody wrote, a violation the history never had.
 */
function readsKeepTheirWrites(ops: readonly Op[], writers: ReadonlyMap<RegisterValue, Op>): boolean {
  const present = new Set(ops);
  return ops.every((o) => {
    if (o.f !== 'read' || o.output === null) return true;
    const w = writers.get(o.output);
    return w === undefined || present.has(w);
  });
}

function byCall(ops: readonly Op[]): Op[] {
  return [...ops].sort((a, b) => a.call - b.call || a.index - b.index);
}
