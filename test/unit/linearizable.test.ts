// The linearizability checker on histories written by hand, one per kind of violation and per
// rule of the format, and on seeded histories from a model register with violations planted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventType, HistoryEvent, OpKind, RegisterValue } from '../../src/vocabulary/history.js';
import { HistoryError, pairOperations, type Op } from '../../src/check/history-ops.js';
import { checkHistory } from '../../src/check/check-history.js';
import { generateHistory } from '../../src/check/history-generator.js';
import { REGISTER, type ModelName } from '../../src/check/register-model.js';
import { searchLinearization } from '../../src/check/linearizable.js';
import { zoneVerdict } from '../../src/check/register-zones.js';
import { Random } from '../../src/util/random.js';

type V = RegisterValue | readonly [RegisterValue, RegisterValue];

/**
 * An operation as [process, f, value, call, ret, result]: ret null is an info (in doubt); the
 * result is what a read returned, or 'fail'. Events are made in time order, one key 'x'.
 */
type Row = readonly [string, OpKind, V, number, number | null, (RegisterValue | 'fail')?];

function history(rows: readonly Row[]): HistoryEvent[] {
  const events: Array<HistoryEvent & { readonly o: number }> = [];
  for (const [process, f, value, call, ret, result] of rows) {
    events.push({
      type: 'invoke',
      process,
      f,
      key: 'x',
      value: f === 'read' ? null : value,
      time: call,
      o: 1,
    });
    if (ret === null) {
      events.push({ type: 'info', process, f, key: 'x', value, time: call + 1e6, o: 0 });
      continue;
    }
    const type: EventType = result === 'fail' ? 'fail' : 'ok';
    const v = f === 'read' && result !== 'fail' ? (result ?? null) : value;
    events.push({ type, process, f, key: 'x', value: v, time: ret, o: 0 });
  }
  events.sort((a, b) => a.time - b.time || a.o - b.o);
  return events.map(({ o: _o, ...e }) => e);
}

function ops(rows: readonly Row[]): Op[] {
  return pairOperations(history(rows).map((event, i) => ({ event, line: i + 1 })));
}

function check(rows: readonly Row[], model: ModelName = 'register') {
  return checkHistory(ops(rows), { model, budgetMs: 5_000 });
}

/** The counterexample as "process f value", by invoke. */
function shown(rows: readonly Row[], model: ModelName = 'register'): string[] {
  const r = check(rows, model);
  assert.equal(r.violated, 1, 'the key is violated');
  const cx = r.problems[0]!.counterexample!;
  assert.equal(cx.minimal, true);
  return cx.ops.map(
    (o) => `${o.process} ${o.f} ${o.f === 'read' ? String(o.output) : JSON.stringify(o.input)}`,
  );
}

test('a history one client at a time, and one with overlapping writes read either way, are linearizable', () => {
  const serial: Row[] = [
    ['a', 'read', null, 0, 1, null],
    ['a', 'write', '1', 2, 3],
    ['b', 'read', null, 4, 5, '1'],
    ['b', 'write', '2', 6, 7],
    ['a', 'read', null, 8, 9, '2'],
  ];
  assert.equal(check(serial).ok, 1);
  for (const seen of ['1', '2'] as const) {
    const r = check([
      ['a', 'write', '1', 0, 10],
      ['b', 'write', '2', 0, 10],
      ['c', 'read', null, 11, 12, seen],
      ['c', 'read', null, 13, 14, seen],
    ]);
    assert.equal(r.ok, 1, `the later write may be ${seen === '1' ? '2' : '1'}'s`);
  }
});

test('a stale read: a value read after another write completed over it', () => {
  assert.deepEqual(
    shown([
      ['a', 'write', '1', 0, 1],
      ['a', 'write', '2', 2, 3],
      ['b', 'read', null, 1.5, 1.8, '1'],
      ['b', 'read', null, 4, 5, '1'],
    ]),
    ['a write "1"', 'a write "2"', 'b read 1'],
  );
});

