// One member of an election group as `pole-bench election` drives it, whatever elects it (rounds
// on a SQL database, or ZooKeeper's leader recipe): it joins, says when it believes it leads and
// until when, and can be crashed (it does nothing more, its connections end abruptly as a killed
// process's would) or paused (it stops acting for a while, as a process stalled by the OS would).
//
// Leadership beliefs are events, so that "no two participants believe they lead at once" can be
// checked afterwards from their own timestamps (all participants run on one machine, one clock).

export type ElectionEvent =
  /** Joined the group (first round committed / znode created). */
  | { readonly t: number; readonly participant: string; readonly ev: 'joined'; readonly id: string }
  /**
   * Believes it leads from `t` (a committed round, or the recipe's check) until `until` (its lease
   * end), or until a later `lead-lost`/`crashed` when `until` is null. A renewal is another `lead`.
   */
  | { readonly t: number; readonly participant: string; readonly ev: 'lead'; readonly until: number | null }
  /** No longer believes it leads (a round said so, the session was lost, the lease check failed). */
  | { readonly t: number; readonly participant: string; readonly ev: 'lead-lost'; readonly why: string }
  | { readonly t: number; readonly participant: string; readonly ev: 'crashed' }
  | { readonly t: number; readonly participant: string; readonly ev: 'paused'; readonly ms: number }
  /** A round or request failed (the database or ensemble went away, a lock timed out …). */
  | { readonly t: number; readonly participant: string; readonly ev: 'error'; readonly message: string }
  /** The round time Tp this participant read (db backend), when it changed. */
  | { readonly t: number; readonly participant: string; readonly ev: 'round-time'; readonly ms: number };

export type ElectionEventSink = (e: ElectionEvent) => void;

export interface Participant {
  readonly name: string;
  /** Joins; resolves once it is a member (its first round committed, or its znode created). */
  start(): Promise<void>;
  /** The algorithm's own isLeader(): role and lease (db), or smallest znode and a live session (recipe). */
  isLeader(): boolean;
  /** Crash: sockets destroyed without a goodbye, timers stopped; it emits `crashed` and nothing more. */
  crash(): void;
  /** Stops acting (no rounds, no pings, no replies handled) for `ms`, then goes on. */
  pause(ms: number): void;
  /** Leaves cleanly at the end of a run (closes its session / connection). Bounded. */
  stop(): Promise<void>;
}
