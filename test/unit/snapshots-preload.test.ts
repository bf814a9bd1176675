import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeEvent } from '../../src/vocabulary/node-events.js';
import { snapshotTransfers } from '../../src/report/snapshots.js';
import { parseByteSize } from '../../src/topology/byte-size.js';

describe('byte sizes', () => {
  it('reads decimal and binary units and refuses a bare number', () => {
    assert.equal(parseByteSize('250MB'), 250_000_000);
    assert.equal(parseByteSize('512kB'), 512_000);
    assert.equal(parseByteSize('1.5 GiB'), 1.5 * 1024 ** 3);
    assert.equal(parseByteSize('64B'), 64);
    assert.throws(() => parseByteSize('250'), /a size with a unit/);
    assert.throws(() => parseByteSize('250mb'), /a size with a unit/);
  });
});

describe('snapshot transfers', () => {
  const ev = (e: Record<string, unknown>): NodeEvent => e as unknown as NodeEvent;
  it('pairs each snapshot sent with its receipt, and keeps one never installed', () => {
    const load = 1_000_000;
    const events = [
      ev({ t: load + 100, node: 'p5', ev: 'snapshot-sent', to: 'p1', bytes: 52_000_000, zxid: '1:60000' }),
      ev({ t: load + 150, node: 'p5', ev: 'snapshot-sent', to: 'p2', bytes: 52_000_000, zxid: '1:60000' }),
      ev({
        t: load + 900,
        node: 'p1',
        ev: 'snapshot-received',
        from: 'p5',
        why: 'sync',
        bytes: 52_000_000,
        zxid: '1:60000',
      }),
      ev({ t: load + 5_000, node: 'p4', ev: 'snapshot-sent', to: 'p1', bytes: 53_000_000, zxid: '2:10' }),
      ev({
        t: load + 6_250.5,
        node: 'p1',
        ev: 'snapshot-received',
        from: 'p4',
        why: 'fetched',
        bytes: 53_000_000,
        zxid: '2:10',
      }),
    ];
    assert.deepEqual(snapshotTransfers(events, load), [
      { atS: 0.1, from: 'p5', to: 'p1', bytes: 52_000_000, zxid: '1:60000', transferMs: 800, why: 'sync' },
      { atS: 0.15, from: 'p5', to: 'p2', bytes: 52_000_000, zxid: '1:60000', transferMs: null, why: null },
      { atS: 5, from: 'p4', to: 'p1', bytes: 53_000_000, zxid: '2:10', transferMs: 1250.5, why: 'fetched' },
    ]);
  });
});