test('a read of a value nobody wrote is the whole counterexample', () => {
  assert.deepEqual(
    shown([
      ['a', 'write', '1', 0, 1],
      ['b', 'read', null, 2, 3, '7'],
    ]),
    ['b read 7'],
  );
});

test('a lost write: acknowledged, then read as if it never was', () => {
  assert.deepEqual(
    shown([
      ['a', 'write', '1', 0, 1],
      ['b', 'read', null, 2, 3, null],
    ]),
    ['a write "1"', 'b read null'],
  );
});

test('a read going back in time, and two values read in one order by one client and the other by another', () => {
  assert.deepEqual(
    shown([
      ['a', 'write', '1', 0, 10],
      ['b', 'write', '2', 0, 10],
      ['c', 'read', null, 11, 12, '2'],
      ['c', 'read', null, 13, 14, '1'],
    ]),
    ['a write "1"', 'b write "2"', 'c read 2', 'c read 1'],
  );
  const crossed = check([
    ['a', 'write', '1', 0, 1],
    ['b', 'write', '2', 0, 1],
    ['c', 'read', null, 2, 5, '1'],
    ['d', 'read', null, 2, 5, '2'],
    ['c', 'read', null, 6, 7, '2'],
    ['d', 'read', null, 6, 7, '1'],
  ]);
  assert.equal(crossed.violated, 1);
});

test('an info write may take effect any time after its invoke, or never; before its invoke it cannot', () => {
  const base: Row[] = [
    ['a', 'write', '1', 0, 1],
    ['b', 'write', '2', 2, null],
  ];
  assert.equal(check([...base, ['c', 'read', null, 10, 11, '2']]).ok, 1, 'took effect');
  assert.equal(check([...base, ['c', 'read', null, 10, 11, '1']]).ok, 1, 'never took effect');
  assert.equal(
    check([
      ['c', 'read', null, 0, 1, '2'],
      ...base.map((r) => [r[0], r[1], r[2], r[3] + 5, r[4] === null ? null : r[4] + 5] as Row),
    ]).violated,
    1,
  );
  // A failed write did not happen: reading its value is a violation.
  assert.equal(
    check([
      ['a', 'write', '1', 0, 1, 'fail'],
      ['b', 'read', null, 2, 3, '1'],
    ]).violated,
    1,
  );
});

test('cas-register: a cas takes effect only on its old value; a cas in a register history is bad input', () => {
  const ok: Row[] = [
    ['a', 'write', '1', 0, 1],
    ['a', 'cas', ['1', '2'], 2, 3],
    ['b', 'read', null, 4, 5, '2'],
  ];
  assert.equal(check(ok, 'cas-register').ok, 1);
  const wrong: Row[] = [
    ['a', 'write', '1', 0, 1],
    ['a', 'cas', ['3', '2'], 2, 3],
  ];
  assert.equal(check(wrong, 'cas-register').violated, 1);
  assert.throws(
    () => check(ok, 'register'),
    (e: unknown) => e instanceof HistoryError && e.line === 3,
  );
});

test('histories that break the format are refused with their line', () => {
  const e = (type: EventType, process: string, time: number, value: V = '1'): HistoryEvent => ({
    type,
    process,
    f: 'write',
    key: 'x',
    value,
    time,
  });
  const pair = (events: HistoryEvent[]) => () =>
    pairOperations(events.map((event, i) => ({ event, line: i + 1 })));
  assert.throws(pair([e('ok', 'a', 1)]), /line 1: ok of process a, which has no invoke open/);
  assert.throws(
    pair([e('invoke', 'a', 0), e('invoke', 'a', 1)]),
    /line 2: process a invokes again while its write of line 1/,
  );
  assert.throws(
    pair([e('invoke', 'a', 0), e('info', 'a', 1), e('invoke', 'a', 2)]),
    /line 3: process a invokes after its info of line 2/,
  );
  assert.throws(
    pair([e('invoke', 'a', 5), e('ok', 'a', 4)]),
    /line 2: completes at 4, before its invoke at 5/,
  );
});

