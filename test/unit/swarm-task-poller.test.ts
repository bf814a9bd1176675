import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskPoller, type TaskInfo } from '../../src/runtime/swarm/task-poller.js';

const task = (id: string, service: string, state: string): TaskInfo => ({
  ID: id,
  ServiceID: service,
  Status: { State: state },
});

test("every waiter is served by one list call per period, each from its own service's tasks", async () => {
  const calls: string[][] = [];
  let round = 0;
  const poller = new TaskPoller(async (ids) => {
    calls.push([...ids].sort());
    round++;
    return [task('a1', 'A', round >= 2 ? 'running' : 'starting'), task('b1', 'B', 'running')];
  }, 5);
  const [a, b] = await Promise.all([
    poller.until('A', (ts) => ts.find((t) => t.Status?.State === 'running'), 1_000),
    poller.until('B', (ts) => ts.find((t) => t.Status?.State === 'running'), 1_000),
  ]);
  assert.equal(a.ID, 'a1');
  assert.equal(b.ID, 'b1');
  assert.deepEqual(calls[0], ['A', 'B'], 'both services in the first call');
  assert.deepEqual(calls.slice(1), [['A']], 'then only the service still waited on');
});

test('a pick that throws, a deadline, a stopped waiter and a failed list each end their wait as said', async () => {
  const poller = new TaskPoller(async () => [task('c1', 'C', 'failed')], 5);
  await assert.rejects(
    poller.until(
      'C',
      () => {
        throw new Error('the swarm ended it');
      },
      1_000,
    ),
    /the swarm ended it/,
  );
  await assert.rejects(
    poller.until('C', () => undefined, 30),
    /no task of service C got there within 30 ms: failed/,
  );
  let stop = false;
  let settled = false;
  void poller
    .until(
      'C',
      () => undefined,
      1_000,
      () => stop,
    )
    .finally(() => (settled = true));
  stop = true;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(settled, false, 'a stopped waiter never settles');
  const broken = new TaskPoller(async () => {
    throw new Error('manager gone');
  }, 5);
  await assert.rejects(
    broken.until('D', () => undefined, 1_000),
    /manager gone/,
  );
});
