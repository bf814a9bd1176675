// The faults leader election fears, as a topology file writes them (one-way cuts, bridges, rings
// of majorities, minorities, rolling restarts, `for`) and as a nemesis draws them from a seed; the
// shapes they cut; and the model's view of a cluster they split.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTopology } from '../../src/topology/topology.js';
import { loadTopologyForRun } from '../../src/run/run-overrides.js';
import { InputError } from '../../src/util/input-error.js';
import { bridgeHalves, drawMinority, interleaved } from '../../src/topology/fault-shapes.js';
import { ringCuts } from '../../src/util/majority.js';
import { majorityOf } from '../../src/util/majority.js';
import { membersWith, statesOver } from '../../src/report/cluster-as-it-stands.js';
import { Random } from '../../src/util/random.js';
import type { FaultMark } from '../../src/vocabulary/names.js';

const file = (scenario: string): string => `name: n
datacenters:
  - { name: a, nodes: [p1, p2] }
  - { name: b, nodes: [p3, p4, p5] }
links:
  - { between: [a, b], rtt: 10ms }
scenario:
  duration: 60s
  warmup: 5s
${scenario}`;

function fails(text: string): InputError {
  try {
    parseTopology('n.yaml', text);
  } catch (err) {
    assert.ok(err instanceof InputError, String(err));
    return err;
  }
  assert.fail('expected the topology to be rejected');
}

const row = (f: { atMs: number; action: string; target: string; ref?: number; undoes?: number }): string =>
  `${f.atMs / 1000} ${f.action} ${f.target}${f.ref ? ` #${f.ref}` : ''}${f.undoes ? ` undoes #${f.undoes}` : ''}`;

/** The members each sees in a ring (itself included): the cuts' complement, member by member. */
function ringViews(order: readonly string[]): Map<string, string[]> {
  const cut = new Set(ringCuts(order).flatMap(([a, b]) => [`${a}|${b}`, `${b}|${a}`]));
  return new Map(order.map((a) => [a, order.filter((b) => a === b || !cut.has(`${a}|${b}`))]));
}

