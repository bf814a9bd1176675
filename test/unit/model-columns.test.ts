// The prediction beside every measurement: the paper's model alone, and the node floor apart.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { NodeFloor } from '../../src/measure/node-floor.js';
import { modelColumns } from '../../src/report/model-columns.js';
import { parseTopology } from '../../src/topology/topology.js';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');
const text = readFileSync(join(root, 'topologies', 'paper-3dc-deployment-1.yaml'), 'utf8');
const floor: NodeFloor = { method: 'test', leaderMs: 0.8, followerMs: 1.4, writes: 3000 };

describe('model columns', () => {
  it("paper-3dc-deployment-1: the paper's model after p5 → p4 is forwarding RTT + θc, nothing added", () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const { model } = modelColumns(t, { initial: 'p5', elected: 'p4', killed: 'p5' }, floor);
    // θc(p4) = 9.88 (its third-smallest RTT: itself, p5, then slac); caltech forwards nothing.
    assert.deepEqual(Object.fromEntries(Object.entries(model).map(([dc, w]) => [dc, w.after])), {
      caltech: 9.88,
      slac: 19.76,
      fnal: 86.94,
    });
    // Before, p5 leads from caltech with the same θc.
    assert.equal(model.caltech!.before, 9.88);
  });

  it('the floor mixes the leader and follower floors by the share of live servers that leads', () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const { floor: f } = modelColumns(t, { initial: 'p5', elected: 'p4', killed: 'p5' }, floor);
    // Before: caltech has p4 and p5, p5 leads: half and half. After: p4 is caltech's only live server.
    assert.equal(f.perDc.caltech!.before, (0.8 + 1.4) / 2);
    assert.equal(f.perDc.caltech!.after, 0.8);
    assert.equal(f.perDc.slac!.after, 1.4);
    assert.equal(f.perDc.fnal!.after, 1.4);
    assert.equal(f.method, 'test');
    // No calibrations recorded: no floor of medians.
    assert.equal(f.perDcMedian, undefined);
  });

  it("a calibrated floor's medians are mixed the same way, from the calibration kept", () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const reading = (l: number, f: number) => ({
      leaderMs: l + 1,
      leaderMedianMs: l,
      followerMs: f + 1,
      followerMedianMs: f,
      writes: 100,
    });
    const calibrated: NodeFloor = { ...floor, readings: [reading(9, 9), reading(0.6, 1.2)], kept: 1 };
    const { floor: f } = modelColumns(t, { initial: 'p5', elected: 'p4', killed: 'p5' }, calibrated);
    assert.equal(f.perDcMedian?.caltech?.before, (0.6 + 1.2) / 2);
    assert.equal(f.perDcMedian?.caltech?.after, 0.6);
    assert.equal(f.perDcMedian?.fnal?.after, 1.2);
    // The means' floor is the one the figures name, as before.
    assert.equal(f.perDc.caltech!.after, 0.8);
  });

  it('the floor does not depend on any delay between data centers', () => {
    const slow = text
      .replace('rtt: 9.88ms', 'rtt: 98.8ms')
      .replace('rtt: 53.26ms', 'rtt: 153.26ms')
      .replace('rtt: 77.06ms', 'rtt: 7.06ms');
    const a = modelColumns(
      parseTopology('a.yaml', text),
      { initial: 'p5', elected: 'p4', killed: 'p5' },
      floor,
    );
    const b = modelColumns(
      parseTopology('b.yaml', slow),
      { initial: 'p5', elected: 'p4', killed: 'p5' },
      floor,
    );
    assert.deepEqual(a.floor, b.floor);
    assert.notDeepEqual(a.model, b.model, 'the variant must change the network part');
  });

  it('a window without a leader has no prediction, and an unmeasured floor gives none', () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const none: NodeFloor = { method: 'not measured: x', leaderMs: null, followerMs: null, writes: 0 };
    const c = modelColumns(t, { initial: 'p5', elected: null, killed: null }, none);
    assert.equal(c.model.slac!.after, null);
    assert.equal(c.floor.perDc.slac!.before, null);
    assert.equal(c.model.slac!.before, 19.76);
  });
});
