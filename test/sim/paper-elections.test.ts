// The paper's set-ups (section 4.1, placements as in shared/design/pole-algorithm.md), run through
// the deterministic WAN simulation of the real node cores: heartbeats measure the RTTs, clients
// write at the paper's mixes, p5 (the initial leader) is killed, and each oracle must elect the
// server the paper's reasoning (sections 4.2-4.3) says it elects.
import { isEvent } from '../../src/vocabulary/node-events.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  runWanSimulation,
  type WanNode,
  type WanResult,
  type WanScenario,
} from '../../src/node/sim/wan-simulation.js';

const RTT: Record<string, number> = {
  'caltech|slac': 9.88,
  'cern|tud': 20.75,
  'fnal|slac': 53.26,
  'caltech|fnal': 77.06,
};
/** Inside a data center: 0.1 ms round trip (the paper's "about 100 µs"). */
const LAN_RTT = 0.1;

function setup(placement: Record<string, string[]>): WanNode[] {
  const nodes: WanNode[] = [];
  for (const [dc, ids] of Object.entries(placement))
    for (const id of ids) nodes.push({ id, sid: Number(id.slice(1)), datacenter: dc });
  return nodes.sort((a, b) => a.sid - b.sid);
}

const TWO_DC = setup({ tud: ['p1', 'p2'], cern: ['p3', 'p4', 'p5'] });
const D = (d1: string, d2: string, d3: string) =>
  setup({ [d1]: ['p4', 'p5'], [d2]: ['p2', 'p3'], [d3]: ['p1'] });
const DEPLOYMENT = {
  1: D('caltech', 'slac', 'fnal'),
  2: D('slac', 'caltech', 'fnal'),
  3: D('slac', 'fnal', 'caltech'),
};

/** λT spread over data centers by weight, and within one uniformly over its servers. */
function mix(nodes: WanNode[], total: number, weights: Record<string, number>): Map<string, number> {
  const sum = Object.values(weights).reduce((a, b) => a + b, 0);
  const rates = new Map<string, number>();
  for (const n of nodes) {
    const inDc = nodes.filter((m) => m.datacenter === n.datacenter).length;
    rates.set(n.id, (total * (weights[n.datacenter] ?? 0)) / sum / inDc);
  }
  return rates;
}
const even = (nodes: WanNode[]) =>
  mix(nodes, 300, Object.fromEntries([...new Set(nodes.map((n) => n.datacenter))].map((dc) => [dc, 1])));
const onlyIn = (nodes: WanNode[], dc: string) => mix(nodes, 300, { [dc]: 1 });

/** The paper's links and the timers every case here uses, with whatever a case changes. */
function scenario(nodes: WanNode[], over: Partial<WanScenario>): WanScenario {
  return {
    nodes,
    oneWayMs: (a, b) =>
      a.datacenter === b.datacenter
        ? LAN_RTT / 2
        : (RTT[[a.datacenter, b.datacenter].sort().join('|')] as number) / 2,
    oracle: 'history',
    timers: { tickMs: 100, syncLimit: 5, initLimit: 10, electionTimeoutMs: 200, retryBaseMs: 200 },
    heartbeat: { periodMs: 100, window: 10, missLimit: 3, rateWindowMs: 1000, minSamples: 3 },
    requestRates: new Map(),
    endMs: 8000,
    ...over,
  };
}

function run(nodes: WanNode[], oracle: string, rates: Map<string, number>, jitter = 0): WanResult {
  return runWanSimulation(
    scenario(nodes, {
      jitter,
      oracle,
      initialLeader: 'p5',
      requestRates: rates,
      killLeaderAtMs: 4000,
      seed: 7,
    }),
  );
}

function elects(nodes: WanNode[], oracle: string, rates: Map<string, number>): WanResult {
  const r = run(nodes, oracle, rates);
  assert.equal(r.before, 'p5', 'p5 leads before the kill');
  assert.equal(r.killed, 'p5');
  assert.notEqual(r.after, undefined, 'a new leader serves after the kill');
  assert.ok(r.acked > 0);
  return r;
}

