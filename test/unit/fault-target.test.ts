// What a fault acts on when it strikes (chaos/fault-target.ts), on the paper's deployment 1:
// caltech = {p4, p5}, slac = {p2, p3}, fnal = {p1}; "leader" and "killed" resolved at that moment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveFault } from '../../src/chaos/fault-target.js';
import type { FaultSpec } from '../../src/topology/topology-schema.js';
import { parseTopology } from '../../src/topology/topology.js';
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

describe('resolveFault', () => {
  it('"leader" is whoever serves now; killing or pausing it takes the leader out', () => {
    assert.deepEqual(resolveFault(t, at('kill', 'leader'), 'p5', undefined), {
      target: 'p5',
      cutOff: [],
      takesLeaderOut: true,
    });
    assert.equal(resolveFault(t, at('pause', 'p4'), 'p4', undefined).takesLeaderOut, true);
    assert.equal(resolveFault(t, at('kill', 'p1'), 'p5', undefined).takesLeaderOut, false);
    assert.throws(
      () => resolveFault(t, at('kill', 'leader'), undefined, undefined),
      /^Error: no serving leader to kill at 15 s$/,
    );
  });

  it('"killed" is the node the latest kill or pause took down, and bringing it back deposes nobody', () => {
    assert.deepEqual(resolveFault(t, at('restart', 'killed'), 'p4', 'p5'), {
      target: 'p5',
      cutOff: [],
      takesLeaderOut: false,
    });
    assert.throws(
      () => resolveFault(t, at('resume', 'killed'), 'p4', undefined),
      /nothing was killed or paused before the resume of "killed" at 15 s/,
    );
  });

  it("a partition of the leader's data center cuts off every member there, the leader with them", () => {
    const r = resolveFault(t, at('partition', 'leader', { datacenters: ['leader'] }), 'p5', undefined);
    assert.deepEqual(r, { target: 'caltech', cutOff: ['p4', 'p5'], takesLeaderOut: true });
    const other = resolveFault(
      t,
      at('partition', 'fnal,slac', { datacenters: ['fnal', 'slac'] }),
      'p5',
      'p1',
    );
    assert.deepEqual(other, { target: 'fnal,slac', cutOff: ['p1', 'p2', 'p3'], takesLeaderOut: false });
    assert.throws(
      () => resolveFault(t, at('partition', 'leader', { datacenters: ['leader'] }), undefined, undefined),
      /no serving leader whose data center to partition at 15 s/,
    );
  });

  it('an isolation cuts off one node; heal and link act on links, not on a node', () => {
    assert.deepEqual(resolveFault(t, at('isolate', 'p1'), 'p5', undefined), {
      target: 'p1',
      cutOff: ['p1'],
      takesLeaderOut: false,
    });
    assert.equal(resolveFault(t, at('isolate', 'leader'), 'p5', undefined).takesLeaderOut, true);
    assert.deepEqual(resolveFault(t, at('heal', 'all'), undefined, undefined), {
      target: 'all',
      cutOff: [],
      takesLeaderOut: false,
    });
    const link = at('link', 'caltech-slac', { datacenters: ['caltech', 'slac'], rttMs: 80 });
    assert.deepEqual(resolveFault(t, link, 'p5', undefined), {
      target: 'caltech-slac',
      cutOff: [],
      takesLeaderOut: false,
    });
  });
});
