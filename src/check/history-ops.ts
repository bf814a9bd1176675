// src/check/: the safety checkers. A history's events (vocabulary/history.ts) paired into
// operations (this file), each key's operations checked against a model (linearizable.ts over
// register-model.ts), the shortest stretch that shows a violation (counterexample.ts), and the
// checks of a whole history by key (check-history.ts). Pure: no clock, no I/O, no randomness
// but a seeded one (history-generator.ts, for tests and `bench check`).
//
// Pairing follows Jepsen's meaning of an event's type exactly: `ok` happened, `fail` did not (it
// is dropped), `info` may have happened at any time after its invoke, or never (it stays open to
// the end of time; an `info` read constrains nothing and is dropped). A process that got `info`
// issues nothing more, and has at most one operation open: a history that breaks these rules is
// bad input, said with its line.
import type { EventType, HistoryEvent, OpKind, RegisterValue } from '../vocabulary/history.js';

/** One operation, as the checkers see it. */
export interface Op {
  /** Its number in the history, in invoke order (0-based): what a counterexample names it by. */
  readonly index: number;
  /** The source line of its invoke (1-based), where the history came from a file. */
  readonly line: number;
  readonly process: string;
  readonly f: OpKind;
  readonly key: string;
  /** write: the value; cas: [old, new]; read: null. */
  readonly input: RegisterValue | readonly [RegisterValue, RegisterValue];
  /** read: what it returned. */
  readonly output: RegisterValue;
  /** When it was invoked. */
  readonly call: number;
  /** When it completed; Infinity for an `info` (it may take effect at any time after call, or never). */
  readonly ret: number;
  readonly status: 'ok' | 'info';
  /** The connection it went over, where the history says (HistoryEvent.session). */
  readonly session?: string;
}

/** An event and the line it came from. */
export interface SourcedEvent {
  readonly event: HistoryEvent;
  readonly line: number;
}

/** A history that breaks the rules of its format (exit 2 in `check`). */
export class HistoryError extends Error {
  override readonly name = 'HistoryError';
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
  }
}

const COMPLETIONS: ReadonlySet<EventType> = new Set(['ok', 'fail', 'info']);

/** The operations of a history, in invoke order; throws HistoryError where it breaks the rules. */
export function pairOperations(events: Iterable<SourcedEvent>): Op[] {
  const open = new Map<string, { event: HistoryEvent; line: number; index: number }>();
  const silenced = new Map<string, number>();
  const done: Array<Op | undefined> = [];
  let invoked = 0;
  for (const { event: e, line } of events) {
    if (e.type === 'invoke') {
      const was = open.get(e.process);
      if (was)
        throw new HistoryError(
          line,
          `process ${e.process} invokes again while its ${was.event.f} of line ${was.line} is still open`,
        );
      const infoAt = silenced.get(e.process);
      if (infoAt !== undefined)
        throw new HistoryError(
          line,
          `process ${e.process} invokes after its info of line ${infoAt} (a process in doubt issues nothing more)`,
        );
      checkInput(e, line);
      open.set(e.process, { event: e, line, index: invoked++ });
      done.push(undefined);
      continue;
    }
    if (!COMPLETIONS.has(e.type)) throw new HistoryError(line, `unknown type ${String(e.type)}`);
    const inv = open.get(e.process);
    if (!inv) throw new HistoryError(line, `${e.type} of process ${e.process}, which has no invoke open`);
    if (inv.event.f !== e.f || inv.event.key !== e.key)
      throw new HistoryError(
        line,
        `${e.type} ${e.f} of ${e.key} completes the ${inv.event.f} of ${inv.event.key} invoked on line ${inv.line}`,
      );
    if (e.time < inv.event.time)
      throw new HistoryError(line, `completes at ${e.time}, before its invoke at ${inv.event.time}`);
    open.delete(e.process);
    if (e.type === 'info') silenced.set(e.process, line);
    if (e.type === 'fail' || (e.type === 'info' && e.f === 'read')) continue;
    if (e.type === 'ok' && e.f === 'read' && !isRegisterValue(e.value))
      throw new HistoryError(line, `a read's ok must carry the value read (a string or null)`);
    done[inv.index] = {
      index: inv.index,
      line: inv.line,
      process: e.process,
      f: inv.event.f,
      key: inv.event.key,
      input: inv.event.f === 'read' ? null : inv.event.value,
      output: e.type === 'ok' && e.f === 'read' ? (e.value as RegisterValue) : null,
      call: inv.event.time,
      ret: e.type === 'ok' ? e.time : Infinity,
      status: e.type === 'ok' ? 'ok' : 'info',
      ...(inv.event.session !== undefined ? { session: inv.event.session } : {}),
    };
  }
  // Still open at the end: in doubt, as an info would be (a read of those constrains nothing).
  for (const inv of open.values()) {
    if (inv.event.f === 'read') continue;
    done[inv.index] = {
      index: inv.index,
      line: inv.line,
      process: inv.event.process,
      f: inv.event.f,
      key: inv.event.key,
      input: inv.event.value,
      output: null,
      call: inv.event.time,
      ret: Infinity,
      status: 'info',
    };
  }
  return done.filter((o): o is Op => o !== undefined);
}

function isRegisterValue(v: unknown): v is RegisterValue {
  return v === null || typeof v === 'string';
}

function checkInput(e: HistoryEvent, line: number): void {
  if (e.f === 'write' && !isRegisterValue(e.value))
    throw new HistoryError(line, 'a write must carry the value it writes (a string or null)');
  if (e.f === 'cas' && !(Array.isArray(e.value) && e.value.length === 2 && e.value.every(isRegisterValue)))
    throw new HistoryError(line, 'a cas must carry [old, new]');
  if (e.f !== 'read' && e.f !== 'write' && e.f !== 'cas')
    throw new HistoryError(line, `unknown operation ${String(e.f)} (read, write or cas)`);
  if (!Number.isFinite(e.time)) throw new HistoryError(line, 'time must be a finite number');
}

/** The operations by key, each key's in invoke order. */
export function byKey(ops: readonly Op[]): Map<string, Op[]> {
  const m = new Map<string, Op[]>();
  for (const o of ops) {
    const list = m.get(o.key);
    if (list) list.push(o);
    else m.set(o.key, [o]);
  }
  return m;
}