test('two data centers (tud-cern), even mix: every request-unaware oracle ties and the sid elects p4', () => {
  for (const oracle of ['history', 'consensus', 'worst-case']) {
    assert.equal(elects(TWO_DC, oracle, even(TWO_DC)).after, 'p4', oracle);
  }
});

test('two data centers, all requests in tud: request and latency elect p2 (tud), history p4', () => {
  const rates = onlyIn(TWO_DC, 'tud');
  assert.equal(elects(TWO_DC, 'latency', rates).after, 'p2');
  assert.equal(elects(TWO_DC, 'request', rates).after, 'p2');
  assert.equal(elects(TWO_DC, 'history', rates).after, 'p4');
});

test('two data centers, all requests in cern: latency and request stay in cern (p4)', () => {
  const rates = onlyIn(TWO_DC, 'cern');
  assert.equal(elects(TWO_DC, 'latency', rates).after, 'p4');
  assert.equal(elects(TWO_DC, 'request', rates).after, 'p4');
});

test('deployment 1, even mix: worst-case elects p3, history p4, consensus p4 (a tie), latency p3', () => {
  const nodes = DEPLOYMENT[1];
  const r = elects(nodes, 'worst-case', even(nodes));
  assert.equal(r.after, 'p3');
  // The election's proposals carry the measured scores: θw(p3) = 9.88 + 53.26, θw(p4) = 9.88 + 77.06.
  const last = r.elections[r.elections.length - 1]!;
  assert.equal(last.leader, 'p3');
  assert.ok(Math.abs((last.proposals.p3?.[2] ?? NaN) - 63.14) < 0.01, JSON.stringify(last.proposals));
  assert.ok(Math.abs((last.proposals.p4?.[2] ?? NaN) - 86.94) < 0.01, JSON.stringify(last.proposals));
  assert.equal(elects(nodes, 'history', even(nodes)).after, 'p4');
  assert.equal(elects(nodes, 'consensus', even(nodes)).after, 'p4');
  assert.ok(['p2', 'p3'].includes(elects(nodes, 'latency', even(nodes)).after!));
});

test('deployment 1, all requests at D3 (fnal): request and latency elect p1', () => {
  const nodes = DEPLOYMENT[1];
  assert.equal(elects(nodes, 'request', onlyIn(nodes, 'fnal')).after, 'p1');
  assert.equal(elects(nodes, 'latency', onlyIn(nodes, 'fnal')).after, 'p1');
});

test('deployment 1, all requests in slac: request elects a slac server', () => {
  const nodes = DEPLOYMENT[1];
  assert.ok(['p2', 'p3'].includes(elects(nodes, 'request', onlyIn(nodes, 'slac')).after!));
});

test('deployment 2: worst-case elects p4; all requests at fnal: request p1 but latency p4', () => {
  const nodes = DEPLOYMENT[2];
  assert.equal(elects(nodes, 'worst-case', even(nodes)).after, 'p4');
  assert.equal(elects(nodes, 'request', onlyIn(nodes, 'fnal')).after, 'p1');
  assert.equal(elects(nodes, 'latency', onlyIn(nodes, 'fnal')).after, 'p4');
});

test('deployment 3, even mix: worst-case and latency elect p4', () => {
  const nodes = DEPLOYMENT[3];
  assert.equal(elects(nodes, 'worst-case', even(nodes)).after, 'p4');
  assert.equal(elects(nodes, 'latency', even(nodes)).after, 'p4');
});

test('combined "worst-case:100ms,history": deployment 1 puts p3 and p4 in one band, so history picks p4', () => {
  // θw: p3 63.14, p4 86.94, both in [0, 100): the fattest (equal) → highest sid among the fastest.
  const nodes = DEPLOYMENT[1];
  assert.equal(elects(nodes, 'worst-case:100ms,history', even(nodes)).after, 'p4');
  assert.equal(elects(nodes, 'worst-case:10ms,history', even(nodes)).after, 'p3');
});

