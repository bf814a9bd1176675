// What a run of test/fixtures/fears-2dc.yaml must show on any runtime: the leader cut off one way
// deposed, each cut healed by its own undoing, a minority paused and resumed together, the roll in
// order, nothing lost and no read back in time.
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/report/result.js';

export function checkFearsRun(result: RunResult): void {
  assert.equal(result.writes.lost, 0, JSON.stringify(result.writes));
  assert.ok(result.writes.acked > 3000, `${result.writes.acked} acknowledged`);
  const marks = result.timeline.faults;
  const of = (action: string): string[] => marks.filter((m) => m.action === action).map((m) => m.node);
  // The leader it cut off one way was the first leader, and that cut took it out.
  assert.deepEqual(of('oneway'), ['p5']);
  assert.equal(result.leaders.cause?.action, 'oneway');
  assert.equal(result.leaders.cause?.leader, 'p5');
  assert.equal(result.elections.list[0]?.cause.action, 'oneway');
  assert.ok(result.elections.list[0]?.elected !== 'p5', 'a member that hears no one is not elected again');
  // Each cut healed by its own undoing, the ring over the data centers interleaved.
  assert.deepEqual(of('bridge'), ['p3']);
  assert.deepEqual(of('ring'), ['p1,p3,p2,p4,p5']);
  assert.deepEqual(
    marks.filter((m) => m.action === 'heal').map((m) => m.undoes),
    [1, 2, 3],
  );
  // A minority of two, drawn by the run's seed, paused and resumed together.
  const [paused] = of('pause');
  assert.equal(paused?.split(',').length, 2);
  assert.deepEqual(of('resume'), [paused]);
  // The roll: every member killed and restarted, in the order of their ids, one at a time.
  const roll = marks.slice(marks.findIndex((m) => m.action === 'roll') + 1);
  assert.deepEqual(
    roll.map((m) => `${m.action} ${m.node}`),
    ['p1', 'p2', 'p3', 'p4', 'p5'].flatMap((n) => [`kill ${n}`, `restart ${n}`]),
  );
  // Every election a fault caused ended with a leader serving.
  assert.equal(result.elections.incomplete, 0, JSON.stringify(result.elections.list));
  // The reads were checked; the report prints the schedule it ran, and the safety it found.
  assert.ok(result.safety && result.safety.models[0]!.ops > 500);
  // What POLE promises a connection holds through all of it, the roll's restarts included: no
  // read back in time (a restarted member answers none until its sync).
  const session = result.safety.models.find((m) => m.model === 'session')!;
  assert.deepEqual([session.promised, session.violated], [true, 0], JSON.stringify(session.counterexample));
  assert.equal(result.safety.broken, 0, JSON.stringify(result.safety.models));
}
