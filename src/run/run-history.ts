// A run's history (runs with reads): every operation the agents made, as events on the harness's
// wall clock (vocabulary/history.ts; history.jsonl beside result.json), and what the checker finds
// in it against what the target promises of its read path (Target.reads).
import { checkCounts, checkHistory } from '../check/check-history.js';
import { pairOperations } from '../check/history-ops.js';
import type { DoneMessage } from '../load/agent-protocol.js';
import type { SafetyResult } from '../report/result.js';
import type { Target } from '../targets/target.js';
import type { HistoryEvent } from '../vocabulary/history.js';

export const HISTORY_FILE = 'history.jsonl';

/**
 * How long the check may take: the run is over by then, and a key left undecided is said as such.
 * A history of a minute at 1,000 operations/s is checked in well under a second (bench check).
 */
const CHECK_BUDGET_MS = 60_000;

/**
 * The agents' operations as events, in time order. Each operation is a process of its own (an
 * open-loop client has many in flight; only one per process may be open), named by its data
 * center and number (`tud-w17`, `cern-r4`). One that did not complete is in doubt (`info`),
 * written at its invoke: when it took effect, if it did, is not known.
 */
export function runHistory(dones: Iterable<DoneMessage>): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const d of dones)
    for (const [id, f, key, invoked, completed, value] of d.history ?? []) {
      const op = f === 'r' ? 'read' : 'write';
      events.push({
        type: 'invoke',
        process: id,
        f: op,
        key,
        value: op === 'write' ? value : null,
        time: invoked,
      });
      events.push(
        completed === null
          ? { type: 'info', process: id, f: op, key, value: op === 'write' ? value : null, time: invoked }
          : { type: 'ok', process: id, f: op, key, value, time: completed },
      );
    }
  // Stable: an operation's invoke stays before a completion stamped at the same instant.
  return events.sort((a, b) => a.time - b.time);
}

/** The history against linearizability, and whether the target promised it for its reads. */
export function checkRunHistory(
  events: readonly HistoryEvent[],
  target: Target,
  loadStart: number,
  readMode = 'default',
): SafetyResult {
  const mode = target.readModes[readMode];
  if (!mode) throw new Error(`the ${target.name} target has no read mode ${readMode}`);
  const ops = pairOperations(events.map((event, i) => ({ event, line: i + 1 })));
  const c = checkHistory(ops, { model: 'register', budgetMs: CHECK_BUDGET_MS });
  const first = c.problems.find((p) => p.counterexample);
  const promised = mode.promises === 'linearizable';
  return {
    history: HISTORY_FILE,
    broken: promised ? c.violated : 0,
    undecided: promised ? c.unknown : 0,
    models: [
      {
        model: 'linearizable',
        readMode: `${readMode}: ${mode.describe}`,
        promised,
        ...checkCounts(c),
        counterexample: first
          ? {
              key: first.key,
              ops: first.counterexample!.ops.map((o) => ({
                process: o.process,
                f: o.f,
                value: o.f === 'read' ? o.output : (o.input as string | null),
                invokedMs: Math.round((o.call - loadStart) * 1000) / 1000,
                completedMs: o.ret === Infinity ? null : Math.round((o.ret - loadStart) * 1000) / 1000,
              })),
            }
          : null,
      },
    ],
  };
}
