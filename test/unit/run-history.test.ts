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
