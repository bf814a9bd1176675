// Leader election through a SQL database (Niazi, Ismail, Berthou, Dowling, "Leader Election using
// NewSQL Database Systems", DAIS 2015, section 4, Algorithm 1), one round as a pure function: given
// what a participant read inside its transaction (the VARS register and every DESCRIPTOR) under the
// lock it took, what it writes before committing, the local state it adopts once (and only once)
// the transaction commits, and how long it sleeps before the next round. The driver
// (db-participant.ts) runs the transaction; the clock comes in as `now`, so rounds replay exactly
// in unit tests.
//
// Where the paper leaves room, this reads it as follows (each marked "Reading:" below):
// 1. The history is updated with this round's read before the leader check, not after (line 14
//    comes after line 13 in the listing): the check then sees the counters just read, and a
//    process is dead after Max_mhb consecutive reads of an unchanged counter, which is the bound
//    the paper's Theorem 1 argues with ("it will have to read the registers Max_mhb times").
// 2. A round retried at once with the exclusive lock (forceExclusiveLock, sleep 0) does not count
//    as a missed heartbeat of anybody: a few ms after the last read nobody could have updated.
// 3. An evicted process sets the evict flag in its exclusive retry, together with its new id
//    (line 30 writes VARS, which needs the exclusive lock it does not hold yet in line 28).
// 4. A round that only found it needs the exclusive lock (lines 29 and 38) writes nothing else
//    and skips the leader check; it commits (releasing its shared lock) and retries at once.
// 5. The lease starts at line 20's time, before the commit, and the role is only adopted once the
//    commit succeeded: a round that fails leaves the process a non-leader (Case I of Theorem 1).
// 6. μ (clock drift allowance) is not given in the paper: 100 ms by default here.
// 7. The lease counts with the Tp read in its round, before the leader raises it: the others may
//    still sleep the old Tp, and 2 × Δ (100 ms) is as much as μ, so a lease on the new Tp could
//    outlast their detection on the round Tp changes.

export type LockMode = 'shared' | 'exclusive';
export type Role = 'leader' | 'non_leader';

export interface DbTimers {
  /** The initial round time Tp (the paper: 2 s). */
  readonly roundMs: number;
  /** Max_mhb: consecutive unchanged reads after which a process is dead (the paper: 2). */
  readonly maxMissed: number;
  /** Δ: the leader raises Tp by this much when an evicted process rejoins (the paper: 50 ms). */
  readonly deltaMs: number;
  /** μ: the lease is Tp × Max_mhb − μ. */
  readonly muMs: number;
}

export const PAPER_TIMERS: DbTimers = { roundMs: 2_000, maxMissed: 2, deltaMs: 50, muMs: 100 };

/** The VARS register: one row. */
export interface VarsRow {
  readonly maxId: number;
  readonly roundMs: number;
  readonly evictFlag: boolean;
}

/** One DESCRIPTOR: a process's id, heartbeat counter and address. */
export interface DescriptorRow {
  readonly id: number;
  readonly counter: number;
  readonly address: string;
}

export type DbWrite =
  | { readonly op: 'update-counter'; readonly id: number; readonly counter: number }
  | { readonly op: 'insert-descriptor'; readonly id: number; readonly address: string }
  | { readonly op: 'set-max-id'; readonly maxId: number }
  | { readonly op: 'set-evict-flag' }
  | { readonly op: 'set-round-time'; readonly roundMs: number; readonly clearEvictFlag: true }
  | { readonly op: 'delete-descriptors'; readonly ids: readonly number[] };

interface Seen {
  readonly counter: number;
  /** Consecutive reads of mine in which this counter did not change. */
  readonly missed: number;
}

export interface DbState {
  readonly id: number | null;
  readonly role: Role;
  /** The smallest alive process as last seen (the possible leader), when it is not this one. */
  readonly leader: number | null;
  readonly forceExclusive: boolean;
  readonly history: ReadonlyMap<number, Seen>;
  /** Tp as last read from VARS (raised by this round when it is the leader's and the flag was set). */
  readonly roundMs: number;
  /** The Tp the lease counts with: as read, before any raise (Reading 7). */
  readonly leaseRoundMs: number;
  /** L_hbt: when the last round's lease started (line 20). */
  readonly leaseStart: number | null;
  /** Evicted: its descriptor vanished; it rejoins with a new id in its exclusive retry. */
  readonly evicted: boolean;
  /** This round was an immediate retry with the exclusive lock (Reading 2). */
  readonly retrying: boolean;
}

export interface RoundOutcome {
  readonly writes: readonly DbWrite[];
  /** Adopt once the transaction committed; never before. */
  readonly next: DbState;
  /** Before the next round: 0 retries at once with the exclusive lock (line 22). */
  readonly sleepMs: number;
  /** Processes this round evicted (the leader's removeDeadNodes). */
  readonly evicted: readonly number[];
}

export function initialState(timers: DbTimers): DbState {
  return {
    id: null,
    role: 'non_leader',
    leader: null,
    forceExclusive: false,
    history: new Map(),
    roundMs: timers.roundMs,
    leaseRoundMs: timers.roundMs,
    leaseStart: null,
    evicted: false,
    retrying: false,
  };
}

