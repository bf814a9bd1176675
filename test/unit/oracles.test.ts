import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScoreContext } from '../../src/node/core/oracles/oracle.js';
import { compareHigherIsBetter, createHistoryOracle } from '../../src/node/core/oracles/history.js';
import { createPreferenceOracle } from '../../src/node/core/oracles/preference.js';
import { createRotatingOracle, rotatingChoice } from '../../src/node/core/oracles/rotating.js';
import { scoreGain } from '../../src/node/core/oracles/oracle.js';
import {
  OracleSpecError,
  UnknownOracleError,
  createOracle,
  knownOracleNames,
  registerOracle,
} from '../../src/node/core/oracles/registry.js';
import { zxid, type Zxid } from '../../src/vocabulary/zxid.js';

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
  // Started from the initial leader: p5 leads epoch 1, then p1, p2, ...
  assert.equal(rotatingChoice(1, MEMBERS, 'p5'), 'p5');
  assert.equal(rotatingChoice(2, MEMBERS, 'p5'), 'p1');
  assert.equal(rotatingChoice(7, MEMBERS, 'p5'), 'p1');
  assert.equal(rotatingChoice(2, MEMBERS, 'p3'), 'p4');
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

// ---------------------------------------------------------------- measured oracles

function measuredCtx(
  self: string,
  rtt: Record<string, number>,
  over: { rates?: Record<string, number>; excluded?: string[]; ready?: boolean; lastZxid?: Zxid } = {},
): ScoreContext {
  return {
    self,
    selfSid: MEMBERS.indexOf(self) + 1,
    epoch: 2,
    members: MEMBERS,
    lastZxid: over.lastZxid ?? zxid(1, 10),
    excluded: new Set(over.excluded ?? []),
    rttMs: new Map(Object.entries({ ...rtt, [self]: 0 })),
    requestRates: new Map(Object.entries(over.rates ?? {})),
    ...(over.ready !== undefined ? { measurementsReady: over.ready } : {}),
  };
}

test('measured oracles are registered; lower θ is better for consensus, latency and worst-case', () => {
  for (const name of ['consensus', 'latency', 'worst-case', 'request'])
    assert.ok(knownOracleNames().includes(name), name);
  const c = createOracle('consensus');
  assert.equal(c.measured, true);
  // p3: 0, 0.1, 9.88, 9.88, 53.26 → third smallest 9.88.
  const fast = c.score(measuredCtx('p3', { p1: 53.26, p2: 0.1, p4: 9.88, p5: 9.88 }));
  const slow = c.score(measuredCtx('p1', { p2: 53.26, p3: 53.26, p4: 77.06, p5: 77.06 }));
  assert.deepEqual(fast, [2, -9.88, 9.88]);
  assert.deepEqual(slow, [2, -53.26, 53.26]);
  assert.ok(c.compare(fast, slow) > 0);
  assert.ok(c.compare(slow, fast) < 0);
});

test('scores are rounded to the microsecond, so equal links tie and the sid decides', () => {
  const w = createOracle('worst-case');
  const a = w.score(measuredCtx('p2', { p3: 0.1, p4: 9.88, p1: 53.26 }));
  const b = w.score(measuredCtx('p3', { p2: 0.1, p4: 9.880000000000001, p1: 53.26 }));
  assert.equal(w.compare(a, b), 0);
  assert.deepEqual(a, [2, -63.14, 63.14]);
});

test('the excluded leader leaves RTT_i and F_i before scoring', () => {
  const w = createOracle('worst-case');
  const rtt = { p1: 77.06, p2: 9.88, p3: 9.88, p5: 0.1 };
  const withLeader = w.score(measuredCtx('p4', rtt));
  const withoutLeader = w.score(measuredCtx('p4', rtt, { excluded: ['p5'] }));
  // With p5: 0, 0.1, 9.88 → θc 9.88, max 77.06. Without: 0, 9.88, 9.88 → θc 9.88, max 77.06.
  assert.deepEqual(withLeader, [2, -86.94, 86.94]);
  assert.deepEqual(withoutLeader, [2, -86.94, 86.94]);
  const l = createOracle('latency');
  const rates = { p1: 0, p2: 0, p3: 0, p4: 0, p5: 1000 };
  // Only p5 gets requests: excluded, λT = 0 and θl = θc.
  assert.deepEqual(l.score(measuredCtx('p4', rtt, { rates, excluded: ['p5'] })), [2, -9.88, 9.88]);
  // Included: every request is p5's, 0.1 ms away.
  assert.deepEqual(l.score(measuredCtx('p4', rtt, { rates })), [2, -9.98, 9.98]);
});

