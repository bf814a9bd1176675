// A member that holds its event loop ~40 ms says so: the watch's threshold is 20 ms, and a real node
// server reports the stall as a `loop-stalled` event on its event stream.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeConfigSchema } from '../../src/node/config.js';
import { LOOP_STALL_MS, watchLoopStalls } from '../../src/node/loop-stall-watch.js';
import { NodeServer } from '../../src/node/server.js';
import { loopStalls } from '../../src/report/snapshots.js';
import type { NodeEvent } from '../../src/vocabulary/node-events.js';

/** Keeps the event loop busy for `ms`: nothing else on it runs meanwhile. */
function hold(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe('event-loop stalls', () => {
  it('are reported from 20 ms', () => {
    assert.equal(LOOP_STALL_MS, 20);
  });

  it('a loop held 40 ms is reported as a stall of 20 to 40 ms', async () => {
    const stalls: number[] = [];
    const watch = watchLoopStalls((ms) => stalls.push(ms));
    try {
      await sleep(50);
      // Stalls before the hold (a busy machine) are not this one.
      stalls.length = 0;
      hold(40);
      await sleep(50);
    } finally {
      clearInterval(watch);
    }
    // The watch's 20 ms tick ran that much late at least, and at most the whole hold late.
    assert.ok(
      stalls.some((ms) => ms >= LOOP_STALL_MS && ms <= 40 + 20),
      `stalls seen: ${stalls.join(', ')}`,
    );
  });

  it('a node server whose loop is held 40 ms emits loop-stalled on its event stream', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-stall-'));
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString('utf8')));
    const config = nodeConfigSchema.parse({
      id: 'p1',
      listen: { peerPort: 0, clientPort: 0, httpPort: 0 },
      // Two members that never answer (nothing listens there): this one runs alone, electing.
      peers: [
        { id: 'p2', host: '127.0.0.1', port: 1 },
        { id: 'p3', host: '127.0.0.1', port: 2 },
      ],
      dataDir: join(dir, 'p1'),
      fsync: false,
    });
    const server = await NodeServer.start(config, { events: out });
    let heldAt = 0;
    try {
      await sleep(100);
      heldAt = performance.timeOrigin + performance.now();
      hold(40);
      await sleep(60);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
    const stalls = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { t: number; node: string; ev: string; ms?: number })
      .filter((e) => e.ev === 'loop-stalled' && e.t >= heldAt);
    assert.ok(
      stalls.some((e) => e.node === 'p1' && (e.ms ?? 0) >= LOOP_STALL_MS),
      `events after the hold: ${JSON.stringify(stalls)}`,
    );
  });

  it("sum up per member with each stall's instant, for the report and the chart", () => {
    const at = 1_700_000_000_000;
    const ev = (node: string, s: number, ms: number): NodeEvent =>
      ({ t: at + s * 1000, node, ev: 'loop-stalled', ms }) as NodeEvent;
    assert.deepEqual(loopStalls([ev('p4', 15.3, 45), ev('p1', 5.5, 31), ev('p4', 17.2, 23)], at), [
      { node: 'p1', count: 1, longestMs: 31, longestAtS: 5.5, stalls: [{ atS: 5.5, ms: 31 }] },
      {
        node: 'p4',
        count: 2,
        longestMs: 45,
        longestAtS: 15.3,
        stalls: [
          { atS: 15.3, ms: 45 },
          { atS: 17.2, ms: 23 },
        ],
      },
    ]);
  });
});
