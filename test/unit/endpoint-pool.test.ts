// A load agent passes over a server that refused its connection, for a while, instead of sending
// it every other write of its data center after a kill.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DOWN_FOR_MS, EndpointPool } from '../../src/load/retrying-writer.js';

const pool = (): EndpointPool =>
  new EndpointPool([
    { host: '127.0.0.1', port: 1 },
    { host: '127.0.0.1', port: 2 },
    { host: '127.0.0.1', port: 3 },
  ]);

describe('EndpointPool', () => {
  it('picks uniformly over all endpoints while none is down', () => {
    const p = pool();
    assert.deepEqual(
      [0, 0.34, 0.67, 0.99].map((u) => p.pick(u, 0)),
      [0, 1, 2, 2],
    );
  });

  it('passes over a down endpoint for DOWN_FOR_MS, then offers it again', () => {
    const p = pool();
    p.markDown(1, 1000);
    const picks = new Set(Array.from({ length: 100 }, (_, k) => p.pick(k / 100, 1000 + DOWN_FOR_MS - 1)));
    assert.deepEqual([...picks].sort(), [0, 2]);
    // The draws are spread evenly over the two that are up.
    assert.equal(p.pick(0.49, 1001), 0);
    assert.equal(p.pick(0.5, 1001), 2);
    // Retries move on to the next endpoint that is up.
    assert.equal(p.next(0, 1001), 2);
    assert.equal(p.next(2, 1001), 0);
    // Past the window it is back.
    assert.equal(p.pick(0.34, 1000 + DOWN_FOR_MS), 1);
    assert.equal(p.next(0, 1000 + DOWN_FOR_MS), 1);
  });

  it('with every endpoint down, still picks one (a write must go somewhere)', () => {
    const p = pool();
    for (const i of [0, 1, 2]) p.markDown(i, 0);
    assert.equal(p.pick(0.5, 10), 1);
    assert.equal(p.next(1, 10), 2);
  });
});
