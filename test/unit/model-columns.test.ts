// The prediction beside every measurement: the paper's model alone, and the node floor apart.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { NodeFloor } from '../../src/measure/node-floor.js';
import { meanOneWayOver } from '../../src/report/cluster-as-it-stands.js';
import { modelColumns } from '../../src/report/model-columns.js';
import { parseTopology, type Topology } from '../../src/topology/topology.js';
import type { FaultMark } from '../../src/vocabulary/names.js';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');
const text = readFileSync(join(root, 'topologies', 'paper-3dc-deployment-1.yaml'), 'utf8');
const floor: NodeFloor = { method: 'test', leaderMs: 0.8, followerMs: 1.4, writes: 3000 };

/** `initial` leads 5-15 s, is killed at 15 s, and `elected` leads 20-30 s. */
function leaderKill(t: Topology, initial: string, elected: string | null, f: NodeFloor = floor) {
  const faults: FaultMark[] = [{ atS: 15, action: 'kill', node: initial }];
  return modelColumns(
    t,
    {
      before: { fromS: 5, toS: 15, leader: initial },
      after: elected === null ? null : { fromS: 20, toS: 30, leader: elected },
    },
    faults,
    f,
  );
}

describe('model columns', () => {
  it("paper-3dc-deployment-1: the paper's model after p5 → p4 is forwarding RTT + θc, nothing added", () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const { model } = leaderKill(t, 'p5', 'p4');
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
    const { floor: f } = leaderKill(t, 'p5', 'p4');
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
    const { floor: f } = leaderKill(t, 'p5', 'p4', calibrated);
    assert.ok(Math.abs(f.perDcMedian!.caltech!.before! - (0.6 + 1.2) / 2) < 1e-6);
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
    const a = leaderKill(parseTopology('a.yaml', text), 'p5', 'p4');
    const b = leaderKill(parseTopology('b.yaml', slow), 'p5', 'p4');
    assert.deepEqual(a.floor, b.floor);
    assert.notDeepEqual(a.model, b.model, 'the variant must change the network part');
  });

  it('a window without a leader has no prediction, and an unmeasured floor gives none', () => {
    const t = parseTopology('paper-3dc-deployment-1.yaml', text);
    const none: NodeFloor = { method: 'not measured: x', leaderMs: null, followerMs: null, writes: 0 };
    const c = leaderKill(t, 'p5', null, none);
    assert.equal(c.model.slac!.after, null);
    assert.equal(c.floor.perDc.slac!.before, null);
    assert.equal(c.model.slac!.before, 19.76);
  });
});

