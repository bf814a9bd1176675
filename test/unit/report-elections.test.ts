// Every election of a run from made-up events: the serving leader after each fault that took the
// old one out, failed rounds, elections that never completed, and leaders that changed by themselves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { summariseElections, type Deposition } from '../../src/report/elections.js';

const LOAD = 1_000_000;
type Ev = { t: number; node: string; ev: 'elected' | 'serving'; leader?: string; epoch?: number };
const at = (s: number): number => LOAD + s * 1000;
const elected = (s: number, node: string): Ev => ({ t: at(s), node, ev: 'elected', leader: node });
const serving = (s: number, node: string): Ev => ({ t: at(s), node, ev: 'serving' });
const following = (s: number, node: string, leader: string): Ev => ({
  t: at(s),
  node,
  ev: 'serving',
  leader,
});
const kill = (s: number, leader: string): Deposition => ({
  at: at(s),
  mark: { atS: s, action: 'kill', node: leader },
  leader,
});

describe('summariseElections', () => {
  it('times each fault to the next leader elected and serving, with median and spread', () => {
    const events: Ev[] = [
      serving(-5, 'p5'),
      elected(10.2, 'p4'),
      following(10.25, 'p3', 'p4'),
      serving(10.3, 'p4'),
      elected(30.1, 'p3'),
      serving(30.5, 'p3'),
    ];
    const e = summariseElections(events, [kill(10, 'p5'), kill(30, 'p4')], LOAD, at(60));
    assert.equal(e.deposed, 2);
    assert.equal(e.completed, 2);
    assert.equal(e.incomplete, 0);
    assert.deepEqual(
      e.list.map((r) => [
        r.leader,
        r.elected,
        Math.round(r.electedMs!),
        Math.round(r.servingMs!),
        r.failedRounds,
      ]),
      [
        ['p5', 'p4', 200, 300, 0],
        ['p4', 'p3', 100, 500, 0],
      ],
    );
    assert.deepEqual(
      [e.servingMs!.median, e.servingMs!.min, e.servingMs!.max].map(Math.round),
      [400, 300, 500],
    );
    assert.deepEqual(e.unprovoked, []);
  });

  it('counts a round whose leader never served, and names the one that did', () => {
    const events: Ev[] = [serving(-1, 'p5'), elected(10.2, 'p4'), elected(11.0, 'p3'), serving(11.2, 'p3')];
    const [r] = summariseElections(events, [kill(10, 'p5')], LOAD, at(60)).list;
    assert.equal(r!.elected, 'p3');
    assert.equal(Math.round(r!.electedMs!), 1000);
    assert.equal(r!.failedRounds, 1);
  });

  it('an election that does not complete before the next fault, or within the bound, is incomplete', () => {
    // Nobody serves between the kills at 10 s and 20 s; after the one at 20 s, p3 serves at 21 s.
    const events: Ev[] = [serving(-1, 'p5'), serving(21, 'p3')];
    const e = summariseElections(events, [kill(10, 'p5'), kill(20, 'p4')], LOAD, at(60));
    assert.deepEqual(
      e.list.map((r) => r.elected),
      [null, 'p3'],
    );
    assert.equal(e.incomplete, 1);
    assert.equal(e.completed, 1);
    // A leader serving 31 s after the fault is too late for the 30 s bound.
    const late = summariseElections([serving(-1, 'p5'), serving(41, 'p3')], [kill(10, 'p5')], LOAD, at(60));
    assert.equal(late.incomplete, 1);
    assert.equal(late.electedMs, null);
  });

  it('a leader the killed one hands over to by itself is unprovoked; re-announcements are not', () => {
    const events: Ev[] = [
      serving(-1, 'p5'),
      serving(5, 'p5'),
      serving(12, 'p1'), // p5 resigned for p1 with no fault
      elected(20.1, 'p2'),
      serving(20.2, 'p2'),
    ];
    const e = summariseElections(events, [kill(20, 'p1')], LOAD, at(60));
    assert.deepEqual(e.unprovoked, [{ atS: 12, leader: 'p1' }]);
    assert.equal(e.completed, 1);
  });

  it('a leader that stepped down and won the next election again completes it (newer epoch)', () => {
    const events: Ev[] = [
      { ...serving(-1, 'p3'), epoch: 10 },
      { ...serving(5, 'p3'), epoch: 10 }, // a re-announcement is no election
      { ...elected(18.2, 'p3'), epoch: 11 },
      { ...serving(18.3, 'p3'), epoch: 11 },
    ];
    const link: Deposition = {
      at: at(0),
      mark: { atS: 0, action: 'link', node: 'a-b rtt 10 ms' },
      leader: 'p3',
    };
    const e = summariseElections(events, [link], LOAD, at(60));
    assert.equal(e.completed, 1);
    assert.equal(e.list[0]!.elected, 'p3');
    assert.equal(Math.round(e.list[0]!.servingMs!), 18_300);
  });

  it('nothing to say without faults or changes', () => {
    const e = summariseElections([serving(-1, 'p5'), serving(3, 'p5')], [], LOAD, at(60));
    assert.deepEqual(
      [e.deposed, e.completed, e.incomplete, e.electedMs, e.servingMs, e.unprovoked.length],
      [0, 0, 0, null, null, 0],
    );
  });
});
