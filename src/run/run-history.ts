// A run's history (runs with reads): every operation the agents made, as events on the harness's
// wall clock (vocabulary/history.ts; history.jsonl beside result.json), and what the checker finds
// in it against what the target promises of its read path (Target.reads).
import { checkCounts, checkHistory } from '../check/check-history.js';
import { pairOperations, type Op } from '../check/history-ops.js';
import { checkSessionReads } from '../check/session-reads.js';
import type { DoneMessage } from '../load/agent-protocol.js';
import type { SafetyModelResult, SafetyOp, SafetyResult } from '../report/result.js';
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
    for (const [id, f, key, invoked, completed, value, session] of d.history ?? []) {
      const op = f === 'r' ? 'read' : 'write';
      // The invoke, and an in-doubt completion at its time, carry what was written (a read: null).
      const invoke = {
        process: id,
        f: op,
        key,
        value: op === 'write' ? value : null,
        time: invoked,
        ...(session !== undefined ? { session } : {}),
      } as const;
      events.push({ type: 'invoke', ...invoke });
      events.push(
        completed === null ? { type: 'info', ...invoke } : { type: 'ok', ...invoke, value, time: completed },
      );
    }
  // Stable: an operation's invoke stays before a completion stamped at the same instant.
  return events.sort((a, b) => a.time - b.time);
}

/**
 * The history against linearizability and against the session model (a connection's reads never
 * go back in time), each held where the target promises it for its read path (linearizable
 * promises the session model too).
 */
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
  const s = checkSessionReads(ops);
  const at = (t: number): number => Math.round((t - loadStart) * 1000) / 1000;
  const shown = (o: Op): SafetyOp => ({
    process: o.session !== undefined ? `${o.process} on ${o.session}` : o.process,
    f: o.f,
    value: o.f === 'read' ? o.output : (o.input as string | null),
    invokedMs: at(o.call),
    completedMs: o.ret === Infinity ? null : at(o.ret),
  });
  const readModeText = `${readMode}: ${mode.describe}`;
  const linearizable: SafetyModelResult = {
    model: 'linearizable',
    readMode: readModeText,
    promised,
    ...checkCounts(c),
    counterexample: first ? { key: first.key, ops: first.counterexample!.ops.map(shown) } : null,
  };
  const session: SafetyModelResult = {
    model: 'session',
    readMode: readModeText,
    // Linearizable reads are in order on every connection too.
    promised: true,
    ops: s.reads,
    keys: s.pairs,
    ok: s.pairs - s.violatedPairs,
    violated: s.violatedPairs,
    unknown: 0,
    seconds: Math.round(s.seconds * 1000) / 1000,
    counterexample: s.first
      ? {
          key: s.first.key,
          ops: [s.first.earlierWrite, s.first.earlier, s.first.laterWrite, s.first.later]
            .filter((o): o is Op => o !== undefined)
            .sort((a, b) => a.call - b.call)
            .map(shown),
        }
      : null,
  };
  // A history with no connection named (none of its reads completed) has no session to hold.
  const models = s.reads > 0 ? [linearizable, session] : [linearizable];
  const writes = ops.filter((o) => o.f === 'write');
  return {
    history: HISTORY_FILE,
    broken: (promised ? c.violated : 0) + (s.reads > 0 ? s.violatedPairs : 0),
    undecided: promised ? c.unknown : 0,
    models,
    writes: { sent: writes.length, ok: writes.filter((o) => o.ret !== Infinity).length },
  };
}
