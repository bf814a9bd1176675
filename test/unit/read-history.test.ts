// Histories read from their text: a run's JSON lines and Jepsen's EDN (a map per line, or one
// vector; independent keys; the nemesis's events left out), with bad input named by line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, readHistory } from '../../src/check/read-history.js';
import { HistoryError, pairOperations } from '../../src/check/history-ops.js';
import { checkHistory } from '../../src/check/check-history.js';
import { generateHistory, toEdn } from '../../src/check/history-generator.js';

const STALE_EDN = [
  '{:type :invoke, :f :write, :value 1, :process 0, :time 0, :index 0}',
  '{:type :ok, :f :write, :value 1, :process 0, :time 10, :index 1}',
  '{:type :invoke, :f :write, :value 2, :process 1, :time 20, :index 2}',
  '{:type :ok, :f :write, :value 2, :process 1, :time 30, :index 3}',
  '{:type :info, :f :start, :value nil, :process :nemesis, :time 35, :index 4}',
  '{:type :invoke, :f :read, :value nil, :process 2, :time 40, :index 5}',
  '{:type :ok, :f :read, :value 1, :process 2, :time 50, :index 6}',
].join('\n');

function checked(text: string) {
  return checkHistory(pairOperations(readHistory(text)), { model: 'register', budgetMs: 5_000 });
}

test('a Jepsen history with a stale read is violated, that read in the counterexample; fixed, linearizable', () => {
  assert.equal(detectFormat(STALE_EDN), 'edn');
  const r = checked(STALE_EDN);
  assert.equal(r.violated, 1);
  const cx = r.problems[0]!.counterexample!;
  assert.deepEqual(
    cx.ops.map((o) => [o.line, o.f, o.f === 'read' ? o.output : o.input]),
    [
      [1, 'write', '1'],
      [3, 'write', '2'],
      [6, 'read', '1'],
    ],
  );
  assert.equal(checked(STALE_EDN.replace(':value 1, :process 2', ':value 2, :process 2')).ok, 1);
});

test('one vector of maps keeps each map its line; independent keys are registers of their own', () => {
  const vec = [
    '[{:type :invoke, :f :write, :value [:a 1], :process 0, :time 0}',
    ' {:type :invoke, :f :read, :value [:b nil], :process 1, :time 1}',
    ' {:type :ok, :f :write, :value [:a 1], :process 0, :time 2}',
    ' {:type :ok, :f :read, :value [:b 3], :process 1, :time 3}]',
  ].join('\n');
  const r = checked(vec);
  assert.equal(r.keys, 2);
  assert.equal(r.ok, 1);
  assert.equal(r.problems[0]!.key, ':b');
  assert.equal(r.problems[0]!.counterexample!.ops[0]!.line, 2);
});

test('values of different types stay apart: 3 is not "3"', () => {
  const text = [
    '{:type :invoke, :f :write, :value "3", :process 0, :time 0}',
    '{:type :ok, :f :write, :value "3", :process 0, :time 1}',
    '{:type :invoke, :f :read, :value nil, :process 1, :time 2}',
    '{:type :ok, :f :read, :value 3, :process 1, :time 3}',
  ].join('\n');
  assert.equal(checked(text).violated, 1);
});

test('a run history (JSON lines) reads the same as its events', () => {
  const g = generateHistory({ seed: 3, ops: 300, keys: 4, processes: 4, violations: 1 });
  const jsonl = g.events.map((e) => JSON.stringify(e)).join('\n');
  assert.equal(detectFormat(jsonl), 'jsonl');
  const r = checked(jsonl);
  assert.deepEqual(
    r.problems.map((p) => p.key),
    [...g.planted.keys()],
  );
});

test("Jepsen-format histories from the model register, values 0-4 as Jepsen's register writes: the planted files only", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const g = generateHistory({
      seed,
      ops: 150,
      keys: 1,
      processes: 5,
      values: 5,
      violations: seed % 3 === 0 ? 1 : 0,
    });
    const r = checked(toEdn(g.events));
    assert.equal(r.unknown, 0);
    assert.equal(r.violated, g.planted.size, `seed ${seed}`);
  }
});

test('bad input is refused with its line and what is wrong', () => {
  const bad = (text: string, re: RegExp) =>
    assert.throws(
      () => pairOperations(readHistory(text)),
      (e: unknown) => e instanceof HistoryError && re.test(e.message),
    );
  bad(
    '{:type :ok, :f :write, :value 1, :process 0, :time 2}',
    /line 1: ok of process 0, which has no invoke open/,
  );
  bad(
    '{:type :invoke, :f :txn, :value 1, :process 0, :time 2}',
    /line 1: :f :txn is none of :read :write :cas/,
  );
  bad(
    '{:type :invoke, :f :write, :value 1, :process 0, :time 0}\n{:type :invoke, :f :write',
    /line 2: expected a map/,
  );
  bad('{"type":"invoke","process":"a","f":"write","key":"x","value":1,"time":0}', /line 1: value: /);
  bad('{"type":"invoke","process":"a","f":"write","key":"x","value":"1"}', /line 1: time: /);
});
