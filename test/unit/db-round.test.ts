// The NewSQL paper's round (src/election/db/db-round.ts) on a fake clock and an in-memory table:
// joining with monotonically increasing ids, the leader check, eviction of the dead, an evicted
// process rejoining and the leader raising Tp by Δ, and the lease running out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  PAPER_TIMERS,
  initialState,
  isLeader,
  leaseEnd,
  lockFor,
  runRound,
  afterAbort,
  type DbState,
  type DbWrite,
  type DescriptorRow,
  type RoundOutcome,
  type VarsRow,
} from '../../src/election/db/db-round.js';

const T = PAPER_TIMERS; // Tp 2 s, Max_mhb 2, Δ 50 ms, μ 100 ms

/** The two tables, applying a round's writes as its committed transaction would. */
class MemDb {
  vars: VarsRow = { maxId: 0, roundMs: T.roundMs, evictFlag: false };
  rows = new Map<number, DescriptorRow>();
  apply(writes: readonly DbWrite[]): void {
    for (const w of writes) {
      if (w.op === 'update-counter') {
        const r = this.rows.get(w.id);
        assert.ok(r, `update of a missing descriptor ${w.id}`);
        this.rows.set(w.id, { ...r, counter: w.counter });
      } else if (w.op === 'insert-descriptor')
        this.rows.set(w.id, { id: w.id, counter: 0, address: w.address });
      else if (w.op === 'set-max-id') this.vars = { ...this.vars, maxId: w.maxId };
      else if (w.op === 'set-evict-flag') this.vars = { ...this.vars, evictFlag: true };
      else if (w.op === 'set-round-time') this.vars = { ...this.vars, roundMs: w.roundMs, evictFlag: false };
      else for (const id of w.ids) this.rows.delete(id);
    }
  }
}

class Proc {
  state: DbState = initialState(T);
  constructor(readonly name: string) {}
  /** One round at `now`, committed; follows an immediate retry (sleep 0) like the driver does. */
  round(db: MemDb, now: number): RoundOutcome[] {
    const outs: RoundOutcome[] = [];
    for (let i = 0; i < 3; i++) {
      const out = runRound(
        this.state,
        lockFor(this.state),
        db.vars,
        [...db.rows.values()],
        now + i,
        T,
        this.name,
      );
      db.apply(out.writes);
      this.state = out.next;
      outs.push(out);
      if (out.sleepMs > 0) break;
    }
    return outs;
  }
}

