import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScoreContext } from '../../src/node/core/oracles/oracle.js';
import { compareHigherIsBetter, createHistoryOracle } from '../../src/node/core/oracles/history.js';
import { createPreferenceOracle } from '../../src/node/core/oracles/preference.js';
import { createRotatingOracle, rotatingChoice } from '../../src/node/core/oracles/rotating.js';
import {
  OracleSpecError,
  UnknownOracleError,
  createOracle,
  knownOracleNames,
  registerOracle,
} from '../../src/node/core/oracles/registry.js';
import { zxid, type Zxid } from '../../src/node/core/zxid.js';

const MEMBERS = ['p1', 'p2', 'p3', 'p4', 'p5'];

function ctx(
  self: string,
  over: { epoch?: number; lastZxid?: Zxid; rttMs?: Map<string, number> } = {},
): ScoreContext {
  return {
    self,
    selfSid: MEMBERS.indexOf(self) + 1,
    epoch: over.epoch ?? 1,
    members: MEMBERS,
    lastZxid: over.lastZxid ?? zxid(0, 0),
    excluded: new Set(),
    ...(over.rttMs ? { rttMs: over.rttMs } : {}),
  };
}

test('history: the last zxid is the score, higher epoch first, then higher counter', () => {
  const h = createHistoryOracle();
  assert.equal(h.name, 'history');
  const a = h.score(ctx('p1', { lastZxid: zxid(3, 1) }));
  const b = h.score(ctx('p2', { lastZxid: zxid(2, 900) }));
  const c = h.score(ctx('p3', { lastZxid: zxid(3, 7) }));
  assert.deepEqual(a, [3, 1]);
  assert.ok(h.compare(a, b) > 0, 'a newer epoch beats a longer older one');
  assert.ok(h.compare(c, a) > 0);
  assert.ok(h.compare(a, c) < 0);
  assert.equal(h.compare(a, [3, 1]), 0); // equal zxids: the proposal order's sid decides
});

test('compareHigherIsBetter is lexicographic', () => {
  assert.equal(compareHigherIsBetter([1, 5], [2, 0]), -1);
  assert.equal(compareHigherIsBetter([2, 0], [1, 5]), 1);
  assert.equal(compareHigherIsBetter([2, 2], [2, 2]), 0);
  assert.equal(compareHigherIsBetter([2, 2, 1], [2, 2]), 1);
});

test('rotating: epoch e favours member ((e − 1) mod n), in configuration order', () => {
  const r = createRotatingOracle();
  assert.equal(r.name, 'rotating');
  assert.deepEqual(r.score(ctx('p1', { epoch: 1 })), [1]);
  assert.deepEqual(r.score(ctx('p2', { epoch: 1 })), [0]);
  assert.deepEqual(r.score(ctx('p3', { epoch: 3 })), [1]);
  assert.deepEqual(r.score(ctx('p1', { epoch: 6 })), [1]); // wraps round after n epochs
  assert.equal(rotatingChoice(0, MEMBERS), 'p5'); // epoch 0 maps to the last member, not undefined
  assert.equal(rotatingChoice(12, MEMBERS), 'p2');
  assert.equal(rotatingChoice(1, []), undefined);
  for (let e = 1; e <= 10; e++) {
    const favoured = MEMBERS.filter((m) => r.score(ctx(m, { epoch: e }))[0] === 1);
    assert.equal(favoured.length, 1, `exactly one member is favoured in epoch ${e}`);
  }
  assert.ok(r.compare([1], [0]) > 0);
});

test('preference: score n − rank for the listed, 0 for the others, higher better', () => {
  const p = createPreferenceOracle(['p4', 'p2', 'p5']);
  assert.equal(p.name, 'preference');
  assert.deepEqual(p.score(ctx('p4')), [3]);
  assert.deepEqual(p.score(ctx('p2')), [2]);
  assert.deepEqual(p.score(ctx('p5')), [1]);
  assert.deepEqual(p.score(ctx('p1')), [0]);
  assert.ok(p.compare(p.score(ctx('p4')), p.score(ctx('p2'))) > 0);
  assert.ok(p.compare(p.score(ctx('p1')), p.score(ctx('p5'))) < 0);
  assert.throws(() => createPreferenceOracle(['p1', 'p1']), /twice/);
  assert.throws(() => createPreferenceOracle([]), /empty/);
});

