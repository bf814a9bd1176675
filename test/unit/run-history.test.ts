// A run's history from its agents' rows, checked against what the target promises: a violated
// promise fails the verdict (the promise's thresholds), an unpromised model is only shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DoneMessage } from '../../src/load/agent-protocol.js';
import { checkRunHistory, runHistory } from '../../src/run/run-history.js';
import { targetNamed } from '../../src/targets/registry.js';
import { evaluateThresholds } from '../../src/report/thresholds.js';
import { parseThresholds } from '../../src/vocabulary/thresholds.js';
import { verdictFor } from '../../src/report/result.js';
import { tagOf, writeTag } from '../../src/load/load-agent.js';

type Row = NonNullable<DoneMessage['history']>[number];

/** A stale read: w1 done, w2 done over it, then a read of w1. */
const STALE: Row[] = [
  ['a-w1', 'w', '/pb/a/1', 1000, 1010, 'run1-a:1'],
  ['a-w2', 'w', '/pb/a/1', 1020, 1030, 'run1-a:2'],
  ['b-r1', 'r', '/pb/a/1', 1040, 1050, 'run1-a:1'],
  ['b-r2', 'r', '/pb/a/2', 1041, null, null],
];

const done = (rows: Row[]) => [{ history: rows } as unknown as DoneMessage];

test('a stale read fails the verdict where the target promises linearizable reads, and is only shown where not', () => {
  const events = runHistory(done(STALE));
  assert.equal(events.length, 8);
  const etcd = checkRunHistory(events, targetNamed('etcd'), 1000);
  assert.deepEqual([etcd.broken, etcd.models[0]!.violated, etcd.models[0]!.promised], [1, 1, true]);
  assert.deepEqual(
    etcd.models[0]!.counterexample!.ops.map((o) => [o.process, o.invokedMs]),
    [
      ['a-w1', 0],
      ['a-w2', 20],
      ['b-r1', 40],
    ],
  );
  const held = evaluateThresholds(parseThresholds(['safety.broken == 0', 'safety.undecided == 0']), {
    safety: etcd,
  });
  assert.equal(verdictFor(false, held), 'threshold-failed');
  const pole = checkRunHistory(events, targetNamed('pole'), 1000);
  assert.deepEqual([pole.broken, pole.models[0]!.violated, pole.models[0]!.promised], [0, 1, false]);
  // ZooKeeper promises linearizable reads only after a sync; etcd's serializable reads not at all.
  assert.equal(checkRunHistory(events, targetNamed('zookeeper'), 1000).broken, 0);
  assert.equal(checkRunHistory(events, targetNamed('zookeeper'), 1000, 'sync').broken, 1);
  assert.equal(checkRunHistory(events, targetNamed('etcd'), 1000, 'serializable').broken, 0);
  assert.throws(() => checkRunHistory(events, targetNamed('pole'), 1000, 'sync'), /no read mode sync/);
  const fine = checkRunHistory(runHistory(done(STALE.slice(0, 2))), targetNamed('etcd'), 1000);
  assert.deepEqual([fine.broken, fine.models[0]!.ok], [0, 1]);
});

test("a write's tag is what a read of its bytes returns; an empty slot is nothing; other bytes a value no write wrote", () => {
  const tag = writeTag('run7-tud', 42);
  const data = Buffer.concat([Buffer.from(`${tag}\n`, 'latin1'), Buffer.alloc(900, 7)]);
  assert.equal(tagOf(data), 'run7-tud:42');
  assert.equal(tagOf(new Uint8Array(0)), null);
  assert.match(tagOf(Buffer.alloc(100, 7))!, /^untagged:/);
});

/**
 * One connection's reads of a key going back in time: w1 then w2 (w1 done before w2 began), a read
 * of w2 on connection b-0.1, then one of w1 on the same connection; another connection reading
 * w1 after w2 is stale, but not back in time on its own connection.
 */
const BACK: Row[] = [
  ['a-w1', 'w', '/pb/a/1', 1000, 1010, 'run1-a:1'],
  ['a-w2', 'w', '/pb/a/1', 1020, 1030, 'run1-a:2'],
  ['b-r1', 'r', '/pb/a/1', 1040, 1050, 'run1-a:2', 'b-0.1'],
  ['b-r2', 'r', '/pb/a/1', 1060, 1070, 'run1-a:1', 'b-0.1'],
  ['b-r3', 'r', '/pb/a/1', 1080, 1090, 'run1-a:1', 'b-1.1'],
];

test("a connection's read back in time breaks the session model, which every read path promises", () => {
  const events = runHistory(done(BACK));
  const pole = checkRunHistory(events, targetNamed('pole'), 1000);
  const [lin, session] = pole.models;
  assert.deepEqual([lin!.model, lin!.promised], ['linearizable', false]);
  assert.deepEqual(
    [session!.model, session!.promised, session!.ops, session!.keys, session!.violated],
    ['session', true, 3, 2, 1],
  );
  assert.equal(pole.broken, 1, 'held against POLE: it promises a connection its order');
  assert.deepEqual(
    session!.counterexample!.ops.map((o) => `${o.process} ${o.value}`),
    ['a-w1 run1-a:1', 'a-w2 run1-a:2', 'b-r1 on b-0.1 run1-a:2', 'b-r2 on b-0.1 run1-a:1'],
  );
  // The same reads on two connections: stale for linearizability, in order for each connection.
  const apart = runHistory(done(BACK.map((r, i) => (i === 3 ? ([...r.slice(0, 6), 'b-0.2'] as Row) : r))));
  const ok = checkRunHistory(apart, targetNamed('pole'), 1000);
  assert.deepEqual([ok.broken, ok.models[1]!.violated, ok.models[0]!.violated], [0, 0, 1]);
});

test('writes that overlap may take effect in either order: reading one after the other is not back in time', () => {
  const rows: Row[] = [
    ['a-w1', 'w', '/pb/a/1', 1000, 1030, 'run1-a:1'],
    ['a-w2', 'w', '/pb/a/1', 1010, 1040, 'run1-a:2'],
    ['b-r1', 'r', '/pb/a/1', 1050, 1055, 'run1-a:2', 'b-0.1'],
    ['b-r2', 'r', '/pb/a/1', 1060, 1065, 'run1-a:1', 'b-0.1'],
    // Nothing written, read after a write was seen: back in time.
    ['b-r3', 'r', '/pb/a/2', 1000, 1001, null, 'b-0.1'],
    ['a-w3', 'w', '/pb/a/2', 1002, 1003, 'run1-a:3'],
    ['b-r4', 'r', '/pb/a/2', 1010, 1011, 'run1-a:3', 'b-0.1'],
    ['b-r5', 'r', '/pb/a/2', 1020, 1021, null, 'b-0.1'],
  ];
  const s = checkRunHistory(runHistory(done(rows)), targetNamed('etcd'), 1000, 'serializable').models[1]!;
  assert.deepEqual([s.keys, s.violated], [2, 1]);
  assert.equal(s.counterexample!.key, '/pb/a/2');
  assert.deepEqual(
    s.counterexample!.ops.map((o) => o.value),
    ['run1-a:3', 'run1-a:3', null],
  );
});