test('seeded histories from a model register: exactly the planted keys are violated', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const g = generateHistory({ seed, ops: 4_000, keys: 40, processes: 8, violations: 3, inDoubt: 0.05 });
    const r = checkHistory(pairOperations(g.events.map((event, i) => ({ event, line: i + 1 }))), {
      model: 'register',
      budgetMs: 20_000,
    });
    assert.equal(r.unknown, 0, `seed ${seed}`);
    assert.deepEqual(
      r.problems.map((p) => p.key).sort(),
      [...g.planted.keys()].sort(),
      `seed ${seed}: ${[...g.planted.entries()].join(' ')}`,
    );
    for (const p of r.problems)
      assert.ok(
        p.counterexample && p.counterexample.ops.length <= 4,
        `${p.key}: ${p.counterexample?.ops.length}`,
      );
    const clean = generateHistory({ seed, ops: 4_000, keys: 40, processes: 8, inDoubt: 0.05 });
    const c = checkHistory(pairOperations(clean.events.map((event, i) => ({ event, line: i + 1 }))), {
      model: 'register',
      budgetMs: 20_000,
    });
    assert.equal(c.ok, c.keys, `seed ${seed}: nothing planted, every key linearizable`);
  }
});

test('a check out of time says unknown for the keys it did not decide, never linearizable', () => {
  const g = generateHistory({ seed: 9, ops: 500, keys: 5, processes: 4 });
  const r = checkHistory(pairOperations(g.events.map((event, i) => ({ event, line: i + 1 }))), {
    model: 'register',
    budgetMs: -1,
  });
  assert.equal(r.ok, 0);
  assert.equal(r.unknown, r.keys);
});

test('the zones and the search agree on every small history of unique writes, ties in time included', () => {
  const rnd = new Random(42);
  let violated = 0;
  for (let h = 0; h < 3_000; h++) {
    const n = rnd.int(2, 7);
    const written: string[] = [];
    const rows: Op[] = [];
    for (let i = 0; i < n; i++) {
      const call = rnd.int(0, 12);
      const ret = rnd.chance(0.1) ? Infinity : call + rnd.int(0, 6);
      const write = rnd.chance(0.5);
      if (write) written.push(`v${i}`);
      rows.push({
        index: i,
        line: i + 1,
        process: `p${i}`,
        f: write ? 'write' : 'read',
        key: 'x',
        input: write ? `v${i}` : null,
        // Reads of what was written (by anyone, before or after), of nothing yet, or of a ghost.
        output: write ? null : rnd.chance(0.2) ? null : rnd.chance(0.05) ? 'ghost' : `v${rnd.int(0, n - 1)}`,
        call,
        ret: write || ret !== Infinity ? ret : call + 1,
        status: ret === Infinity && write ? 'info' : 'ok',
      });
    }
    const zones = zoneVerdict(rows);
    assert.ok(zones, 'unique writes and no cas: the zones apply');
    const search = searchLinearization(rows, REGISTER);
    assert.equal(zones.verdict, search.verdict, JSON.stringify(rows));
    if (zones.verdict === 'violated') violated++;
  }
  // Both kinds of answer were tried, not one over and over.
  assert.ok(violated > 300 && violated < 2_700, `${violated} of 3000 violated`);
});

test('a search that outgrows its cache stops with unknown, however much time it has left', () => {
  // Twenty clients on one register writing 0-4: more places than the search can hold.
  const g = generateHistory({ seed: 1, ops: 20_000, keys: 1, processes: 20, values: 5 });
  const ops = pairOperations(g.events.map((event, i) => ({ event, line: i + 1 })));
  const t0 = performance.now();
  const r = searchLinearization(ops, REGISTER, Infinity, 50_000);
  assert.equal(r.verdict, 'unknown');
  assert.ok(performance.now() - t0 < 30_000);
});
