import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OracleSpecError } from '../../src/node/core/oracles/registry.js';
import {
  candidateTable,
  modelSummary,
  predictElected,
  predictLatency,
  type CandidateRow,
} from '../../src/topology/model.js';
import { parseTopology, type Topology } from '../../src/topology/topology.js';

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'topologies', 'paper-2dc.yaml'))) {
    const up = dirname(dir);
    assert.notEqual(up, dir, 'no topologies/ above the test file');
    dir = up;
  }
  return dir;
}

/** A shipped topology, optionally with its share line replaced (the paper's request mixes). */
function shipped(name: string, share?: string): Topology {
  const file = join(repoRoot(), 'topologies', `${name}.yaml`);
  let text = readFileSync(file, 'utf8');
  if (share !== undefined) {
    const replaced = text.replace(/^ {2}share: .*$/m, `  share: ${share}`);
    assert.notEqual(replaced, text, `${name} has no share line`);
    text = replaced;
  }
  return parseTopology(file, text);
}

const elect = (t: Topology, oracle: string): string => predictElected(t, oracle, ['p5']).leader;

function row(rows: readonly CandidateRow[], id: string): CandidateRow {
  const r = rows.find((x) => x.id === id);
  assert.ok(r, `no row for ${id}`);
  return r;
}

describe('predictLatency', () => {
  it('is RTT to the leader plus its consensus latency, averaged over each data center', () => {
    const t = shipped('paper-3dc-deployment-1');
    // p5 at caltech: θc = 9.88 (quorum p5, p4 and one slac server).
    assert.deepEqual(predictLatency(t, 'p5'), { caltech: 9.88, slac: 19.76, fnal: 86.94 });
    // p1 alone at fnal leading (everyone up): θc = 53.26 (p1 + the two slac servers).
    assert.deepEqual(predictLatency(t, 'p1'), { caltech: 130.32, slac: 106.52, fnal: 53.26 });
  });

  it('averages a data center over its servers, and drops dead servers from the quorum', () => {
    const t = shipped('paper-2dc');
    // p5 at cern: the quorum p3, p4, p5 is all local, θc = 0.
    assert.deepEqual(predictLatency(t, 'p5'), { tud: 20.75, cern: 0 });
    // p4 after p5 is lost: the quorum needs a tud server, θc = 20.75.
    assert.deepEqual(predictLatency(t, 'p4', ['p1', 'p2', 'p3', 'p4']), { tud: 41.5, cern: 20.75 });
  });

  it('leaves out a data center with no live server, and refuses a leader without a quorum', () => {
    const t = shipped('paper-3dc-deployment-1');
    assert.deepEqual(Object.keys(predictLatency(t, 'p4', ['p2', 'p3', 'p4', 'p5'])), ['caltech', 'slac']);
    assert.throws(() => predictLatency(t, 'p4', ['p4', 'p5']), /cannot reach a quorum/);
    assert.throws(() => predictLatency(t, 'p4', ['p1', 'p2', 'p3']), /not among the live servers/);
    assert.throws(() => predictLatency(t, 'p9'), /no node "p9"/);
  });
});

describe('candidateTable', () => {
  it('scores every survivor with the paper formulas over N′', () => {
    const rows = candidateTable(shipped('paper-3dc-deployment-1'), ['p5']);
    assert.deepEqual(
      rows.map((r) => r.id),
      ['p1', 'p2', 'p3', 'p4'],
    );
    const p4 = row(rows, 'p4');
    assert.equal(p4.datacenter, 'caltech');
    assert.equal(p4.consensusMs, 9.88);
    assert.equal(p4.worstCaseMs, 86.94);
    // θl = θc + Σ θr(r)·RTT(p4, r) / λT over N′: rates 333.3 (p1), 166.7 (p2, p3, p4).
    const lambda = 1000 / 3 + 3 * (1000 / 6);
    const expected = 9.88 + ((1000 / 3) * 77.06 + 2 * (1000 / 6) * 9.88) / lambda;
    assert.ok(Math.abs((p4.latencyMs ?? NaN) - expected) < 0.001, `θl ${p4.latencyMs} vs ${expected}`);
    assert.ok(Math.abs(p4.requestRate - 1000 / 6) < 0.001);
    assert.deepEqual(p4.predictedMs, { caltech: 9.88, slac: 19.76, fnal: 86.94 });
    const p3 = row(rows, 'p3');
    assert.equal(p3.consensusMs, 9.88);
    assert.equal(p3.worstCaseMs, 63.14);
    assert.deepEqual(p3.predictedMs, { caltech: 19.76, slac: 9.88, fnal: 63.14 });
    const p1 = row(rows, 'p1');
    assert.equal(p1.consensusMs, 53.26);
    assert.equal(p1.worstCaseMs, 130.32);
  });

  it('gives nulls to candidates that cannot reach a quorum', () => {
    const rows = candidateTable(shipped('paper-3dc-deployment-1'), ['p5', 'p4', 'p3']);
    for (const r of rows) {
      assert.equal(r.consensusMs, null);
      assert.equal(r.latencyMs, null);
      assert.equal(r.worstCaseMs, null);
      assert.deepEqual(r.predictedMs, {});
    }
  });
});

