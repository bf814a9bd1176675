import { EncodedState, snapshotBytes } from '../../src/node/core/state-snapshot.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecoveredState } from '../../src/node/core/core-types.js';
import type { Txn } from '../../src/node/core/types.js';
import { DurableStore } from '../../src/node/log/durable-store.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('pole-log-store-');

function txn(epoch: number, counter: number, size = 100): Txn {
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i++) data[i] = (epoch * 31 + counter * 7 + i) & 0xff;
  return {
    zxid: { epoch, counter },
    path: `/key/${counter % 10}`,
    data,
    clientId: `c${epoch}`,
    requestId: counter,
  };
}

function txns(epoch: number, from: number, to: number, size = 100): Txn[] {
  const out: Txn[] = [];
  for (let c = from; c <= to; c++) out.push(txn(epoch, c, size));
  return out;
}

/** Plain data for deepEqual (recovered data are Buffer views, written ones Uint8Array). */
function plainTxns(list: readonly Txn[]): unknown[] {
  return list.map((t) => ({ ...t, data: Buffer.from(t.data).toString('hex') }));
}

function assertState(
  got: RecoveredState,
  want: {
    accepted?: number;
    current?: number;
    snapshot?: { epoch: number; counter: number; data: string };
    txns: Txn[];
  },
): void {
  assert.equal(got.acceptedEpoch, want.accepted ?? 0);
  assert.equal(got.currentEpoch, want.current ?? 0);
  if (want.snapshot) {
    assert.ok(got.snapshot, 'a snapshot was recovered');
    assert.deepEqual(got.snapshot.zxid, { epoch: want.snapshot.epoch, counter: want.snapshot.counter });
    assert.equal(snapshotBytes(got.snapshot).toString(), want.snapshot.data);
  } else {
    assert.equal(got.snapshot, undefined);
  }
  assert.deepEqual(plainTxns(got.txns), plainTxns(want.txns));
}

async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('log.')).sort();
}

