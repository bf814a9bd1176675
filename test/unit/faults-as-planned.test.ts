// The schedule the report names against the faults the run made: a fault pushed past the end of the
// load, one never made, and an undo that came early each trip faultsAsPlanned; lateness alone not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { faultsAsPlanned } from '../../src/report/checks/faults-as-planned.js';
import { result2dc, type MutableResult } from './report-fixture.js';

/** The paper-2dc fixture (30 s of load) with a roll at 10 s and p2 paused at 20 s for 3 s. */
function withSchedule(marks: MutableResult['timeline']['faults']): MutableResult {
  const r = result2dc();
  r.scenario = {
    ...r.scenario,
    faults: [
      { atS: 10, action: 'roll', target: 'all' },
      { atS: 20, action: 'pause', target: 'p2', ref: 1 },
      { atS: 23, action: 'resume', target: 'p2', undoes: 1 },
    ],
  };
  r.timeline.faults = marks;
  return r;
}

function violations(r: MutableResult): string[] {
  const out: string[] = [];
  faultsAsPlanned.run(
    r,
    (why) => out.push(why),
    () => undefined,
  );
  return out;
}

const roll = (from: number) => [
  { atS: from, action: 'roll' as const, node: 'all' },
  { atS: from + 0.01, action: 'kill' as const, node: 'p1' },
  { atS: from + 0.1, action: 'restart' as const, node: 'p1' },
];

test('a pause late behind a roll, held its whole 3 s: lateness is shown, not held against the run', () => {
  const r = withSchedule([
    ...roll(10),
    { atS: 24.5, action: 'pause', node: 'p2', ref: 1, lateMs: 4500 },
    { atS: 27.51, action: 'resume', node: 'p2', undoes: 1, lateMs: 4510 },
  ]);
  assert.deepEqual(violations(r), []);
});

test('a pause pushed past the end of the load, its resume at once: both named', () => {
  const r = withSchedule([
    ...roll(10),
    { atS: 35.2, action: 'pause', node: 'p2', ref: 1, lateMs: 15200 },
    { atS: 35.21, action: 'resume', node: 'p2', undoes: 1, lateMs: 12210 },
  ]);
  const v = violations(r);
  assert.equal(v.length, 2, v.join('\n'));
  assert.match(
    v[0]!,
    /^2 made after the load ended at 30 s, the first pause p2 at 35\.20 s \(15\.20 s late\)/,
  );
  assert.match(v[1]!, /the pause of p2 at 35\.20 s held 0\.01 s of its 3\.00 s/);
});

test('a fault of the schedule never made is named', () => {
  const r = withSchedule([...roll(10), { atS: 20.01, action: 'pause', node: 'p2', ref: 1 }]);
  assert.deepEqual(violations(r), ['1 resume planned, 0 made']);
});