describe('the NewSQL round', () => {
  it('join: ids 1, 2, 3 in order of first rounds, under the exclusive lock; the smallest leads', () => {
    const db = new MemDb();
    const ps = ['a', 'b', 'c'].map((n) => new Proc(n));
    assert.equal(lockFor(ps[0]!.state), 'exclusive', 'a new process takes the exclusive lock');
    ps.forEach((p, i) => p.round(db, i * 10));
    assert.deepEqual(
      ps.map((p) => p.state.id),
      [1, 2, 3],
    );
    assert.equal(db.vars.maxId, 3);
    assert.deepEqual(
      ps.map((p) => p.state.role),
      ['leader', 'non_leader', 'non_leader'],
    );
    assert.equal(ps[1]!.state.leader, 1);
    assert.equal(lockFor(ps[1]!.state), 'shared', 'an ordinary process takes the shared lock');
    assert.equal(lockFor(ps[0]!.state), 'exclusive', 'the leader keeps the exclusive lock');
    assert.equal(ps[0]!.round(db, 2_000)[0]!.sleepMs, 2_000, 'rounds are Tp apart');
  });

  it('leader check: after the leader stops, the next smallest suspects it after Max_mhb unchanged reads, retries with the exclusive lock, leads and evicts it', () => {
    const db = new MemDb();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => new Proc(n)) as [Proc, Proc, Proc];
    let now = 0;
    for (const p of [a, b, c]) p.round(db, now);
    now += 2_000;
    for (const p of [a, b, c]) p.round(db, now);
    // a stops (crashed after its round at 2 s): b and c read its counter unchanged from now on.
    now += 2_000;
    for (const p of [b, c]) p.round(db, now);
    assert.equal(b.state.role, 'non_leader', 'one unchanged read is not enough (Max_mhb = 2)');
    assert.ok(db.rows.has(1));
    now += 2_000;
    const outs = b.round(db, now);
    assert.deepEqual(
      outs.map((o) => o.sleepMs),
      [0, 2_000],
      'the check finds b smallest under a shared lock: retry at once with the exclusive one',
    );
    assert.equal(b.state.role, 'leader');
    assert.deepEqual(outs[1]!.evicted, [1]);
    assert.ok(!db.rows.has(1), 'the dead leader is evicted');
    c.round(db, now + 5);
    assert.equal(c.state.leader, 2);
    assert.ok(isLeader(b.state, now + 10, T));
  });

  it('a retry round does not count as a missed heartbeat of anybody', () => {
    const vars: VarsRow = { maxId: 3, roundMs: 2_000, evictFlag: false };
    const rows: DescriptorRow[] = [
      { id: 1, counter: 5, address: 'a' },
      { id: 2, counter: 7, address: 'b' },
    ];
    const seen = new Map([
      [1, { counter: 5, missed: 1 }],
      [2, { counter: 6, missed: 0 }],
    ]);
    const base: DbState = { ...initialState(T), id: 2, history: seen };
    // A regular round: 1's counter unchanged a second time → dead, and 2 is the smallest alive.
    const regular = runRound(base, 'shared', vars, rows, 4_000, T, 'b');
    assert.equal(regular.sleepMs, 0, 'smallest under a shared lock: retry');
    assert.equal(regular.next.history.get(1)!.missed, 2);
    // The same read in an immediate retry: nobody could have written since, so no miss is counted.
    const retry = runRound({ ...base, retrying: true }, 'exclusive', vars, rows, 4_001, T, 'b');
    assert.equal(retry.next.history.get(1)!.missed, 1);
    assert.equal(retry.next.role, 'non_leader');
    assert.equal(retry.next.leader, 1);
  });

  it('eviction and the evict flag: a slow process evicted rejoins with a new id and raises the flag; the leader raises Tp by Δ and clears it', () => {
    const db = new MemDb();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => new Proc(n)) as [Proc, Proc, Proc];
    let now = 0;
    for (const p of [a, b, c]) p.round(db, now);
    // c is slow: it misses two of a's rounds, and a evicts it.
    for (let i = 0; i < 3; i++) {
      now += 2_000;
      for (const p of [a, b]) p.round(db, now);
    }
    assert.ok(!db.rows.has(3), 'c evicted');
    assert.equal(c.state.id, 3);
    // c comes back: its shared round finds no descriptor, retries exclusively, rejoins as 4 with the flag.
    const outs = c.round(db, now + 100);
    assert.equal(outs.length, 2);
    assert.deepEqual(outs[0]!.writes, [], 'nothing written under the shared lock');
    assert.deepEqual(
      outs[1]!.writes.map((w) => w.op),
      ['set-max-id', 'insert-descriptor', 'set-evict-flag'],
    );
    assert.equal(c.state.id, 4);
    assert.equal(db.vars.evictFlag, true);
    assert.equal(c.state.role, 'non_leader');
    // The leader's next round: Tp += Δ, flag cleared; everybody reads the new Tp after.
    const [lead] = a.round(db, now + 2_000);
    assert.equal(lead!.sleepMs, 2_050);
    assert.deepEqual(db.vars, { maxId: 4, roundMs: 2_050, evictFlag: false });
    b.round(db, now + 2_010);
    assert.equal(b.state.roundMs, 2_050);
  });

  it('lease: isLeader() holds for Tp × Max_mhb − μ after the round began, with the Tp read in it', () => {
    const db = new MemDb();
    const a = new Proc('a');
    a.round(db, 10_000);
    assert.equal(leaseEnd(a.state, T), 10_000 + 2 * 2_000 - 100);
    assert.equal(isLeader(a.state, 13_899, T), true);
    assert.equal(isLeader(a.state, 13_900, T), false, 'the lease ran out: a slow leader yields by itself');
    // The round that raises Tp leases with the Tp it read (2 s), not the raised one.
    db.vars = { ...db.vars, evictFlag: true };
    a.round(db, 14_000);
    assert.equal(a.state.roundMs, 2_050);
    assert.equal(leaseEnd(a.state, T), 14_000 + 3_900);
  });

  it('a failed round leaves no leader behind', () => {
    const db = new MemDb();
    const a = new Proc('a');
    a.round(db, 0);
    assert.equal(a.state.role, 'leader');
    const s = afterAbort(a.state);
    assert.equal(s.role, 'non_leader');
    assert.equal(isLeader(s, 1, T), false);
    assert.equal(lockFor(s), 'shared');
  });
});
