// What a fault acts on when it strikes (chaos/fault-target.ts), on the paper's deployment 1:
// caltech = {p4, p5}, slac = {p2, p3}, fnal = {p1}; "leader" and "killed" resolved at that moment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveFault, type FaultMoment } from '../../src/chaos/fault-target.js';
import type { FaultSpec } from '../../src/topology/topology-schema.js';
import { parseTopology } from '../../src/topology/topology.js';
import { Random } from '../../src/util/random.js';
import { ROOT } from '../support/run-cli.js';

const t = parseTopology(
  'paper-3dc-deployment-1.yaml',
  readFileSync(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'), 'utf8'),
);
const at = (action: FaultSpec['action'], target: string, more: Partial<FaultSpec> = {}): FaultSpec => ({
  atMs: 15_000,
  action,
  target,
  ...more,
});
const moment = (
  leader: string | undefined,
  lastDown?: string,
  more: Partial<FaultMoment> = {},
): FaultMoment => ({
  leader,
  lastDown,
  ...more,
});
const plain = { nodes: [], cuts: [], cutOff: [] };

describe('resolveFault', () => {
  it('"leader" is whoever serves now; killing or pausing it takes the leader out', () => {
    assert.deepEqual(resolveFault(t, at('kill', 'leader'), moment('p5')), {
      ...plain,
      target: 'p5',
      nodes: ['p5'],
      takesLeaderOut: true,
    });
    assert.equal(resolveFault(t, at('pause', 'p4'), moment('p4')).takesLeaderOut, true);
    assert.equal(resolveFault(t, at('kill', 'p1'), moment('p5')).takesLeaderOut, false);
    assert.throws(
      () => resolveFault(t, at('kill', 'leader'), moment(undefined)),
      /^Error: no serving leader to kill at 15 s$/,
    );
  });

  it('"killed" is the node the latest kill or pause took down, and bringing it back deposes nobody', () => {
    assert.deepEqual(resolveFault(t, at('restart', 'killed'), moment('p4', 'p5')), {
      ...plain,
      target: 'p5',
      nodes: ['p5'],
      takesLeaderOut: false,
    });
    assert.throws(
      () => resolveFault(t, at('resume', 'killed'), moment('p4')),
      /nothing was killed or paused before the resume of "killed" at 15 s/,
    );
  });

  it("a partition of the leader's data center cuts off every member there; it takes the leader out where it leaves it no majority", () => {
    const r = resolveFault(t, at('partition', 'leader', { datacenters: ['leader'] }), moment('p5'));
    assert.deepEqual(r, {
      ...plain,
      target: 'caltech',
      cuts: [{ a: ['p4', 'p5'], b: ['p1', 'p2', 'p3'] }],
      cutOff: ['p4', 'p5'],
      takesLeaderOut: true,
    });
    const other = resolveFault(
      t,
      at('partition', 'fnal,slac', { datacenters: ['fnal', 'slac'] }),
      moment('p5', 'p1'),
    );
    // The leader's side keeps 2 of 5: it lost its quorum though its own data center was not cut off.
    assert.deepEqual(
      [other.target, other.cutOff, other.takesLeaderOut],
      ['fnal,slac', ['p1', 'p2', 'p3'], true],
    );
    // On the side of 4 of 5, the leader keeps its quorum.
    assert.equal(
      resolveFault(t, at('partition', 'fnal', { datacenters: ['fnal'] }), moment('p5')).takesLeaderOut,
      false,
    );
    assert.throws(
      () => resolveFault(t, at('partition', 'leader', { datacenters: ['leader'] }), moment(undefined)),
      /no serving leader whose data center to partition at 15 s/,
    );
  });

  it('an isolation cuts off one node; heal and link act on links, not on a node', () => {
    assert.deepEqual(resolveFault(t, at('isolate', 'p1'), moment('p5')), {
      ...plain,
      target: 'p1',
      cuts: [{ a: ['p1'], b: ['p2', 'p3', 'p4', 'p5'] }],
      cutOff: ['p1'],
      takesLeaderOut: false,
    });
    assert.equal(resolveFault(t, at('isolate', 'leader'), moment('p5')).takesLeaderOut, true);
    assert.deepEqual(resolveFault(t, at('heal', 'all'), moment(undefined)), {
      ...plain,
      target: 'all',
      takesLeaderOut: false,
    });
    const link = at('link', 'caltech-slac', { datacenters: ['caltech', 'slac'], rttMs: 80 });
    assert.deepEqual(resolveFault(t, link, moment('p5')), {
      ...plain,
      target: 'caltech-slac',
      takesLeaderOut: false,
    });
  });

  it('a one-way cut of the leader cuts what the others send it, one way, and takes it out', () => {
    const r = resolveFault(t, at('oneway', 'leader', { ref: 3 }), moment('p5'));
    assert.deepEqual(r.cuts, [{ a: ['p1', 'p2', 'p3', 'p4'], b: ['p5'], oneWay: true, ref: 3 }]);
    assert.equal(r.takesLeaderOut, true);
    assert.equal(resolveFault(t, at('oneway', 'p1'), moment('p5')).takesLeaderOut, false);
  });

  it('a bridge splits the others in two halves that both see it; the leader keeps its place', () => {
    const r = resolveFault(t, at('bridge', 'p2'), moment('p5'));
    assert.deepEqual(r.cuts, [{ a: ['p1', 'p3'], b: ['p4', 'p5'] }]);
    assert.equal(r.takesLeaderOut, false);
  });

  it('a ring of majorities cuts each member from the two farthest from it in the ring', () => {
    const order = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const r = resolveFault(t, at('ring', order.join(','), { nodes: order }), moment('p5'));
    assert.deepEqual(
      r.cuts.map((c) => `${c.a[0]}-${c.b[0]}`),
      ['p1-p3', 'p1-p4', 'p2-p4', 'p2-p5', 'p3-p5'],
    );
  });

  it('a minority is drawn by the seed it is given, the same each time; the fault it undoes acts on the same members', () => {
    const pause = at('pause', 'minority', { ref: 1 });
    const a = resolveFault(t, pause, moment('p5', undefined, { random: new Random(7) }));
    const b = resolveFault(t, pause, moment('p5', undefined, { random: new Random(7) }));
    assert.equal(a.nodes.length, 2);
    assert.deepEqual(a.nodes, b.nodes);
    assert.equal(a.target, a.nodes.join(','));
    assert.equal(a.takesLeaderOut, a.nodes.includes('p5'));
    const resume = resolveFault(
      t,
      at('resume', 'minority', { undoes: 1 }),
      moment('p4', undefined, { undoing: a }),
    );
    assert.deepEqual(resume.nodes, a.nodes);
    assert.equal(resume.takesLeaderOut, false);
    assert.throws(
      () => resolveFault(t, at('resume', 'minority', { undoes: 2 }), moment('p4')),
      /undoes one that never struck/,
    );
  });
});