describe('model columns: the cluster as the faults left it', () => {
  const t = parseTopology('paper-3dc-deployment-1.yaml', text);
  const windows = (before: string, after: string | null) => ({
    before: { fromS: 5, toS: 10, leader: before },
    degraded: { fromS: 10, toS: 15, leader: before },
    after: after === null ? null : { fromS: 20, toS: 30, leader: after },
  });

  it('a follower killed, then the leader: the new quorum must reach the farthest survivor', () => {
    const faults: FaultMark[] = [
      { atS: 10, action: 'kill', node: 'p3' },
      { atS: 15, action: 'kill', node: 'p5' },
    ];
    const c = modelColumns(t, windows('p5', 'p4'), faults, floor);
    // Three of five left (p1, p2, p4): p4 commits once fnal's p1 has it, 77.06 ms away.
    assert.deepEqual(Object.fromEntries(Object.entries(c.model).map(([dc, w]) => [dc, w.after])), {
      caltech: 77.06,
      slac: 86.94,
      fnal: 154.12,
    });
    // With p3 down p5 still has its quorum over slac's p2; slac's clients all go through p2.
    assert.deepEqual(Object.fromEntries(Object.entries(c.model).map(([dc, w]) => [dc, w.degraded])), {
      caltech: 9.88,
      slac: 19.76,
      fnal: 86.94,
    });
    assert.deepEqual(c.basis.after?.segments[0]?.members, ['p1', 'p2', 'p4']);
    assert.match(c.basis.after?.segments[0]?.state ?? '', /p3 killed at 10\.0 s; p5 killed at 15\.0 s/);
    assert.equal(c.basis.before?.segments[0]?.state, 'every member up, every link as configured');
  });

  it('a member back inside a window: the window is the time-weighted mean of its parts', () => {
    const faults: FaultMark[] = [
      { atS: 15, action: 'kill', node: 'p5' },
      { atS: 16, action: 'kill', node: 'p3' },
      { atS: 24, action: 'restart', node: 'p3' },
    ];
    const c = modelColumns(t, windows('p5', 'p4'), faults, floor);
    const parts = c.basis.after!.segments;
    assert.deepEqual(
      parts.map((p) => [p.fromS, p.toS, p.members.join(',')]),
      [
        [20, 24, 'p1,p2,p4'],
        [24, 30, 'p1,p2,p3,p4'],
      ],
    );
    // fnal: 154.12 ms for 4 s, then 77.06 + 9.88 for 6 s.
    assert.ok(Math.abs(c.model.fnal!.after! - (4 * 154.12 + 6 * (77.06 + 9.88)) / 10) < 1e-6);
  });

  it('a partition: the cut-off data center has no model, the rest are modelled without it', () => {
    const c = modelColumns(t, windows('p5', null), [{ atS: 10, action: 'partition', node: 'fnal' }], floor);
    assert.equal(c.model.fnal!.degraded, null);
    assert.equal(c.model.slac!.degraded, 19.76);
    assert.match(c.basis.degraded?.segments[0]?.noModel ?? '', /^fnal: no server up on p5's side/);
  });

  it('no quorum, or a leader down: no model, and the window says why', () => {
    const faults: FaultMark[] = ['p1', 'p2', 'p3'].map((n) => ({ atS: 10, action: 'kill', node: n }));
    const c = modelColumns(t, windows('p5', null), faults, floor);
    assert.equal(c.model.caltech!.degraded, null);
    assert.match(c.basis.degraded?.segments[0]?.noModel ?? '', /^no quorum: p5 reaches 2 of 5 members/);
    const down = modelColumns(t, windows('p5', null), [{ atS: 10, action: 'pause', node: 'p5' }], floor);
    assert.equal(down.model.caltech!.degraded, null);
    assert.equal(down.basis.degraded?.segments[0]?.noModel, 'its leader p5 was paused at 10.0 s');
  });

  it('a link changed: the window is modelled over the new round trip', () => {
    const lt = parseTopology(
      'degrade.yaml',
      text.replace('    - { at: 60s, kill: leader }', '    - { at: 10s, link: [caltech, slac], rtt: 150ms }'),
    );
    const c = modelColumns(
      lt,
      windows('p5', null),
      [{ atS: 10, action: 'link', node: 'caltech-slac rtt 150 ms' }],
      floor,
    );
    // p5's quorum of three now waits for fnal (77.06 ms) rather than slac (150).
    assert.deepEqual(Object.fromEntries(Object.entries(c.model).map(([dc, w]) => [dc, w.degraded])), {
      caltech: 77.06,
      slac: 227.06,
      fnal: 154.12,
    });
    assert.match(c.basis.degraded?.segments[0]?.state ?? '', /caltech–slac at 150 ms/);
  });

  it("a link fault's delay is each direction's half of its new round trip, weighted by time where a window holds it in part", () => {
    const degrade = readFileSync(join(root, 'topologies', 'paper-3dc-degrade.yaml'), 'utf8');
    const t = parseTopology('paper-3dc-degrade.yaml', degrade);
    const faults: FaultMark[] = [{ atS: 20, action: 'link', node: 'caltech,slac' }];
    const before = meanOneWayOver(t, faults, 5, 20);
    const after = meanOneWayOver(t, faults, 20, 60);
    const across = meanOneWayOver(t, faults, 10, 30);
    assert.equal(before('caltech', 'slac'), 4.94);
    assert.equal(after('caltech', 'slac'), 75);
    assert.equal(after('slac', 'caltech'), 75);
    assert.equal(across('slac', 'caltech'), (4.94 + 75) / 2);
    // Links the fault did not touch keep their configured delay, in every state.
    assert.equal(after('caltech', 'fnal'), 38.53);
    assert.equal(after('fnal', 'fnal'), 0);
  });

  it('a leader that takes over inside a window: the model follows each leader from its take-over, time-weighted', () => {
    const degrade = readFileSync(join(root, 'topologies', 'paper-3dc-degrade.yaml'), 'utf8');
    const t = parseTopology('paper-3dc-degrade.yaml', degrade);
    const faults: FaultMark[] = [{ atS: 20, action: 'link', node: 'caltech,slac' }];
    const only = (leader: string) =>
      modelColumns(t, { before: null, after: { fromS: 30, toS: 60, leader } }, faults, floor).model;
    const p3 = only('p3');
    const p1 = only('p1');
    // p3 resigned for p1 at 40 s: a third of the window under p3, two thirds under p1.
    const mixed = modelColumns(
      t,
      { before: null, after: { fromS: 30, toS: 60, leader: 'p3', handovers: [{ atS: 40, leader: 'p1' }] } },
      faults,
      floor,
    );
    for (const dc of ['caltech', 'slac', 'fnal']) {
      const want = (p3[dc]!.after! * 10 + p1[dc]!.after! * 20) / 30;
      assert.ok(
        Math.abs(mixed.model[dc]!.after! - want) < 1e-5,
        `${dc}: ${mixed.model[dc]!.after} for ${want}`,
      );
    }
    // The two leaders' models differ where it matters: caltech reaches p3 over the degraded link.
    assert.ok(p3.caltech!.after! - p1.caltech!.after! > 50);
    const segments = mixed.basis.after!.segments;
    assert.deepEqual(
      segments.map((g) => [g.fromS, g.toS, g.leader]),
      [
        [30, 40, 'p3'],
        [40, 60, 'p1'],
      ],
    );
    // A take-over outside the window changes nothing in it.
    const outside = modelColumns(
      t,
      { before: null, after: { fromS: 30, toS: 60, leader: 'p3', handovers: [{ atS: 25, leader: 'p1' }] } },
      faults,
      floor,
    );
    assert.equal(outside.model.caltech!.after, p3.caltech!.after);
  });
});
