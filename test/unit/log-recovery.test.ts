import { EncodedState, snapshotBytes } from '../../src/node/core/state-snapshot.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Txn } from '../../src/node/core/types.js';
import { ZERO_AHEAD_BYTES } from '../../src/node/log/disk-actions.js';
import { DurableStore, LogCorruptionError } from '../../src/node/log/durable-store.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('pole-log-recovery-');

/** Where a snapshot file's data starts. */
const SNAPSHOT_HEADER = 44;
/** Each record is 41 bytes of framing and strings plus 100 bytes of data. */
const RECORD = 141;
const SEG1 = 'log.0000000001';

function txn(epoch: number, counter: number): Txn {
  return {
    zxid: { epoch, counter },
    path: `/key/${counter % 10}`,
    data: new Uint8Array(100).fill(counter),
    clientId: 'c1',
    requestId: counter,
  };
}

function counters(list: readonly Txn[]): number[] {
  return list.map((t) => t.zxid.counter);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * A log of 15 txns 1:1..1:15 written in three flush rounds of five. The first round's write also
 * puts ZERO_AHEAD_BYTES of zeros after its records; the next two write over them.
 */
async function threeRounds(dir: string, segmentBytes?: number): Promise<void> {
  const { store } = await DurableStore.open({ dir, ...(segmentBytes ? { segmentBytes } : {}) });
  for (let r = 0; r < 3; r++) {
    store.apply([{ op: 'append', txns: range(r * 5 + 1, r * 5 + 5).map((c) => txn(1, c)) }]);
    await store.flush();
  }
  await store.close();
}

async function patch(file: string, offset: number, mutate: (b: Buffer) => void): Promise<void> {
  const buf = await readFile(file);
  mutate(buf.subarray(offset));
  await writeFile(file, buf);
}

describe('recovery', () => {
  it('cuts a record torn mid-write off the tail and reports it', async () => {
    const dir = await tempDir();
    await threeRounds(dir);
    const file = join(dir, SEG1);
    assert.equal((await stat(file)).size, 5 * RECORD + ZERO_AHEAD_BYTES);
    await truncate(file, 15 * RECORD - 50);
    const a = await DurableStore.open({ dir });
    assert.deepEqual(counters(a.recovered.txns), range(1, 14));
    assert.equal(a.report.tornTailBytes, RECORD - 50);
    assert.equal((await stat(file)).size, 14 * RECORD, 'the torn bytes were cut from the file');
    // The log carries on cleanly after the cut.
    a.store.apply([{ op: 'append', txns: [txn(1, 15), txn(1, 16)] }]);
    await a.store.close();
    const b = await DurableStore.open({ dir });
    assert.deepEqual(counters(b.recovered.txns), range(1, 16));
    assert.equal(b.report.tornTailBytes, 0);
    await b.store.close();
  });

  it('treats a hole inside the last flush round as a torn write (pages persisted out of order)', async () => {
    const dir = await tempDir();
    await threeRounds(dir);
    const file = join(dir, SEG1);
    await patch(file, 11 * RECORD, (b) => b.fill(0, 0, RECORD));
    const a = await DurableStore.open({ dir });
    assert.deepEqual(counters(a.recovered.txns), range(1, 11));
    assert.equal(a.report.tornTailBytes, 4 * RECORD);
    await a.store.close();
  });

  it('reads zeros past the last record as the end of the log: nothing cut, and appends go on over them', async () => {
    const dir = await tempDir();
    await threeRounds(dir);
    const file = join(dir, SEG1);
    const padded = (await stat(file)).size;
    assert.equal(padded, 5 * RECORD + ZERO_AHEAD_BYTES, 'zeros ahead of the records');
    const a = await DurableStore.open({ dir });
    assert.deepEqual(counters(a.recovered.txns), range(1, 15));
    assert.equal(a.report.tornTailBytes, 0);
    assert.deepEqual(a.report.warnings, []);
    assert.equal((await stat(file)).size, padded, 'nothing cut');
    a.store.apply([{ op: 'append', txns: [txn(1, 16), txn(1, 17)] }]);
    await a.store.close();
    assert.equal((await stat(file)).size, padded, 'written over the zeros, the file not grown');
    const b = await DurableStore.open({ dir });
    assert.deepEqual(counters(b.recovered.txns), range(1, 17));
    await b.store.close();
    // Records that reach past the zeros bring the next run of them in the same write.
    const c = await DurableStore.open({ dir });
    const big = Array.from({ length: Math.ceil(ZERO_AHEAD_BYTES / RECORD) }, (_, i) => txn(1, 18 + i));
    c.store.apply([{ op: 'append', txns: big }]);
    await c.store.close();
    assert.equal((await stat(file)).size, (17 + big.length) * RECORD + ZERO_AHEAD_BYTES);
    const d = await DurableStore.open({ dir });
    assert.equal(d.recovered.txns.length, 17 + big.length);
    assert.equal(d.report.tornTailBytes, 0);
    await d.store.close();
  });

  it('a record torn inside the zeros ahead (its second half never written) is cut, the zeros not counted as torn', async () => {
    const dir = await tempDir();
    await threeRounds(dir);
    const file = join(dir, SEG1);
    // Record 1:15's last 60 bytes (its data) as they were before the write: zeros. Its data is
    // filled with its counter (15), so the byte before them is the last that is not zero.
    await patch(file, 15 * RECORD - 60, (b) => b.fill(0, 0, 60));
    const a = await DurableStore.open({ dir });
    assert.deepEqual(counters(a.recovered.txns), range(1, 14));
    assert.equal(a.report.tornTailBytes, RECORD - 60);
    assert.equal((await stat(file)).size, 14 * RECORD, 'cut after the last whole record');
    await a.store.close();
  });

  it('a file grown with nothing written after the records (zeros) loses nothing and is not cut', async () => {
    const dir = await tempDir();
    await threeRounds(dir);
    const file = join(dir, SEG1);
    await truncate(file, 15 * RECORD + 4096);
    const a = await DurableStore.open({ dir });
    assert.deepEqual(counters(a.recovered.txns), range(1, 15));
    assert.equal(a.report.tornTailBytes, 0);
    await a.store.close();
  });

  for (const [what, record] of [
    ['a record of the first round', 2],
    ['the last record of the first round', 4],
    ['a record of the second round', 7],
  ] as const) {
    it(`refuses corruption in the middle (${what}), naming the file and offset`, async () => {
      const dir = await tempDir();
      await threeRounds(dir);
      const file = join(dir, SEG1);
      await patch(file, record * RECORD + 60, (b) => (b[0]! ^= 0xff));
      const err = await DurableStore.open({ dir }).then(
        () => assert.fail('open should fail'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LogCorruptionError, String(err));
      assert.equal(err.file, file);
      assert.equal(err.offset, record * RECORD);
      assert.match(err.message, new RegExp(`${file.replace(/[.]/g, '\\.')} at offset ${record * RECORD}\\b`));
      assert.match(err.message, /CRC mismatch/);
      // Nothing was "repaired": the file is as it was.
      assert.equal((await stat(file)).size, 5 * RECORD + ZERO_AHEAD_BYTES);
    });
  }

  it('refuses damage in an earlier segment when later segments hold records', async () => {
    const dir = await tempDir();
    await threeRounds(dir, 3 * RECORD);
    const segs = (await readdir(dir)).filter((n) => n.startsWith('log.')).sort();
    assert.ok(segs.length >= 3, segs.join(','));
    const file = join(dir, SEG1);
    // The final bytes of the first segment's records (its first round, five): it looks torn on its own.
    await truncate(file, 5 * RECORD - 10);
    await assert.rejects(DurableStore.open({ dir }), (e: unknown) => {
      assert.ok(e instanceof LogCorruptionError);
      assert.equal(e.file, file);
      assert.match(e.message, /valid records follow it/);
      return true;
    });
  });

  it('refuses a log with a missing segment, or with records out of zxid order', async () => {
    const dir = await tempDir();
    await threeRounds(dir, 3 * RECORD);
    await rm(join(dir, 'log.0000000002'));
    await assert.rejects(DurableStore.open({ dir }), /log\.0000000002 is missing/);

    const dir2 = await tempDir();
    await threeRounds(dir2);
    await copyFile(join(dir2, SEG1), join(dir2, 'log.0000000002'));
    await assert.rejects(
      DurableStore.open({ dir: dir2 }),
      /log record 1:1 in .*log\.0000000002 at offset 0 does not follow 1:15/,
    );
  });

  it('falls back to the previous snapshot when the newest one fails its checksum', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'append', txns: range(1, 10).map((c) => txn(1, c)) }]);
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 3 }, Buffer.from('s3')),
        replacesLog: false,
      },
    ]);
    await a.store.snapshotsWritten();
    const older = await readFile(join(dir, 'snapshot.1.3'));
    a.store.apply([{ op: 'append', txns: range(11, 15).map((c) => txn(1, c)) }]);
    // Still needs the first segment (it holds 1:6..1:10), so nothing the old snapshot needs is deleted.
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 5 }, Buffer.from('s5')),
        replacesLog: false,
      },
    ]);
    await a.store.close();
    // A crash before the older file was removed, and the disk then damaged the newer one.
    await writeFile(join(dir, 'snapshot.1.3'), older);
    await patch(join(dir, 'snapshot.1.5'), SNAPSHOT_HEADER, (b) => (b[0]! ^= 1));
    const b = await DurableStore.open({ dir });
    assert.deepEqual(b.recovered.snapshot?.zxid, { epoch: 1, counter: 3 });
    assert.equal((b.recovered.snapshot ? snapshotBytes(b.recovered.snapshot) : '').toString(), 's3');
    assert.deepEqual(counters(b.recovered.txns), range(4, 15));
    assert.match(b.report.warnings.join('\n'), /snapshot\.1\.5 failed its checksum/);
    const names = await readdir(dir);
    assert.ok(names.includes('snapshot.1.5.corrupt') && names.includes('snapshot.1.3'), names.join(','));
    // A new snapshot after that is the one recovery picks next time.
    b.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 4 }, Buffer.from('s4')),
        replacesLog: false,
      },
    ]);
    await b.store.close();
    const c = await DurableStore.open({ dir });
    assert.deepEqual(c.recovered.snapshot?.zxid, { epoch: 1, counter: 4 });
    assert.deepEqual(counters(c.recovered.txns), range(5, 15));
    await c.store.close();
  });

  it('refuses to fall back to a snapshot whose log segments are gone', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'append', txns: range(1, 10).map((c) => txn(1, c)) }]);
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 3 }, Buffer.from('s3')),
        replacesLog: false,
      },
    ]);
    await a.store.snapshotsWritten();
    const older = await readFile(join(dir, 'snapshot.1.3'));
    a.store.apply([{ op: 'append', txns: range(11, 15).map((c) => txn(1, c)) }]);
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 1, counter: 12 }, Buffer.from('s12')),
        replacesLog: false,
      },
    ]);
    await a.store.close();
    assert.ok(!(await readdir(dir)).includes(SEG1), 'the first segment was compacted away');
    await writeFile(join(dir, 'snapshot.1.3'), older);
    await patch(join(dir, 'snapshot.1.12'), SNAPSHOT_HEADER, (b) => (b[0]! ^= 1));
    await assert.rejects(DurableStore.open({ dir }), /log\.0000000001 is missing/);
  });

  it('refuses to fall back past a damaged SNAP replacement, or a snapshot with an unreadable header', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'append', txns: range(1, 10).map((c) => txn(1, c)) }]);
    await a.store.flush();
    const oldLog = await readFile(join(dir, SEG1));
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 2, counter: 0 }, Buffer.from('leader state')),
        replacesLog: true,
      },
      { op: 'append', txns: [txn(2, 1)] },
    ]);
    await a.store.close();
    // The replaced segment survived (deleting it did not reach the disk) and the SNAP rotted:
    // the old log plus the new one would look like a valid history, but is not one.
    await writeFile(join(dir, SEG1), oldLog);
    await patch(join(dir, 'snapshot.2.0'), SNAPSHOT_HEADER + 3, (b) => (b[0]! ^= 1));
    await assert.rejects(DurableStore.open({ dir }), (e: unknown) => {
      assert.ok(e instanceof LogCorruptionError);
      assert.match(e.message, /snapshot\.2\.0 failed its checksum and it replaced the whole log/);
      return true;
    });
    await patch(join(dir, 'snapshot.2.0'), 0, (b) => b.fill(0, 0, 8));
    await assert.rejects(DurableStore.open({ dir }), /header is unreadable/);
  });

  it('removes leftovers: temp files and segments older than the snapshot', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'append', txns: [txn(1, 1)] }]);
    a.store.apply([
      {
        op: 'snapshot',
        snapshot: new EncodedState({ epoch: 2, counter: 0 }, Buffer.from('s')),
        replacesLog: true,
      },
    ]);
    a.store.apply([{ op: 'append', txns: [txn(2, 1)] }]);
    await a.store.close();
    // As if the process died before deleting the replaced segment, and mid-way through a rename.
    await writeFile(join(dir, SEG1), Buffer.from('old history, never to be read'));
    await writeFile(join(dir, 'epochs.tmp'), Buffer.from('half'));
    const b = await DurableStore.open({ dir });
    assert.deepEqual(counters(b.recovered.txns), [1]);
    assert.deepEqual(b.recovered.txns[0]?.zxid, { epoch: 2, counter: 1 });
    assert.deepEqual((await readdir(dir)).sort(), ['log.0000000002', 'snapshot.2.0']);
    await b.store.close();
  });

  it('refuses a damaged epochs file', async () => {
    const dir = await tempDir();
    const a = await DurableStore.open({ dir });
    a.store.apply([{ op: 'epochs', acceptedEpoch: 3, currentEpoch: 2 }]);
    await a.store.close();
    await patch(join(dir, 'epochs'), 9, (b) => (b[0]! ^= 1));
    await assert.rejects(DurableStore.open({ dir }), /corrupt epochs file .*epochs/);
  });
});
