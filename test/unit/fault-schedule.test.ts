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
