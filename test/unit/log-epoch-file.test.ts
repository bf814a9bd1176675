import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { EpochsFile, SLOT_BYTES, encodeEpochs, readEpochs } from '../../src/node/log/epoch-file.js';
import { EPOCHS_FILE } from '../../src/node/log/file-names.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('pole-epochs-');

/** The older single-record format, as nodes before the two slots wrote it. */
function legacyRecord(accepted: number, current: number, leader: string): Buffer {
  const l = Buffer.from(leader, 'utf8');
  const buf = Buffer.alloc(19 + l.length + 4);
  buf.write('POLEEPOC', 0, 'latin1');
  buf.writeUInt32LE(accepted, 8);
  buf.writeUInt32LE(current, 12);
  buf[16] = 1;
  buf.writeUInt16LE(l.length, 17);
  l.copy(buf, 19);
  buf.writeUInt32LE(crc32(buf.subarray(0, 19 + l.length)), 19 + l.length);
  return buf;
}

describe('epochs file in two slots', () => {
  it('reads back every update, across reopenings, writing one slot per update', async () => {
    const dir = await tempDir();
    assert.deepEqual(await readEpochs(dir), { acceptedEpoch: 0, currentEpoch: 0 }, 'no file: a fresh node');
    let f = new EpochsFile(dir, true);
    for (let i = 1; i <= 5; i++) {
      const e =
        i % 2 === 0
          ? { acceptedEpoch: i, currentEpoch: i - 1, acceptedLeader: `p${i}` }
          : { acceptedEpoch: i, currentEpoch: i };
      const bytes = await f.write(e);
      // The first update creates the file (both slots); every later one writes one slot.
      assert.equal(bytes, i === 1 ? 2 * SLOT_BYTES : SLOT_BYTES);
      assert.deepEqual(await readEpochs(dir), e);
      if (i === 3) {
        await f.close();
        f = new EpochsFile(dir, true);
      }
    }
    await f.close();
    assert.equal((await stat(join(dir, EPOCHS_FILE))).size, 2 * SLOT_BYTES);
  });

  it('a torn update leaves the previous epochs, and the next update goes into the torn slot', async () => {
    const dir = await tempDir();
    const f = new EpochsFile(dir, true);
    await f.write({ acceptedEpoch: 1, currentEpoch: 1 }); // sequence 1, first slot
    await f.write({ acceptedEpoch: 2, currentEpoch: 1, acceptedLeader: 'p2' }); // 2, second slot
    await f.close();
    // A crash part-way through sequence 3 (the first slot): half of its bytes landed.
    const file = join(dir, EPOCHS_FILE);
    const buf = await readFile(file);
    const torn = encodeEpochs({ acceptedEpoch: 3, currentEpoch: 3, acceptedLeader: 'p3' }, 3);
    torn.copy(buf, 0, 0, 16);
    await writeFile(file, buf);
    assert.deepEqual(await readEpochs(dir), { acceptedEpoch: 2, currentEpoch: 1, acceptedLeader: 'p2' });
    // Restarted: the update after the crash must not overwrite the good slot.
    const g = new EpochsFile(dir, true);
    await g.write({ acceptedEpoch: 4, currentEpoch: 4 });
    await g.close();
    const after = await readFile(file);
    assert.deepEqual(
      after.subarray(SLOT_BYTES),
      buf.subarray(SLOT_BYTES),
      'the second slot (sequence 2) untouched',
    );
    assert.deepEqual(await readEpochs(dir), { acceptedEpoch: 4, currentEpoch: 4 });
  });

  it('a file with no good slot is an error naming the file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, EPOCHS_FILE), Buffer.alloc(2 * SLOT_BYTES, 0x5a));
    await assert.rejects(readEpochs(dir), (err: Error) => {
      assert.match(err.message, /corrupt epochs file .*epochs \(1024 bytes, neither slot/);
      return true;
    });
  });

  it('reads the older single-record format and rewrites it in slots at the first update', async () => {
    const dir = await tempDir();
    const file = join(dir, EPOCHS_FILE);
    await writeFile(file, legacyRecord(7, 6, 'p3'));
    assert.deepEqual(await readEpochs(dir), { acceptedEpoch: 7, currentEpoch: 6, acceptedLeader: 'p3' });
    const f = new EpochsFile(dir, false);
    await f.write({ acceptedEpoch: 8, currentEpoch: 7, acceptedLeader: 'p4' });
    await f.write({ acceptedEpoch: 8, currentEpoch: 8, acceptedLeader: 'p4' });
    await f.close();
    assert.equal((await stat(file)).size, 2 * SLOT_BYTES);
    assert.deepEqual(await readEpochs(dir), { acceptedEpoch: 8, currentEpoch: 8, acceptedLeader: 'p4' });
  });

  it('a damaged record of the older format is an error', async () => {
    const dir = await tempDir();
    const bad = legacyRecord(7, 6, 'p3');
    bad.writeUInt8(bad.readUInt8(9) ^ 1, 9);
    await writeFile(join(dir, EPOCHS_FILE), bad);
    await assert.rejects(readEpochs(dir), /corrupt epochs file .*older format/);
  });

  it('refuses values a slot cannot hold before anything is written', () => {
    assert.throws(() => encodeEpochs({ acceptedEpoch: -1, currentEpoch: 0 }), /acceptedEpoch must be a u32/);
    assert.throws(
      () => encodeEpochs({ acceptedEpoch: 1, currentEpoch: 0, acceptedLeader: 'x'.repeat(SLOT_BYTES) }),
      /too long/,
    );
  });
});
