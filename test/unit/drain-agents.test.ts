// The end of a run's load (src/run/drain-agents.ts): every agent's done is awaited, one lost agent
// costs its own data center's data only, and says which one and why.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainAgents } from '../../src/run/drain-agents.js';

/** A bound like the run's (withTimeout), short: rejects when `done` has not settled by then. */
function within<T>(ms: number): (done: Promise<T>) => Promise<T> {
  return (done) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the load agent did not finish within ${ms} ms`)), ms);
      done.then(
        (v) => (clearTimeout(timer), resolve(v)),
        (e: unknown) => (clearTimeout(timer), reject(e as Error)),
      );
    });
}

describe('drainAgents', () => {
  it("keeps every agent that finished when others exit first or hang, with each lost one's reason", async () => {
    // The first data center's agent fails first: before, its rejection threw away the others' data.
    const exited = Promise.reject(new Error('load agent exited (code 0, signal null) without sending done'));
    exited.catch(() => undefined);
    let finishLate!: (v: { acked: number }) => void;
    const late = new Promise<{ acked: number }>((resolve) => (finishLate = resolve));
    setTimeout(() => finishLate({ acked: 7 }), 20);
    const agents = new Map([
      ['tud', { done: exited }],
      ['cern', { done: Promise.resolve({ acked: 5 }) }],
      ['lax', { done: late }],
      ['hung', { done: new Promise<{ acked: number }>(() => undefined) }],
    ]);
    const { dones, lost } = await drainAgents(agents, within(200));
    assert.deepEqual(
      [...dones],
      [
        ['cern', { acked: 5 }],
        ['lax', { acked: 7 }],
      ],
    );
    assert.deepEqual(
      [...lost],
      [
        ['tud', 'load agent exited (code 0, signal null) without sending done'],
        ['hung', 'the load agent did not finish within 200 ms'],
      ],
    );
  });

  it('waits for each agent through the bound it is given, named by its data center', async () => {
    const seen: string[] = [];
    const agents = new Map([
      ['tud', { done: Promise.resolve(1) }],
      ['cern', { done: Promise.resolve(2) }],
    ]);
    const { dones } = await drainAgents(agents, (done, dc) => (seen.push(dc), done));
    assert.deepEqual(seen.sort(), ['cern', 'tud']);
    assert.equal(dones.size, 2);
  });
});