describe('DurableStore', () => {
  it('opens an empty directory as a fresh node', async () => {
    const dir = join(await tempDir(), 'nested', 'data');
    const { store, recovered, report } = await DurableStore.open({ dir });
    assertState(recovered, { txns: [] });
    assert.equal(report.txns, 0);
    assert.equal(report.tornTailBytes, 0);
    assert.equal(report.snapshotZxid, undefined);
    assert.deepEqual(await segmentFiles(dir), ['log.0000000001']);
    await store.close();
  });

  for (const [fsync, inline] of [
    [true, true],
    [true, false],
    [false, true],
  ] as const) {
    it(`round-trips appends and epochs with fsync ${fsync ? 'on' : 'off'}, written ${inline ? 'inline' : 'by the pool'}`, async () => {
      const dir = await tempDir();
      const a = await DurableStore.open({ dir, fsync });
      a.store.writeRounds(inline ? 'inline' : 'pool');
      const written = [...txns(1, 1, 50, 1024), ...txns(2, 1, 50, 1024)];
      a.store.apply([
        { op: 'epochs', acceptedEpoch: 1, currentEpoch: 1, acceptedLeader: 'p1' },
        { op: 'append', txns: written.slice(0, 50) },
      ]);
      await a.store.flush();
      const mid = await DurableStore.open({ dir, fsync });
      assert.equal(mid.recovered.acceptedLeader, 'p1');
      await mid.store.close();
      a.store.apply([
        { op: 'epochs', acceptedEpoch: 2, currentEpoch: 1, acceptedLeader: 'p2' },
        { op: 'epochs', acceptedEpoch: 2, currentEpoch: 2 },
        { op: 'append', txns: written.slice(50) },
      ]);
      await a.store.flush();
      assert.ok(a.store.bytesWritten > 100 * 1024, 'bytesWritten counts the records');
      await a.store.close();

      const b = await DurableStore.open({ dir, fsync });
      assertState(b.recovered, { accepted: 2, current: 2, txns: written });
      assert.equal(b.recovered.acceptedLeader, undefined, 'an epochs op without a leader clears it');
      assert.equal(b.report.txns, 100);
      assert.equal(b.report.segments, 1);
      await b.store.close();
    });
  }

  it('rolls to a new segment past the size limit and reads all segments back', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 4096 });
    const written = txns(1, 1, 60, 500);
    for (let i = 0; i < 60; i += 6) a.store.apply([{ op: 'append', txns: written.slice(i, i + 6) }]);
    await a.store.close();
    const segs = await segmentFiles(dir);
    assert.ok(segs.length >= 5, `expected several segments, got ${segs.join(',')}`);
    const b = await DurableStore.open({ dir, segmentBytes: 4096 });
    assertState(b.recovered, { txns: written });
    assert.equal(b.report.segments, segs.length);
    await b.store.close();
  });

  it('truncates then appends, inside one segment and across deleted segments', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 2048 });
    a.store.apply([{ op: 'append', txns: txns(1, 1, 40, 300) }]);
    for (let c = 41; c <= 80; c += 4) a.store.apply([{ op: 'append', txns: txns(1, c, c + 3, 300) }]);
    await a.store.flush();
    const before = await segmentFiles(dir);
    // Everything after 1:30 goes, and a new epoch's txns take their place.
    a.store.apply([
      { op: 'truncate', after: { epoch: 1, counter: 30 } },
      { op: 'append', txns: txns(2, 1, 5, 300) },
    ]);
    await a.store.flush();
    const afterCut = await segmentFiles(dir);
    assert.ok(afterCut.length < before.length, 'segments after the cut were deleted');
    // A truncate inside the batch just written, and a no-op truncate past the end.
    a.store.apply([
      { op: 'truncate', after: { epoch: 2, counter: 3 } },
      { op: 'truncate', after: { epoch: 9, counter: 0 } },
      { op: 'append', txns: txns(3, 1, 2, 300) },
    ]);
    await a.store.close();
    const b = await DurableStore.open({ dir, segmentBytes: 2048 });
    assertState(b.recovered, {
      txns: [...txns(1, 1, 30, 300), ...txns(2, 1, 3, 300), ...txns(3, 1, 2, 300)],
    });
    // Carry on from the recovered state: truncate to nothing, append again.
    b.store.apply([
      { op: 'truncate', after: { epoch: 0, counter: 0 } },
      { op: 'append', txns: txns(4, 1, 3) },
    ]);
    await b.store.close();
    const c = await DurableStore.open({ dir, segmentBytes: 2048 });
    assertState(c.recovered, { txns: txns(4, 1, 3) });
    assert.deepEqual(await segmentFiles(dir), ['log.0000000001']);
    await c.store.close();
  });

  it('replaces the whole log with a SNAP, even one below the logged zxids', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 4096 });
    // History from a dead epoch 3 that the leader never had.
    a.store.apply([{ op: 'append', txns: [...txns(1, 1, 20), ...txns(3, 1, 20)] }]);
    await a.store.flush();
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 2, counter: 5 }, Buffer.from('state@2:5')),
        replacesLog: true,
      },
      { op: 'epochs', acceptedEpoch: 4, currentEpoch: 4, acceptedLeader: 'p4' },
      { op: 'append', txns: txns(4, 1, 3) },
    ]);
    await a.store.close();
    const names = (await readdir(dir)).sort();
    assert.deepEqual(
      names.filter((n) => n.startsWith('snapshot.')),
      ['snapshot.2.5'],
    );
    assert.equal((await segmentFiles(dir)).length, 1, 'the replaced segments were deleted');
    const b = await DurableStore.open({ dir });
    assertState(b.recovered, {
      accepted: 4,
      current: 4,
      snapshot: { epoch: 2, counter: 5, data: 'state@2:5' },
      txns: txns(4, 1, 3),
    });
    assert.deepEqual(b.report.snapshotZxid, { epoch: 2, counter: 5 });
    assert.equal(b.recovered.acceptedLeader, 'p4');
    // Appends must continue past the snapshot.
    assert.throws(() => b.store.apply([{ op: 'append', txns: [txn(2, 5)] }]), /out of order/);
    await b.store.close();
  });

  it('compacts on a local snapshot: deletes covered segments, keeps txns after it', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 2048 });
    for (let c = 1; c <= 100; c += 5) a.store.apply([{ op: 'append', txns: txns(1, c, c + 4, 200) }]);
    await a.store.flush();
    const before = await segmentFiles(dir);
    assert.ok(before.length >= 8, `several segments (${before.length})`);
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 70 }, Buffer.from('s70')),
        replacesLog: false,
      },
    ]);
    await a.store.snapshotsWritten();
    const afterSnap = await segmentFiles(dir);
    assert.ok(
      afterSnap.length < before.length - 3,
      `covered segments deleted (${before.length} → ${afterSnap.length})`,
    );
    assert.ok(afterSnap[0]! > before[0]!, 'the oldest segments went');
    a.store.apply([{ op: 'append', txns: txns(1, 101, 110, 200) }]);
    // A second snapshot replaces the first file once it is durable.
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 90 }, Buffer.from('s90')),
        replacesLog: false,
      },
    ]);
    await a.store.close();
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith('snapshot.')),
      ['snapshot.1.90'],
    );
    const b = await DurableStore.open({ dir, segmentBytes: 2048 });
    assertState(b.recovered, {
      snapshot: { epoch: 1, counter: 90, data: 's90' },
      txns: txns(1, 91, 110, 200),
    });
    // An older local snapshot than the current one is a caller bug.
    assert.throws(
      () =>
        b.store.apply([
          {
            op: 'snapshot',
            snapshot: new EncodedState({ epoch: 1, counter: 80 }, new Uint8Array(0)),
            replacesLog: false,
          },
        ]),
      /older than the current one/,
    );
    await b.store.close();
  });

  it('a local snapshot is written beside the log: appends after it are durable before it is', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 4096 });
    a.store.apply([{ op: 'append', txns: txns(1, 1, 10, 200) }]);
    await a.store.flush();
    // 64 chunks of 1 MiB, each one disk write; counts how many the writer has taken so far.
    let taken = 0;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const big = {
      zxid: { epoch: 1, counter: 10 },
      byteLength: 64 * chunk.length,
      *chunks(): Iterable<Uint8Array> {
        for (let i = 0; i < 64; i++) {
          taken++;
          yield chunk;
        }
      },
      contents: () => {
        throw new Error('not parsed here');
      },
    };
    a.store.apply([{ op: 'snapshot', snapshot: big, replacesLog: false }]);
    a.store.apply([{ op: 'append', txns: txns(1, 11, 12, 200) }]);
    await a.store.flush();
    const atFlush = taken;
    await a.store.snapshotsWritten();
    assert.ok(atFlush < 64, `the append was durable after ${atFlush} of 64 snapshot chunks`);
    assert.equal(taken, 64);
    await a.store.close();
    const b = await DurableStore.open({ dir, segmentBytes: 4096 });
    assert.equal(b.recovered.snapshot?.byteLength, 64 * chunk.length);
    assert.deepEqual(
      b.recovered.txns.map((t) => t.zxid.counter),
      [11, 12],
    );
    await b.store.close();
  });

  it('a local snapshot that cannot be written fails the store, and its log stays whole', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, segmentBytes: 4096 });
    a.store.apply([{ op: 'append', txns: txns(1, 1, 10, 200) }]);
    await a.store.flush();
    const broken = {
      zxid: { epoch: 1, counter: 10 },
      byteLength: 10,
      *chunks(): Iterable<Uint8Array> {
        yield Buffer.alloc(5);
        throw new Error('encoder broke');
      },
      contents: () => {
        throw new Error('not parsed here');
      },
    };
    a.store.apply([{ op: 'snapshot', snapshot: broken, replacesLog: false }]);
    await a.store.flush();
    await assert.rejects(a.store.snapshotsWritten(), /encoder broke/);
    assert.throws(() => a.store.apply([{ op: 'append', txns: txns(1, 11, 11, 200) }]), /encoder broke/);
    await a.store.close().catch(() => undefined);
    const b = await DurableStore.open({ dir, segmentBytes: 4096 });
    assert.equal(b.recovered.snapshot, undefined);
    assert.deepEqual(
      b.recovered.txns.map((t) => t.zxid.counter),
      Array.from({ length: 10 }, (_, i) => i + 1),
    );
    await b.store.close();
  });

  for (const inline of [true, false])
    it(`shares flush rounds among concurrent callers (group commit) and loses nothing, written ${inline ? 'inline' : 'by the pool'}`, async () => {
      const dir = await tempDir();
      const a = await DurableStore.open({ dir, fsync: true });
      a.store.writeRounds(inline ? 'inline' : 'pool');
      const pending: Promise<void>[] = [];
      const written: Txn[] = [];
      for (let i = 1; i <= 200; i++) {
        const t = txn(1, i, 256);
        written.push(t);
        a.store.apply([{ op: 'append', txns: [t] }]);
        pending.push(a.store.flush());
      }
      await Promise.all(pending);
      // Inline, the round waits for the turn's end and takes all 200; the pool starts one at once.
      if (inline) assert.equal(a.store.flushRounds, 1, 'one round for the turn');
      assert.ok(a.store.flushRounds < 200 / 2, `200 flush calls shared ${a.store.flushRounds} rounds`);
      assert.ok(a.store.flushRounds >= 1);
      // Nothing applied since the last flush: resolves without another round.
      const rounds = a.store.flushRounds;
      await a.store.flush();
      assert.equal(a.store.flushRounds, rounds);
      // Without closing (as after a crash), a second reader sees every txn.
      const b = await DurableStore.open({ dir });
      assertState(b.recovered, { txns: written });
      await b.store.close();
      await a.store.close();
    });

  it('writes inline when quiet: a turn’s flushes share one round, and one right after a round goes to the pool', async () => {
    const batch = async (store: DurableStore, from: number): Promise<number> => {
      const before = store.flushRounds;
      const pending: Promise<void>[] = [];
      for (let i = from; i < from + 50; i++) {
        store.apply([{ op: 'append', txns: [txn(1, i, 64)] }]);
        pending.push(store.flush());
      }
      await Promise.all(pending);
      return store.flushRounds - before;
    };
    // Never quiet long enough after the first round: the pool starts a round at once and the
    // rest of the turn's flushes share the next.
    const busy = await DurableStore.open({ dir: await tempDir(), quietMs: 60_000 });
    assert.equal(await batch(busy.store, 1), 1, 'the first round: quiet since the store opened');
    assert.ok((await batch(busy.store, 51)) >= 2, 'through the pool');
    await busy.store.close();
    // Always quiet: each turn's flushes are one inline round.
    const quiet = await DurableStore.open({ dir: await tempDir(), quietMs: 0 });
    assert.equal(await batch(quiet.store, 1), 1);
    assert.equal(await batch(quiet.store, 51), 1);
    await quiet.store.close();
  });

  it('writes many small batches queued for one round (more chunks than one writev takes)', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, fsync: false });
    const written = txns(1, 1, 3000, 16);
    for (const t of written) a.store.apply([{ op: 'append', txns: [t] }]);
    await a.store.flush();
    assert.equal(a.store.flushRounds, 1);
    const b = await DurableStore.open({ dir });
    assertState(b.recovered, { txns: written });
    await b.store.close();
    await a.store.close();
  });

  it('close() flushes what was applied; the store refuses work afterwards', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir, fsync: false });
    a.store.apply([{ op: 'append', txns: txns(1, 1, 3) }]);
    const closing = a.store.close();
    assert.throws(
      () => a.store.apply([{ op: 'append', txns: [txn(1, 4)] }]),
      /closed/,
      'no apply once close() began',
    );
    await Promise.all([closing, a.store.close()]);
    assert.throws(() => a.store.apply([{ op: 'append', txns: [txn(1, 4)] }]), /closed/);
    await assert.rejects(a.store.flush(), /closed/);
    const b = await DurableStore.open({ dir });
    assertState(b.recovered, { txns: txns(1, 1, 3) });
    await b.store.close();
  });

  it('rejects appends that do not go past the last zxid', async () => {
    const dir = await tempDir();
    const { store } = await DurableStore.open({ dir });
    store.apply([{ op: 'append', txns: txns(2, 1, 3) }]);
    assert.throws(() => store.apply([{ op: 'append', txns: [txn(2, 3)] }]), /2:3 does not follow 2:3/);
    assert.throws(() => store.apply([{ op: 'append', txns: [txn(1, 9)] }]), /out of order/);
    assert.throws(() => store.apply([{ op: 'append', txns: [txn(2, 5), txn(2, 4)] }]), /out of order/);
    await store.close();
    const b = await DurableStore.open({ dir });
    assertState(b.recovered, { txns: txns(2, 1, 3) });
    await b.store.close();
  });

  it('fails every waiter and all later work when the disk fails', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'append', txns: txns(1, 1, 2) }]);
    await a.store.flush();
    await rm(dir, { recursive: true, force: true });
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 2 }, new Uint8Array(1)),
        replacesLog: false,
      },
    ]);
    const results = await Promise.allSettled([a.store.flush(), a.store.flush()]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.throws(() => a.store.apply([{ op: 'append', txns: [txn(1, 3)] }]), /ENOENT/);
    await assert.rejects(a.store.flush(), /ENOENT/);
    await a.store.close();
    await assert.rejects(stat(dir));
  });
});
