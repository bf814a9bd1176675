// The load agents' endpoint pool: a server whose connection is refused gets no new writes for a
// while (doubling while it stays down), so a dead server does not cost each of its writes a
// refused connect; it is tried again once the pause is over.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { EndpointPool } from '../../src/load/retrying-writer.js';
import { freePorts } from '../../src/util/free-port.js';

describe('EndpointPool', () => {
  it('routes around a refused endpoint, then probes it again after the pause', async () => {
    const [dead, live] = await freePorts(2);
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(live, '127.0.0.1', resolve));
    let now = 0;
    const pool = new EndpointPool(
      [
        { host: '127.0.0.1', port: dead! },
        { host: '127.0.0.1', port: live! },
      ],
      1_000,
      () => now,
    );
    try {
      assert.equal(pool.route(0), 0, 'nothing known down yet');
      await assert.rejects(pool.client(0));
      assert.equal(pool.route(0), 1, 'refused: writes meant for it go to the next endpoint');
      assert.equal(pool.route(1), 1);
      now = 99;
      assert.equal(pool.route(0), 1);
      now = 100;
      assert.equal(pool.route(0), 0, 'after 100 ms one write probes it');
      await assert.rejects(pool.client(0));
      now = 250;
      assert.equal(pool.route(0), 1, 'still down: the pause doubled to 200 ms');
      now = 300;
      assert.equal(pool.route(0), 0);
      // An endpoint that answers is up again at once.
      await pool.client(1);
      pool.drop(1);
      assert.equal(pool.route(1), 0, 'a lost connection counts as down too');
    } finally {
      await pool.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