describe('fault shapes', () => {
  it('a ring of majorities: each member sees a majority, no two the same, and under 4 members there is none', () => {
    for (const n of [4, 5, 6, 7, 9]) {
      const order = Array.from({ length: n }, (_, i) => `p${i + 1}`);
      const views = ringViews(order);
      const seen = [...views.values()].map((v) => [...v].sort().join(','));
      for (const v of views.values())
        assert.ok(v.length >= majorityOf(n) && v.length < n, `${n}: ${v.join(',')}`);
      assert.equal(new Set(seen).size, n, `${n} members: ${seen.join(' | ')}`);
    }
    assert.deepEqual(ringCuts(['p1', 'p2', 'p3']), []);
  });

  it('a bridge splits the others in halves that each make a majority with it', () => {
    assert.deepEqual(bridgeHalves(['p1', 'p2', 'p3', 'p4', 'p5'], 'p3'), [
      ['p1', 'p2'],
      ['p4', 'p5'],
    ]);
    const [x, y] = bridgeHalves(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'], 'p1');
    assert.equal(x.length + 1, majorityOf(7));
    assert.equal(y.length + 1, majorityOf(7));
  });

  it('interleaves data centers, and draws a minority the same way from the same seed', () => {
    assert.deepEqual(
      interleaved([
        ['p1', 'p2'],
        ['p3', 'p4', 'p5'],
      ]),
      ['p1', 'p3', 'p2', 'p4', 'p5'],
    );
    const members = ['p1', 'p2', 'p3', 'p4', 'p5'];
    assert.deepEqual(drawMinority(members, new Random(3)), drawMinority(members, new Random(3)));
    assert.equal(drawMinority(members, new Random(3)).length, 2);
    assert.equal(drawMinority(['p1', 'p2', 'p3'], new Random(3)).length, 1);
  });
});

describe('topology: the faults leader election fears', () => {
  it('for undoes a fault: a restart of what a kill took, a heal of its own cuts, with every copy paired', () => {
    const t = parseTopology(
      'n.yaml',
      file(`  faults:
    - { at: 10s, kill: leader, for: 3s }
    - { at: 12s, oneway: p3, for: 2s }
    - { at: 20s, pause: minority, for: 1s, every: 15s }
    - { at: 30s, ring: auto, for: 5s }
    - { at: 40s, bridge: leader, for: 4s }
    - { at: 50s, roll: all }`),
    );
    assert.deepEqual(t.scenario.faults.map(row), [
      '10 kill leader #1',
      '12 oneway p3 #2',
      '13 restart leader undoes #1',
      '14 heal p3 undoes #2',
      '20 pause minority #3',
      '21 resume minority undoes #3',
      '30 ring p1,p3,p2,p4,p5 #6',
      '35 pause minority #4',
      '35 heal p1,p3,p2,p4,p5 undoes #6',
      '36 resume minority undoes #4',
      '40 bridge leader #7',
      '44 heal leader undoes #7',
      '50 pause minority #5',
      '50 roll all',
      '51 resume minority undoes #5',
    ]);
  });

  it('refuses, at the field: for on what cannot be undone, a minority without for or on a cut, a ring that is none', () => {
    const forHeal = fails(file('  faults:\n    - { at: 10s, heal: all, for: 2s }'));
    assert.equal(forHeal.field, 'scenario.faults[0].for');
    assert.match(forHeal.problem, /a heal is not undone/);
    assert.match(fails(file('  faults:\n    - { at: 10s, pause: minority }')).problem, /add for/);
    assert.match(
      fails(file('  faults:\n    - { at: 10s, isolate: minority, for: 1s }')).problem,
      /"minority" is for kill and pause, not isolate/,
    );
    const small = fails(
      file('  faults:\n    - { at: 10s, ring: auto }').replace('nodes: [p3, p4, p5]', 'nodes: [p3]'),
    );
    assert.equal(small.field, 'scenario.faults[0].ring');
    assert.match(small.problem, /needs 4 members or more \(there are 3\)/);
    const wrong = fails(file('  faults:\n    - { at: 10s, ring: [p1, p2, p3, p4, p9] }'));
    assert.match(wrong.problem, /not members: p9; missing: p5/);
    assert.equal(wrong.line, 11);
    assert.match(
      fails(file('  faults:\n    - { at: 10s, bridge: p9 }')).problem,
      /"p9" is neither "leader" nor a node/,
    );
    assert.match(
      fails(file('  faults:\n    - { at: 10s, roll: all }').replace('p1, p2', 'minority, p2')).problem,
      /"minority" is reserved/,
    );
  });

  it('a nemesis draws the same schedule from the same seed, another from another, each fault undone inside the run', () => {
    const nemesis = (seed: number): string =>
      `  nemesis: { mix: [kill-leader, pause-minority, oneway-leader, bridge, ring, partition], every: 8s, for: 3s, seed: ${seed} }`;
    const a = parseTopology('n.yaml', file(nemesis(1)));
    const again = parseTopology('n.yaml', file(nemesis(1)));
    const b = parseTopology('n.yaml', file(nemesis(2)));
    assert.deepEqual(a.scenario.faults, again.scenario.faults);
    assert.notDeepEqual(a.scenario.faults.map(row), b.scenario.faults.map(row));
    const starts = a.scenario.faults.filter((f) => f.undoes === undefined);
    assert.deepEqual(
      starts.map((f) => f.atMs),
      // The last leaves the settle time (10 s) before the end.
      [13_000, 21_000, 29_000, 37_000, 45_000],
    );
    for (const f of starts) {
      assert.ok(f.drawn);
      const undo = a.scenario.faults.find((g) => g.undoes === f.ref);
      assert.ok(undo, `${row(f)} is undone`);
      assert.equal(undo.atMs, f.atMs + 3_000);
      if (f.target === 'minority') assert.equal(f.nodes?.length, 2);
    }
    assert.deepEqual(a.scenario.nemesis, {
      mix: ['kill-leader', 'pause-minority', 'oneway-leader', 'bridge', 'ring', 'partition'],
      everyMs: 8_000,
      forMs: 3_000,
      seed: 1,
    });
  });

  it('a drawn roll gets room for every member to restart before the next fault, and the end', () => {
    const draw = (seed: number, mix: string): ReturnType<typeof parseTopology>['scenario']['faults'] =>
      parseTopology(
        'n.yaml',
        file(`  duration: 120s\n  nemesis: { mix: [${mix}], every: 8s, for: 3s, seed: ${seed} }`).replace(
          '  duration: 60s\n',
          '',
        ),
      ).scenario.faults;
    // Five members, 6 s each: 30 s after a roll before anything else, and 30 s before the settle.
    let rolls = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const faults = draw(seed, 'roll, kill, pause-minority');
      faults.forEach((f, i) => {
        if (f.action !== 'roll') return;
        rolls++;
        assert.ok(f.atMs + 30_000 <= 120_000 - 10_000, `seed ${seed}: ${row(f)} ends before the settle`);
        const next = faults[i + 1];
        if (next) assert.ok(next.atMs >= f.atMs + 30_000, `seed ${seed}: ${row(next)} after ${row(f)}`);
      });
    }
    assert.ok(rolls >= 10, `the seeds drew ${rolls} rolls`);
    // A mix of rolls alone: one every 32 s (the first 8 s instant past 30 s of room) while one fits.
    assert.deepEqual(draw(1, 'roll').map(row), ['13 roll all', '45 roll all', '77 roll all']);
  });
  it('a nemesis whose faults outlast their period, or that has no room, is refused at its field', () => {
    const long = fails(file('  nemesis: { mix: [kill-leader], every: 5s, for: 5s }'));
    assert.equal(long.field, 'scenario.nemesis.for');
    const unknown = fails(file('  nemesis: { mix: [kill-everyone], every: 5s }'));
    assert.equal(unknown.field, 'scenario.nemesis.mix[0]');
    const roomless = fails(file('  nemesis: { mix: [kill-leader], every: 50s }'));
    assert.match(roomless.problem, /no fault fits/);
  });

  it('--duration draws the nemesis again over the run it gives, from the same seed', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pole-bench-nemesis-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'n.yaml');
    writeFileSync(path, file('  nemesis: { mix: [kill-leader, bridge], every: 10s, seed: 4 }'));
    const long = loadTopologyForRun(path, { duration: '120s' });
    const short = loadTopologyForRun(path, { duration: '30s' });
    const starts = (t: typeof long): number[] =>
      t.scenario.faults.filter((f) => f.undoes === undefined).map((f) => f.atMs);
    assert.deepEqual(starts(short), [15_000]);
    assert.equal(starts(long).length, 10);
    assert.deepEqual(long.scenario.faults.slice(0, 2), short.scenario.faults);
    assert.equal(loadTopologyForRun(path, { killAt: '10s' }).scenario.nemesis, undefined);
  });
});