describe('predictElected: the paper set-ups', () => {
  it('deployment 1, even mix, p5 killed: worst-case p3, history p4, consensus p4 (3-way tie, sid)', () => {
    const t = shipped('paper-3dc-deployment-1');
    assert.equal(elect(t, 'worst-case'), 'p3');
    assert.equal(elect(t, 'history'), 'p4');
    const consensus = predictElected(t, 'consensus', ['p5']);
    assert.equal(consensus.leader, 'p4');
    // p2, p3 and p4 all score θc = 9.88: the tie goes to the highest sid.
    const best = ['p2', 'p3', 'p4'].map((id) => consensus.scores[id]);
    assert.deepEqual(best[0], best[1]);
    assert.deepEqual(best[1], best[2]);
  });

  it('deployment 2, even mix: worst-case p4', () => {
    assert.equal(elect(shipped('paper-3dc-deployment-2'), 'worst-case'), 'p4');
  });

  it('all requests at D3 (fnal, p1): request and latency pick p1 in deployment 1', () => {
    const t = shipped('paper-3dc-deployment-1', '{ caltech: 0, slac: 0, fnal: 1 }');
    assert.equal(elect(t, 'request'), 'p1');
    assert.equal(elect(t, 'latency'), 'p1');
  });

  it('all requests at D3 in deployment 2: request p1, but latency p4 (fnal is far from a quorum)', () => {
    const t = shipped('paper-3dc-deployment-2', '{ slac: 0, caltech: 0, fnal: 1 }');
    assert.equal(elect(t, 'request'), 'p1');
    assert.equal(elect(t, 'latency'), 'p4');
  });

  it('rotating starts from the initial leader (p5) in epoch 1 and picks the next member, p1, in epoch 2', () => {
    const t = shipped('paper-3dc-deployment-1');
    const after = predictElected(t, 'rotating', ['p5']);
    assert.equal(after.epoch, 2);
    assert.equal(after.leader, 'p1', "the paper's rotating: the next id modulo the number of servers");
    assert.equal(predictElected(t, 'rotating', []).leader, 'p5');
    assert.equal(predictElected(t, 'rotating', ['p5'], { epoch: 3 }).leader, 'p2');
    // The favoured member is the one lost: nobody scores, the sid decides.
    assert.equal(predictElected(t, 'rotating', ['p1'], { epoch: 2 }).leader, 'p5');
  });

  it('history with nobody lost picks the highest sid; combined oracles use each part in turn', () => {
    const t = shipped('paper-3dc-deployment-1');
    assert.equal(predictElected(t, 'history', []).leader, 'p5');
    // Bands of 100 ms put every θl in one class; history (then sid) decides.
    assert.equal(elect(t, 'latency:100ms,history'), 'p4');
    assert.equal(elect(t, 'latency'), 'p3');
  });

  it('throws the registry error for a bad spec', () => {
    assert.throws(() => predictElected(shipped('paper-2dc'), 'fastest', ['p5']), OracleSpecError);
  });
});

describe('modelSummary', () => {
  it('gives the initial leader before, every candidate after, and each oracle’s choice', () => {
    const m = modelSummary(shipped('paper-3dc-deployment-1'));
    assert.equal(m.oracle, 'worst-case');
    assert.equal(m.initialLeader, 'p5');
    assert.equal(m.initialLeaderConfigured, true);
    assert.deepEqual(m.excluded, ['p5']);
    assert.deepEqual(m.before.predictedMs, { caltech: 9.88, slac: 19.76, fnal: 86.94 });
    assert.deepEqual(
      m.after.map((r) => r.id),
      ['p1', 'p2', 'p3', 'p4'],
    );
    assert.deepEqual(Object.fromEntries(m.elections.map((e) => [e.oracle, e.leader])), {
      history: 'p4',
      rotating: 'p1', // the next after the initial leader p5, as the paper's
      consensus: 'p4',
      latency: 'p3',
      'worst-case': 'p3',
      request: 'p1',
    });
    const wc = m.elections.find((e) => e.oracle === 'worst-case');
    assert.deepEqual(wc?.predictedMs, { caltech: 19.76, slac: 9.88, fnal: 63.14 });
  });

  it('adds an oracle given instead of the topology’s own', () => {
    const m = modelSummary(shipped('paper-2dc'), 'latency:10ms,history');
    assert.equal(m.oracle, 'latency:10ms,history');
    assert.equal(m.elections.at(-1)?.oracle, 'latency:10ms,history');
    assert.equal(m.elections.length, 7);
  });
});