test('measured RTT_i matches the configured links, jitter included', () => {
  const nodes = DEPLOYMENT[1];
  const r = run(nodes, 'worst-case', even(nodes), 0.02);
  const p4 = r.rttAtKill.get('p4')!;
  assert.ok(Math.abs(p4.get('p1')! - 77.06) / 77.06 < 0.02, `p4→p1 ${p4.get('p1')}`);
  assert.ok(Math.abs(p4.get('p2')! - 9.88) / 9.88 < 0.02, `p4→p2 ${p4.get('p2')}`);
  assert.equal(p4.get('p4'), 0);
  // p2 and p3 are equal but for the jitter: either slac server is right.
  assert.ok(['p2', 'p3'].includes(r.after!));
});

test('resignation: a leader that sees a clearly better follower steps down for it', () => {
  // Deployment 1 under worst-case, everybody included (resignation scores keep the live leader):
  // p5 (caltech) RTTs 0, 0.1, 9.88, 9.88, 77.06 → θw = 9.88 + 77.06 = 86.94;
  // p3 (slac)    RTTs 0, 0.1, 9.88, 9.88, 53.26 → θw = 9.88 + 53.26 = 63.14, 27 % better.
  const nodes = DEPLOYMENT[1];
  const base = scenario(nodes, {
    oracle: 'worst-case',
    initialLeader: 'p5',
    requestRates: even(nodes),
    endMs: 5000,
  });
  const off = runWanSimulation(base);
  assert.equal(off.after, 'p5', 'resignation is off by default');
  const on = runWanSimulation({ ...base, resign: { margin: 0.1, checks: 3, holdMs: 1000 } });
  assert.equal(on.after, 'p3');
  const resigned = on.events.map((e) => e.event).filter(isEvent('resigned'));
  assert.equal(resigned.length, 1, 'one resignation, then the better leader stays');
  assert.equal(resigned[0]?.successor, 'p3');
  assert.ok(on.acked > off.acked * 0.8, 'writes keep flowing across the hand-over');
  const tooStrict = runWanSimulation({ ...base, resign: { margin: 0.5, checks: 3, holdMs: 1000 } });
  assert.equal(tooStrict.after, 'p5', 'a 27 % gain is not worth a 50 % margin');
});

test('first election without an initial leader: a measured oracle waits for RTTs, or falls back to history and says so', () => {
  const nodes = DEPLOYMENT[1];
  const base = scenario(nodes, { oracle: 'worst-case', endMs: 3000 });
  const waited = runWanSimulation(base);
  // All five alive: θw(p2) = θw(p3) = 63.14 beats caltech's 86.94 and fnal's 130.32.
  assert.equal(waited.elections[0]?.leader, 'p3');
  assert.equal(waited.elections[0]?.proposals.p3?.[0], 2, 'p3 was elected on a measured score');
  // Only fnal's p1, slowest to get its round trips, may be drawn into the election unmeasured.
  const early = waited.events.filter((e) => e.event.ev === 'oracle-fallback').map((e) => e.node);
  assert.ok(
    early.every((id) => id === 'p1'),
    early.join(),
  );
  assert.ok(waited.elections[0]!.at >= 200, 'three round trips to a quorum come first');

  const impatient = runWanSimulation({ ...base, measurementWaitMs: 50 });
  const fallbacks = impatient.events.map((e) => e.event).filter(isEvent('oracle-fallback'));
  assert.ok(fallbacks.length >= 3, 'every node that scored itself unmeasured says so');
  assert.equal(fallbacks[0]?.fallback, 'history');
  // Unmeasured everywhere: history scores, all empty, so the highest sid wins.
  assert.equal(impatient.elections[0]?.leader, 'p5');
});