describe('the model over a split cluster', () => {
  const t = parseTopology('n.yaml', file('  faults:\n    - { at: 10s, bridge: p3, for: 2s }'));
  const mark = (
    atS: number,
    action: FaultMark['action'],
    node: string,
    more: Partial<FaultMark> = {},
  ): FaultMark => ({
    atS,
    action,
    node,
    ...more,
  });
  const quorumAt = (marks: FaultMark[], s: number, leader: string): string[] =>
    membersWith(t, statesOver(t, marks, s, s + 0.5)[0]!.state, leader);

  it('a bridge parts the halves: the leader counts on its half and the bridge', () => {
    const marks = [mark(10, 'bridge', 'p3', { ref: 1 }), mark(12, 'heal', 'p3', { undoes: 1 })];
    assert.deepEqual(quorumAt(marks, 11, 'p1'), ['p1', 'p2', 'p3']);
    assert.deepEqual(quorumAt(marks, 11, 'p5'), ['p3', 'p4', 'p5']);
    assert.deepEqual(quorumAt(marks, 12.5, 'p5'), ['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('a ring leaves each leader its neighbours; a one-way cut takes its member out until its own heal', () => {
    const ring = [mark(10, 'ring', 'p1,p2,p3,p4,p5', { ref: 1 })];
    assert.deepEqual(quorumAt(ring, 11, 'p1'), ['p1', 'p2', 'p5']);
    const marks = [
      mark(10, 'oneway', 'p5', { ref: 1 }),
      mark(11, 'partition', 'a', { ref: 2 }),
      mark(12, 'heal', 'a', { undoes: 2 }),
      mark(13, 'heal', 'p5', { undoes: 1 }),
    ];
    assert.deepEqual(quorumAt(marks, 10.5, 'p3'), ['p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(quorumAt(marks, 11.5, 'p3'), ['p3', 'p4']);
    assert.deepEqual(quorumAt(marks, 12.5, 'p3'), ['p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(quorumAt(marks, 13.5, 'p3'), ['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('a minority killed together is down together, and back together', () => {
    const marks = [mark(10, 'kill', 'p1,p4', { ref: 1 }), mark(12, 'restart', 'p1,p4', { undoes: 1 })];
    assert.deepEqual(quorumAt(marks, 11, 'p3'), ['p2', 'p3', 'p5']);
    assert.deepEqual(quorumAt(marks, 12.5, 'p3'), ['p1', 'p2', 'p3', 'p4', 'p5']);
  });
});