test('registry: the built-in oracles by name', () => {
  for (const name of ['history', 'preference', 'rotating']) assert.ok(knownOracleNames().includes(name));
  assert.equal(createOracle('history').name, 'history');
  assert.equal(createOracle(' rotating ').name, 'rotating');
  const pref = createOracle('preference', { preference: ['p3'] });
  assert.deepEqual(pref.score(ctx('p3')), [1]);
});

test('registry: unknown names throw UnknownOracleError naming the known ones', () => {
  assert.throws(
    () => createOracle('fastest'),
    (err: unknown) => {
      assert.ok(err instanceof UnknownOracleError);
      assert.ok(err instanceof OracleSpecError);
      assert.equal(err.spec, 'fastest');
      assert.equal(err.oracle, 'fastest');
      assert.match(err.message, /fastest/);
      for (const name of knownOracleNames()) assert.ok(err.message.includes(name), `message lists ${name}`);
      return true;
    },
  );
  // In a combined spec the whole spec is kept, and the unknown part named.
  assert.throws(
    () => createOracle('history,nope:3'),
    (err: unknown) =>
      err instanceof UnknownOracleError && err.spec === 'history,nope:3' && err.oracle === 'nope',
  );
});

test('registry: malformed specs and missing options are OracleSpecErrors', () => {
  assert.throws(() => createOracle('history:5'), OracleSpecError);
  assert.throws(() => createOracle('history,,rotating'), OracleSpecError);
  assert.throws(() => createOracle(''), OracleSpecError);
  assert.throws(() => createOracle('preference'), /preference list/);
  assert.throws(() => createOracle('preference', { preference: ['p1', 'p1'] }), OracleSpecError);
});

test('registry: registerOracle adds a table entry that receives its argument', () => {
  // A stand-in for a measured oracle: max RTT in bands of `arg` ms, lower is better.
  registerOracle('test-band', ({ spec, arg }) => {
    const band = Number(arg ?? '1');
    return {
      name: spec,
      score: (c) => [Math.floor(Math.max(0, ...(c.rttMs?.values() ?? [])) / band)],
      compare: (a, b) => (b[0] ?? 0) - (a[0] ?? 0),
    };
  });
  assert.ok(knownOracleNames().includes('test-band'));
  const o = createOracle('test-band:10');
  assert.equal(o.name, 'test-band:10');
  assert.deepEqual(o.score(ctx('p1', { rttMs: new Map([['p2', 37]]) })), [3]);
  assert.throws(() => registerOracle('test-band', () => createHistoryOracle()), /registered already/);
  assert.throws(() => registerOracle('Bad Name', () => createHistoryOracle()), /oracle name/);
});

test('registry: a combined spec compares part by part, the first part that differs decides', () => {
  registerOracle('test-rtt', ({ spec, arg }) => {
    const band = Number(arg ?? '1');
    return {
      name: spec,
      score: (c) => [Math.floor((c.rttMs?.get('p9') ?? 0) / band)],
      compare: (a, b) => (b[0] ?? 0) - (a[0] ?? 0), // lower is better
    };
  });
  const o = createOracle('test-rtt:10, history');
  assert.equal(o.name, 'test-rtt:10,history');
  // "The fattest among the fastest": 12 ms and 17 ms share a band, so history decides between them.
  const fastThin = o.score(ctx('p1', { rttMs: new Map([['p9', 12]]), lastZxid: zxid(2, 5) }));
  const fastFat = o.score(ctx('p2', { rttMs: new Map([['p9', 17]]), lastZxid: zxid(2, 9) }));
  const slowFat = o.score(ctx('p3', { rttMs: new Map([['p9', 25]]), lastZxid: zxid(3, 0) }));
  assert.ok(o.compare(fastFat, fastThin) > 0);
  assert.ok(o.compare(fastThin, slowFat) > 0, 'the first part wins over a better history');
  assert.ok(o.compare(slowFat, fastFat) < 0);
  assert.equal(o.compare(fastFat, fastFat), 0);
});
