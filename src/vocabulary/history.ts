// A history: every operation clients asked of the system under test, as events on one clock,
// Jepsen's way (an `invoke`, then its completion: `ok` it happened, `fail` it did not, `info` it
// may have, at any time after its invoke, or never). A run writes one (history.jsonl, one event
// per line: docs/checking.md); the checkers (check/) read it, and `pole-bench check` reads one
// from a file.

/** What an operation does to its key: a read, a write, or a compare-and-set ([old, new]). */
export type OpKind = 'read' | 'write' | 'cas';

/** A register's value: a string, or null before anything was written. */
export type RegisterValue = string | null;

export type EventType = 'invoke' | 'ok' | 'fail' | 'info';

export interface HistoryEvent {
  readonly type: EventType;
  /** Who asked: one client session; it has at most one operation open at a time. */
  readonly process: string;
  readonly f: OpKind;
  /** The register it applies to; keys are independent. */
  readonly key: string;
  /**
   * invoke: what was written (write), [old, new] (cas), null (read). ok: what was read (read);
   * otherwise as invoked.
   */
  readonly value: RegisterValue | readonly [RegisterValue, RegisterValue];
  /** Milliseconds on the history's one clock (a run's: the harness's wall clock). */
  readonly time: number;
  /** Why it failed or is in doubt (fail, info), in the client's words. */
  readonly error?: string;
  /**
   * The connection it went over, where the history says (a run's: one agent's connection to one
   * member): a session model holds the reads of one connection to their order.
   */
  readonly session?: string;
}