test('a node without measurements scores as history below every measured score; no quorum ranks last', () => {
  const l = createOracle('latency');
  const unmeasured = l.score(measuredCtx('p4', { p1: 1 }, { ready: false, lastZxid: zxid(3, 9) }));
  assert.deepEqual(unmeasured, [1, 3, 9]);
  const noQuorum = l.score(measuredCtx('p4', { p1: 1 }));
  assert.deepEqual(noQuorum, [0]);
  const measured = l.score(measuredCtx('p4', { p1: 100, p2: 100, p3: 100 }));
  assert.ok(l.compare(measured, unmeasured) > 0);
  assert.ok(l.compare(unmeasured, noQuorum) > 0);
  assert.ok(l.compare([1, 3, 10], unmeasured) > 0, 'among unmeasured, the longer history wins');
});

test('request: higher θr is better and needs no RTTs', () => {
  const r = createOracle('request');
  assert.equal(r.measured, false);
  const busy = r.score({ ...ctx('p1'), requestRates: new Map([['p1', 500]]) });
  const idle = r.score(ctx('p2'));
  assert.deepEqual(busy, [2, 500, 500]);
  assert.deepEqual(idle, [2, 0, 0]);
  assert.ok(r.compare(busy, idle) > 0);
});

test('bands make scores within one class equivalent: "latency:10ms,history" is the fattest among the fastest', () => {
  const o = createOracle('latency:10ms,history');
  assert.equal(o.measured, true);
  const fastThin = o.score(measuredCtx('p3', { p1: 12, p2: 12, p4: 12 }, { lastZxid: zxid(2, 5) }));
  const fastFat = o.score(measuredCtx('p2', { p1: 17, p3: 17, p4: 17 }, { lastZxid: zxid(2, 9) }));
  const slowFat = o.score(measuredCtx('p4', { p1: 25, p2: 25, p3: 25 }, { lastZxid: zxid(3, 1) }));
  assert.ok(o.compare(fastFat, fastThin) > 0, '12 and 17 ms share the 10-20 ms band: history decides');
  assert.ok(o.compare(fastThin, slowFat) > 0, 'a faster band beats any history');
  const banded = createOracle('latency:10ms');
  assert.equal(
    banded.compare(
      banded.score(measuredCtx('p3', { p1: 12, p2: 12, p4: 12 })),
      banded.score(measuredCtx('p2', { p1: 19.9, p2: 19.9, p4: 19.9 })),
    ),
    0,
  );
  assert.equal(createOracle('request:100').compare([2, 3, 350], [2, 3, 399]), 0);
});

test('bad band arguments are spec errors that name the oracle', () => {
  assert.throws(
    () => createOracle('latency:10'),
    (e: unknown) => e instanceof OracleSpecError && /duration like "10ms"/.test(e.message),
  );
  assert.throws(() => createOracle('worst-case:fast'), OracleSpecError);
  assert.throws(() => createOracle('request:-5'), OracleSpecError);
  assert.equal(createOracle('consensus:1.5s').name, 'consensus:1.5s');
});

test('gain: how much better a score is, for the resignation margin', () => {
  const l = createOracle('latency');
  assert.ok(Math.abs(scoreGain(l, [2, -30, 30], [2, -40, 40]) - 0.25) < 1e-12);
  assert.equal(scoreGain(l, [2, -40, 40], [2, -30, 30]), 0);
  assert.equal(scoreGain(createOracle('history'), [3, 1], [2, 9]), Infinity);
  assert.equal(scoreGain(createOracle('history'), [2, 9], [3, 1]), 0);
  const combined = createOracle('latency:10ms,history');
  // Same band: history decides, and history has no scale.
  assert.equal(scoreGain(combined, [3, 2, -1, 12, 2, 2, 9], [3, 2, -1, 17, 2, 2, 5]), Infinity);
});
