// The nemesis's timing (chaos/fault-schedule.ts): each fault starts at its own time, not when the
// one before it has finished; one whose target depends on the earlier faults waits for them, and
// its mark says how late it struck. A runtime whose restart takes 600 ms, against the real clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFaults, type ChaosContext } from '../../src/chaos/fault-schedule.js';
import { FaultBook } from '../../src/chaos/fault-book.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { parseTopology } from '../../src/topology/topology.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';
import { EventBook } from '../../src/runtime/event-book.js';
import { DEGRADED_PHASE, FAULT_PHASE } from '../../src/load/agent-protocol.js';

const YAML = `
name: schedule
datacenters:
  - { name: a, nodes: [p1, p2] }
  - { name: b, nodes: [p3] }
links:
  - { between: [a, b], rtt: 10ms }
scenario:
  duration: 5s
  warmup: 100ms
  settle: 1s
  faults:
    - { at: 200ms, restart: p1 }
    - { at: 400ms, link: [a, b], rtt: 30ms }
    - { at: 500ms, kill: p2 }
    - { at: 1200ms, restart: killed }
`;

const RESTART_MS = 600;

test('a link change strikes on time behind a slow restart; a kill behind it waits and says how late', async () => {
  const t = parseTopology('schedule.yaml', YAML);
  const calls: Array<{ what: string; at: number }> = [];
  const start = Date.now();
  const since = (): number => Date.now() - start;
  const events: ClusterEvent[] = [{ ev: 'serving', node: 'p3', t: start } as ClusterEvent];
  const rt = {
    events,
    isRunning: () => true,
    waitFor: (_pred: unknown, timeoutMs: number) =>
      new Promise((_resolve, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs)),
    kill: async (id: string) => {
      calls.push({ what: `kill ${id}`, at: since() });
      return Date.now();
    },
    restart: async (id: string) => {
      calls.push({ what: `restart ${id}`, at: since() });
      await new Promise((r) => setTimeout(r, RESTART_MS));
    },
    shaping: {
      kind: 'relay',
      setRtt: async (a: string, b: string, rtt: number) => {
        calls.push({ what: `link ${a}-${b} ${rtt}`, at: since() });
        return true;
      },
    },
  } as unknown as Runtime;
  const c: ChaosContext = {
    rt,
    topology: t,
    seed: 1,
    loadStart: start,
    phases: { current: 'before', switchTo: () => undefined },
    sleepUntil: (wall) => new Promise((r) => setTimeout(r, Math.max(0, wall - Date.now()))),
    note: () => undefined,
    progress: () => undefined,
  };
  const book = new FaultBook();
  await runFaults(c, book);

  assert.deepEqual(
    calls.map((x) => x.what),
    ['restart p1', 'link a-b 30', 'kill p2', 'restart p2'],
  );
  const at = new Map(calls.map((x) => [x.what, x.at]));
  // On time (a timer is a few ms late) although the restart before it had 400 ms to go.
  assert.ok(at.get('link a-b 30')! < 400 + 80, JSON.stringify(calls));
  // The kill waits for the restart (its own target does not depend on it, but "killed" later
  // would): it strikes when the restart is done, 200 + 600 ms, and its mark says it was late.
  assert.ok(at.get('kill p2')! >= 200 + RESTART_MS, JSON.stringify(calls));
  const marks = book.marks.map((m) => [m.action, m.node, m.lateMs === undefined ? 'on time' : 'late']);
  assert.deepEqual(marks, [
    ['restart', 'p1', 'on time'],
    ['link', 'a-b rtt 30 ms', 'on time'],
    ['kill', 'p2', 'late'],
    ['restart', 'p2', 'on time'],
  ]);
  const kill = book.marks.find((m) => m.action === 'kill')!;
  assert.ok(kill.lateMs! >= RESTART_MS - 300 - 20 && kill.lateMs! < RESTART_MS, `late ${kill.lateMs} ms`);
});

// A leader paused for 600 ms: a kill takes a leader out for good, a pause only while it lasts.
const PAUSE_YAML = `
name: pause
datacenters:
  - { name: a, nodes: [p1, p2] }
  - { name: b, nodes: [p3] }
links:
  - { between: [a, b], rtt: 10ms }
scenario:
  duration: 3s
  warmup: 100ms
  settle: 500ms
  faults:
    - { at: 200ms, pause: leader, for: 600ms }
`;

