// The session model, weaker than linearizability: one connection's reads of a key never go back in
// time. A read that completed before another of the same connection and key was invoked must not
// have seen a newer write than the later one sees. "Newer" is only what real time shows: a write
// that completed before another was invoked is older; writes that overlap may take effect in
// either order, and no read of theirs is held against the other. A value read before anything
// was written (null) is older than every write. Reads with no session, and reads of values no
// write of the history wrote (the linearizability check's to find), are left out.
import type { Op } from './history-ops.js';

/** Two reads of one connection and key, the later seeing an older write than the earlier. */
export interface SessionViolation {
  readonly session: string;
  readonly key: string;
  readonly earlier: Op;
  readonly later: Op;
  /** The writes the two reads saw (undefined: nothing written yet). */
  readonly earlierWrite: Op | undefined;
  readonly laterWrite: Op | undefined;
}

export interface SessionCheck {
  /** Connections with reads. */
  readonly sessions: number;
  /** Reads checked (completed, on a connection, of a value written in the history or of nothing). */
  readonly reads: number;
  /** Pairs of (connection, key) with reads, and those with a read back in time. */
  readonly pairs: number;
  readonly violatedPairs: number;
  /** The first violation, by the later read's invoke. */
  readonly first: SessionViolation | undefined;
  readonly seconds: number;
}

export function checkSessionReads(ops: readonly Op[]): SessionCheck {
  const started = performance.now();
  const writes = new Map<string, Op>();
  for (const o of ops)
    if (o.f === 'write' && typeof o.input === 'string') writes.set(`${o.key}\u0000${o.input}`, o);
  const groups = new Map<string, Op[]>();
  let reads = 0;
  for (const o of ops) {
    if (o.f !== 'read' || o.status !== 'ok' || o.session === undefined) continue;
    if (o.output !== null && !writes.has(`${o.key}\u0000${o.output}`)) continue;
    reads++;
    const g = `${o.session}\u0000${o.key}`;
    const list = groups.get(g);
    if (list) list.push(o);
    else groups.set(g, [o]);
  }
  const sessions = new Set([...groups.values()].map((l) => l[0]!.session));
  const writeOf = (r: Op): Op | undefined =>
    r.output === null ? undefined : writes.get(`${r.key}\u0000${r.output}`);
  let violatedPairs = 0;
  let first: SessionViolation | undefined;
  for (const list of groups.values()) {
    const v = firstBackInTime(list, writeOf);
    if (!v) continue;
    violatedPairs++;
    if (!first || v.later.call < first.later.call) first = v;
  }
  return {
    sessions: sessions.size,
    reads,
    pairs: groups.size,
    violatedPairs,
    first,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * The first read of `list` (one connection, one key) that sees an older write than a read of
 * theirs that completed before it was invoked. Walks the reads by invoke, taking in each earlier
 * read once it has completed, and keeps the newest write seen so far: the one invoked last (a
 * later read is back in time when its write completed before that one was invoked).
 */
function firstBackInTime(
  list: readonly Op[],
  writeOf: (r: Op) => Op | undefined,
): SessionViolation | undefined {
  const byCall = [...list].sort((a, b) => a.call - b.call);
  const byRet = [...list].sort((a, b) => a.ret - b.ret);
  let taken = 0;
  let newest: { read: Op; write: Op | undefined } | undefined;
  for (const later of byCall) {
    while (taken < byRet.length && byRet[taken]!.ret < later.call) {
      const r = byRet[taken++]!;
      const w = writeOf(r);
      if (!newest || (w !== undefined && (newest.write === undefined || w.call > newest.write.call)))
        newest = { read: r, write: w };
    }
    if (!newest || newest.write === undefined) continue;
    const w = writeOf(later);
    const older = w === undefined || w.ret < newest.write.call;
    if (older)
      return {
        session: later.session!,
        key: later.key,
        earlier: newest.read,
        later,
        earlierWrite: newest.write,
        laterWrite: w,
      };
  }
  return undefined;
}
