// The fault schedule the report names against the faults the run made (their marks): a fault
// behind a long one (a roll restarts every member in turn) strikes late, and one pushed past the
// end of the load measured nothing; an undo that came sooner after its fault than `for` says
// held it out for less than the report claims. Lateness alone is shown, not held against the run.
import { type Check, f } from './check-kit.js';

/** How much shorter than its `for` a fault may be held: a timer's and an event loop's lateness. */
export const HELD_SLACK_MS = 100;

export const faultsAsPlanned = {
  id: 'faultsAsPlanned',
  what: `every fault of the schedule made during the load, each one with a for held out that long (less ${HELD_SLACK_MS} ms)`,
  run: (r, fail, skip) => {
    const planned = r.scenario.faults;
    if (planned === undefined) return skip('the result names no fault schedule (written before it did)');
    if (planned.length === 0) return skip('the scenario has no faults');
    const marks = r.timeline.faults;
    const endS = r.scenario.durationMs / 1000;
    const counts = (xs: ReadonlyArray<{ action: string }>): Map<string, number> => {
      const m = new Map<string, number>();
      for (const x of xs) m.set(x.action, (m.get(x.action) ?? 0) + 1);
      return m;
    };
    // A roll's own kills and restarts are marks besides its own: at least as many of each kind.
    const made = counts(marks);
    for (const [action, n] of counts(planned))
      if ((made.get(action) ?? 0) < n) fail(`${n} ${action} planned, ${made.get(action) ?? 0} made`);
    const after = marks.filter((m) => m.atS > endS);
    if (after.length > 0)
      fail(
        `${after.length} made after the load ended at ${endS} s, the first ${after[0]!.action} ${after[0]!.node} at ${f(after[0]!.atS)} s` +
          (after[0]!.lateMs !== undefined ? ` (${f(after[0]!.lateMs / 1000)} s late)` : ''),
      );
    for (const u of planned) {
      if (u.undoes === undefined) continue;
      const of = planned.find((p) => p.ref === u.undoes);
      const struck = marks.find((m) => m.ref === u.undoes);
      const undone = marks.find((m) => m.undoes === u.undoes);
      if (!of || !struck || !undone) continue;
      const heldS = undone.atS - struck.atS;
      const forS = u.atS - of.atS;
      if (heldS * 1000 < forS * 1000 - HELD_SLACK_MS)
        fail(
          `the ${of.action} of ${struck.node} at ${f(struck.atS)} s held ${f(heldS)} s of its ${f(forS)} s`,
        );
    }
  },
} as const satisfies Check;