/** runFaults over PAUSE_YAML with p1 serving; `electAfterMs` after the pause, p2 is elected (or never). */
async function pauseTheLeader(electAfterMs: number | null): Promise<{
  book: FaultBook;
  calls: Array<{ what: string; at: number }>;
  phases: Array<{ name: string; at: number }>;
  notes: string[];
  start: number;
}> {
  const t = parseTopology('pause.yaml', PAUSE_YAML);
  const start = Date.now();
  const book = new EventBook();
  book.push({ ev: 'serving', node: 'p1', t: start } as ClusterEvent);
  const calls: Array<{ what: string; at: number }> = [];
  const rt = {
    events: book.events,
    isRunning: () => true,
    waitFor: (pred: (e: ClusterEvent) => boolean, ms: number) => book.waitFor(pred, ms),
    pause: (id: string) => {
      calls.push({ what: `pause ${id}`, at: Date.now() - start });
      if (electAfterMs !== null)
        setTimeout(() => {
          const t = Date.now();
          book.push({ ev: 'elected', node: 'p2', leader: 'p2', t } as ClusterEvent);
          book.push({ ev: 'serving', node: 'p2', t } as ClusterEvent);
        }, electAfterMs);
    },
    resume: (id: string) => calls.push({ what: `resume ${id}`, at: Date.now() - start }),
  } as unknown as Runtime;
  const phases: Array<{ name: string; at: number }> = [];
  const notes: string[] = [];
  const c: ChaosContext = {
    rt,
    topology: t,
    seed: 1,
    loadStart: start,
    phases: {
      get current() {
        return phases.at(-1)?.name ?? 'before';
      },
      switchTo: (name, at) => phases.push({ name, at }),
    },
    sleepUntil: (wall) => new Promise((r) => setTimeout(r, Math.max(0, wall - Date.now()))),
    note: (ev) => notes.push(ev),
    progress: () => undefined,
  };
  const faults = new FaultBook();
  await runFaults(c, faults);
  return { book: faults, calls, phases, notes, start };
}

test('a leader paused and resumed before anyone is elected was not deposed: no cause, its resume on time', async () => {
  const { book, calls, phases, notes } = await pauseTheLeader(null);
  assert.deepEqual(
    calls.map((x) => x.what),
    ['pause p1', 'resume p1'],
  );
  // The resume is the pause's own undo: it does not wait for an election that never comes.
  const resume = calls.find((x) => x.what === 'resume p1')!;
  assert.ok(resume.at < 800 + 80, JSON.stringify(calls));
  assert.equal(book.hasCause, false);
  assert.deepEqual(book.depositions, []);
  // Its writes were held up: "degraded", never "during" or "after".
  assert.deepEqual(
    phases.map((p) => p.name),
    [DEGRADED_PHASE],
  );
  assert.ok(notes.includes('not-deposed'), notes.join(', '));
});

test('a leader paused while another is elected was deposed: the cause, timed from the pause', async () => {
  const { book, calls, phases, start } = await pauseTheLeader(300);
  assert.deepEqual(
    calls.map((x) => x.what),
    ['pause p1', 'resume p1'],
  );
  const paused = start + calls[0]!.at;
  assert.equal(book.killed, 'p1');
  assert.ok(book.killAt !== null && Math.abs(book.killAt - paused) < 20, `${book.killAt} vs ${paused}`);
  assert.equal(book.depositions.length, 1);
  assert.equal(book.cause?.action, 'pause');
  // "degraded" as it struck, then "during" from the pause itself, then "after" a settle past p2's election.
  assert.deepEqual(
    phases.map((p) => p.name),
    [DEGRADED_PHASE, FAULT_PHASE, 'after'],
  );
  assert.equal(phases[1]!.at, book.killAt);
  assert.ok(
    phases[2]!.at >= paused + 300 + 500 && phases[2]!.at < paused + 300 + 500 + 80,
    JSON.stringify(phases),
  );
});

test('a fault that strikes late behind a slow restart is held its whole for: its undo moves with it', async () => {
  const t = parseTopology(
    'late.yaml',
    PAUSE_YAML.replace(
      '    - { at: 200ms, pause: leader, for: 600ms }',
      '    - { at: 150ms, restart: p3 }\n    - { at: 200ms, pause: p2, for: 300ms }',
    ),
  );
  const start = Date.now();
  const calls: Array<{ what: string; at: number }> = [];
  const book = new EventBook();
  book.push({ ev: 'serving', node: 'p1', t: start } as ClusterEvent);
  const rt = {
    events: book.events,
    isRunning: () => true,
    waitFor: (pred: (e: ClusterEvent) => boolean, ms: number) => book.waitFor(pred, ms),
    restart: async (id: string) => {
      calls.push({ what: `restart ${id}`, at: Date.now() - start });
      await new Promise((r) => setTimeout(r, RESTART_MS));
    },
    pause: (id: string) => calls.push({ what: `pause ${id}`, at: Date.now() - start }),
    resume: (id: string) => calls.push({ what: `resume ${id}`, at: Date.now() - start }),
  } as unknown as Runtime;
  const faults = new FaultBook();
  await runFaults(
    {
      rt,
      topology: t,
      seed: 1,
      loadStart: start,
      phases: { current: 'before', switchTo: () => undefined },
      sleepUntil: (wall) => new Promise((r) => setTimeout(r, Math.max(0, wall - Date.now()))),
      note: () => undefined,
      progress: () => undefined,
    },
    faults,
  );
  assert.deepEqual(
    calls.map((x) => x.what),
    ['restart p3', 'pause p2', 'resume p2'],
  );
  const [, pause, resume] = calls;
  // The pause waits for the restart (150 + 600 ms), then is held 300 ms, not until 500 ms as written.
  assert.ok(pause!.at >= 150 + RESTART_MS - 20, JSON.stringify(calls));
  assert.ok(resume!.at - pause!.at >= 300 - 5, JSON.stringify(calls));
  assert.ok(resume!.at - pause!.at < 300 + 80, JSON.stringify(calls));
});