/** Line 5: the leader, a new process and one told to retry take the exclusive lock. */
export function lockFor(s: DbState): LockMode {
  return s.role === 'leader' || s.id === null || s.forceExclusive ? 'exclusive' : 'shared';
}

/** Lines 45-50: the role, checked against the lease. */
export function isLeader(s: DbState, now: number, timers: DbTimers): boolean {
  return s.role === 'leader' && s.leaseStart !== null && now - s.leaseStart < leaseMs(s, timers);
}

/** Tp × Max_mhb − μ, with the Tp last read. */
export function leaseMs(s: DbState, timers: DbTimers): number {
  return s.leaseRoundMs * timers.maxMissed - timers.muMs;
}

/** When the lease of the last committed round ends (null: never led). */
export function leaseEnd(s: DbState, timers: DbTimers): number | null {
  return s.leaseStart === null ? null : s.leaseStart + leaseMs(s, timers);
}

/** The transaction failed (rolled back, connection lost): nothing it decided holds (Reading 5). */
export function afterAbort(s: DbState): DbState {
  return { ...s, role: 'non_leader', forceExclusive: false, retrying: false };
}

/**
 * One round (lines 4-22) under `lock`, given the transaction's reads. `address` is this process's
 * descriptor address (its ip and port in the paper).
 */
export function runRound(
  s: DbState,
  lock: LockMode,
  vars: VarsRow,
  descriptors: readonly DescriptorRow[],
  now: number,
  timers: DbTimers,
  address: string,
): RoundOutcome {
  const writes: DbWrite[] = [];
  const exclusive = lock === 'exclusive';
  const byId = new Map(descriptors.map((d) => [d.id, d]));
  let evicted = s.evicted;
  let id: number;

  // updateCounter (lines 23-33).
  const mine = s.id === null ? undefined : byId.get(s.id);
  if (mine) {
    id = mine.id;
    writes.push({ op: 'update-counter', id, counter: mine.counter + 1 });
  } else {
    if (s.id !== null && !exclusive) {
      // Evicted (lines 27-31): retry at once with the exclusive lock; nothing else this round.
      return retryExclusive({ ...s, evicted: true }, vars, writes);
    }
    if (s.id !== null) evicted = true;
    const maxId = vars.maxId + 1;
    id = maxId;
    writes.push({ op: 'set-max-id', maxId }, { op: 'insert-descriptor', id, address });
    // Reading 3: the evict flag goes with the new id, under the exclusive lock.
    if (evicted) writes.push({ op: 'set-evict-flag' });
    evicted = false;
  }

  // DESCRIPTORS >> history (line 14, before the check: Reading 1). This process is alive to itself.
  const history = new Map<number, Seen>();
  for (const d of descriptors) {
    const before = s.history.get(d.id);
    const changed = before === undefined || before.counter !== d.counter;
    const missed = changed ? 0 : s.retrying ? before.missed : before.missed + 1; // Reading 2
    history.set(d.id, { counter: d.counter, missed });
  }
  history.set(id, { counter: (mine?.counter ?? -1) + 1, missed: 0 });
  const alive = [...history].filter(([, h]) => h.missed < timers.maxMissed).map(([pid]) => pid);
  const dead = [...history].filter(([, h]) => h.missed >= timers.maxMissed).map(([pid]) => pid);

  // leaderCheck (lines 34-44).
  const smallest = Math.min(...alive);
  let role: Role;
  let leader: number | null;
  let removed: number[] = [];
  if (smallest === id) {
    if (!exclusive) return retryExclusive({ ...s, id, evicted, history }, vars, writes); // Reading 4
    role = 'leader';
    leader = null;
    removed = dead;
    if (removed.length > 0) {
      writes.push({ op: 'delete-descriptors', ids: removed });
      for (const pid of removed) history.delete(pid);
    }
  } else {
    role = 'non_leader';
    leader = smallest;
  }

  // Lines 16-19: the round time, raised by the leader when an evicted process said so.
  let roundMs = vars.roundMs;
  if (role === 'leader' && vars.evictFlag) {
    roundMs += timers.deltaMs;
    writes.push({ op: 'set-round-time', roundMs, clearEvictFlag: true });
  }
  return {
    writes,
    next: {
      id,
      role,
      leader,
      forceExclusive: false,
      history,
      roundMs,
      leaseRoundMs: vars.roundMs,
      leaseStart: now, // line 20
      evicted,
      retrying: false,
    },
    sleepMs: roundMs,
    evicted: removed,
  };
}

/** Lines 29 and 38: commit what is safe and come back at once with the exclusive lock. */
function retryExclusive(s: DbState, vars: VarsRow, writes: DbWrite[]): RoundOutcome {
  return {
    writes,
    next: { ...s, forceExclusive: true, retrying: true, roundMs: vars.roundMs, leaseRoundMs: vars.roundMs },
    sleepMs: 0,
    evicted: [],
  };
}
