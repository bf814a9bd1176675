import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  consensusScore,
  latencyScore,
  measuredScores,
  quorumSize,
  viewFromMatrix,
  without,
  worstCaseScore,
} from '../../src/node/core/oracles/score-formulas.js';

const close = (a: number | undefined, b: number, msg?: string): void => {
  assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${msg ?? ''} expected ${b}, got ${a}`);
};

// Deployment 1 of the paper: caltech {p4, p5}, slac {p2, p3}, fnal {p1}.
const DC: Record<string, string> = { p1: 'fnal', p2: 'slac', p3: 'slac', p4: 'caltech', p5: 'caltech' };
const DC_RTT: Record<string, number> = { 'caltech|slac': 9.88, 'fnal|slac': 53.26, 'caltech|fnal': 77.06 };
function rtt(a: string, b: string): number {
  const x = DC[a] as string;
  const y = DC[b] as string;
  if (x === y) return 0;
  return DC_RTT[[x, y].sort().join('|')] as number;
}
const IDS = ['p1', 'p2', 'p3', 'p4', 'p5'];
const MATRIX = new Map(IDS.map((a) => [a, new Map(IDS.map((b) => [b, rtt(a, b)]))]));

test('quorum is ⌊n/2⌋+1 of the configured membership', () => {
  assert.equal(quorumSize(5), 3);
  assert.equal(quorumSize(4), 3);
  assert.equal(quorumSize(3), 2);
});

test('θc is the quorum-th smallest RTT, self (0) included', () => {
  // p4 with p5 excluded: 0 (self), 9.88, 9.88, 77.06 → third smallest 9.88
  const v = viewFromMatrix('p4', MATRIX, ['p1', 'p2', 'p3', 'p4']);
  close(consensusScore(v.rttMs, 5), 9.88);
  // p1: 0, 53.26, 53.26, 77.06 → 53.26
  close(consensusScore(viewFromMatrix('p1', MATRIX, ['p1', 'p2', 'p3', 'p4']).rttMs, 5), 53.26);
  // With everybody alive p4 reaches a quorum inside caltech plus slac: 0, 0, 9.88 → 9.88
  close(consensusScore(viewFromMatrix('p4', MATRIX, IDS).rttMs, 5), 9.88);
});

test('θc is undefined when fewer than a quorum of servers are reachable (a missing node)', () => {
  const rttMs = new Map([
    ['p1', 0],
    ['p2', 5],
  ]);
  assert.equal(consensusScore(rttMs, 5), undefined);
  assert.equal(latencyScore({ rttMs }, 5), undefined);
  assert.equal(worstCaseScore(rttMs, 5), undefined);
  // The same two plus a third: a quorum of 5 again.
  close(consensusScore(new Map([...rttMs, ['p4', 7]]), 5), 7);
});

test('θw = θc + the largest RTT: deployment 1 after p5 dies prefers p2/p3 (a tie) over p4 and p1', () => {
  const alive = ['p1', 'p2', 'p3', 'p4'];
  const w = (id: string): number | undefined => worstCaseScore(viewFromMatrix(id, MATRIX, alive).rttMs, 5);
  close(w('p4'), 9.88 + 77.06);
  close(w('p3'), 9.88 + 53.26);
  close(w('p2'), 9.88 + 53.26);
  close(w('p1'), 53.26 + 77.06);
});

test('θl weights each RTT by the share of requests arriving there; λT sums over N′ only', () => {
  // Even mix per data center: fnal 1/3 on p1, slac 1/6 on each of p2 p3, caltech 1/6 on p4 p5.
  const rates = new Map([
    ['p1', 1000 / 3],
    ['p2', 1000 / 6],
    ['p3', 1000 / 6],
    ['p4', 1000 / 6],
    ['p5', 1000 / 6],
  ]);
  const alive = ['p1', 'p2', 'p3', 'p4'];
  const l = (id: string): number | undefined => latencyScore(viewFromMatrix(id, MATRIX, alive, rates), 5);
  // p5's share is left out with p5, so λT = 5000/6.
  const lt = 5000 / 6;
  close(l('p4'), 9.88 + ((1000 / 6) * 9.88 * 2 + (1000 / 3) * 77.06) / lt);
  close(l('p3'), 9.88 + ((1000 / 6) * 9.88 + (1000 / 3) * 53.26) / lt);
  close(l('p1'), 53.26 + ((1000 / 6) * 53.26 * 2 + (1000 / 6) * 77.06) / lt);
  assert.ok((l('p3') as number) < (l('p4') as number));
});

test('θl with no requests anywhere equals θc (λT = 0 does not divide by zero)', () => {
  const v = viewFromMatrix('p4', MATRIX, IDS, new Map(IDS.map((id) => [id, 0])));
  close(latencyScore(v, 5), consensusScore(v.rttMs, 5) as number);
});

test('all requests in one data center: θl favours the server there when it can still reach a quorum', () => {
  // Deployment 1, every request at p1 (fnal): p1 pays no forwarding, p3 pays 53.26.
  const rates = new Map(IDS.map((id) => [id, id === 'p1' ? 1000 : 0]));
  const alive = ['p1', 'p2', 'p3', 'p4'];
  const s = (id: string) => measuredScores(id, viewFromMatrix(id, MATRIX, alive, rates), 5);
  close(s('p1').latency, 53.26);
  close(s('p3').latency, 9.88 + 53.26);
  close(s('p4').latency, 9.88 + 77.06);
  assert.equal(s('p1').request, 1000);
  assert.equal(s('p2').request, 0);
});

test('without() removes the excluded leader, and viewFromMatrix rejects a matrix with a hole', () => {
  const m = without(
    new Map([
      ['p1', 1],
      ['p5', 2],
    ]),
    new Set(['p5']),
  );
  assert.deepEqual([...m.keys()], ['p1']);
  const holey = new Map([['p1', new Map([['p2', 1]])]]);
  assert.throws(() => viewFromMatrix('p1', holey, ['p1', 'p2', 'p3']), /p1 → p3/);
});
