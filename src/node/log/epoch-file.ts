// The `epochs` file: acceptedEpoch, currentEpoch and the leader the accepted epoch came from, in
// two slots of SLOT_BYTES each, written in turn:
//   slot: "POLEEPO2" | u32 sequence | u32 acceptedEpoch | u32 currentEpoch | u8 hasLeader |
//         u16 leaderLength | leader (utf8) | u32 crc32 of everything before it | zeros
// The slot with the higher sequence and a good checksum holds the epochs.
//
// Why two slots and not a file replaced atomically (write a temp file, fsync, rename, fsync the
// directory): the epochs are written on a failover's critical path, three times in a row (the new
// leader before its LEADERINFO, a follower before its ACKEPOCH, and again before its ACKNEWLEADER),
// and the atomic replacement is eight file-system calls, each a trip through libuv's thread pool
// and back through an event loop that a failover under load keeps busy. On the 2-core machine one
// replacement took 5-13 ms during `bench node`'s failovers (1.3-2.2 ms idle); one O_DSYNC write of a
// slot 0.3-0.4 ms idle (docs/benchmarks.md, "The epochs file in two slots").
//
// Why it is as safe: an update writes only the slot that does not hold the latest epochs, as one
// aligned write of one slot. A crash or power cut part-way can tear that slot, never the other
// (the file system may write the block holding both, but the other slot's bytes in it are the ones
// already on disk); the torn slot fails its checksum and the other one, the previous durable value,
// is read. A torn
// update was never reported durable, so nothing was sent on its account (the core sends what
// depends on a persist only after it is durable), exactly as if the crash had come before it.
// Updates are sequential: the disk executor runs one action at a time.
//
// A file in the older single-record format ("POLEEPOC", replaced atomically) is still read; the
// first update rewrites it, atomically, in this format.
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { NodeId } from '../core/types.js';
import { EPOCHS_FILE } from './file-names.js';
import { writeFileAtomic } from './fs-helpers.js';

/** One slot: a disk sector, so that a write of one slot is one sector write. */
export const SLOT_BYTES = 512;
const MAGIC = Buffer.from('POLEEPO2', 'latin1');
/** Magic, sequence, two epochs, the leader flag and the leader's length. */
const FIXED = 8 + 4 + 4 + 4 + 1 + 2;
const MAX_LEADER_BYTES = SLOT_BYTES - FIXED - 4;

/** The older format: one record, "POLEEPOC" | u32 accepted | u32 current | u8 | u16 | leader | crc. */
const LEGACY_MAGIC = Buffer.from('POLEEPOC', 'latin1');
const LEGACY_FIXED = 19;

export interface Epochs {
  readonly acceptedEpoch: number;
  readonly currentEpoch: number;
  readonly acceptedLeader?: NodeId;
}

/** The epochs and the sequence of the slot they were read from (0: none written yet). */
interface Latest {
  readonly epochs: Epochs;
  readonly seq: number;
}

/** Encode one slot (SLOT_BYTES, zero-padded); throws RangeError on values it cannot hold. */
export function encodeEpochs(e: Epochs, seq = 1): Buffer {
  for (const [what, v] of [
    ['acceptedEpoch', e.acceptedEpoch],
    ['currentEpoch', e.currentEpoch],
    ['sequence', seq],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${what} must be a u32: ${v}`);
  }
  const leader = e.acceptedLeader === undefined ? undefined : Buffer.from(e.acceptedLeader, 'utf8');
  if (leader && leader.length > MAX_LEADER_BYTES)
    throw new RangeError(`acceptedLeader too long (${leader.length} bytes, at most ${MAX_LEADER_BYTES})`);
  const len = leader?.length ?? 0;
  const buf = Buffer.alloc(SLOT_BYTES);
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(seq, 8);
  buf.writeUInt32LE(e.acceptedEpoch, 12);
  buf.writeUInt32LE(e.currentEpoch, 16);
  buf[20] = leader ? 1 : 0;
  buf.writeUInt16LE(len, 21);
  leader?.copy(buf, FIXED);
  buf.writeUInt32LE(crc32(buf.subarray(0, FIXED + len)), FIXED + len);
  return buf;
}

/** Where the slot of sequence `seq` is: 1 in the first, 2 in the second, 3 in the first again. */
function slotOffset(seq: number): number {
  return ((seq - 1) % 2) * SLOT_BYTES;
}

/** One slot's contents, or null for a slot never written (zeros) or torn (bad checksum). */
function decodeSlot(slot: Buffer): Latest | null {
  if (slot.length < FIXED + 4 || !slot.subarray(0, 8).equals(MAGIC)) return null;
  const len = slot.readUInt16LE(21);
  if (len > MAX_LEADER_BYTES || crc32(slot.subarray(0, FIXED + len)) !== slot.readUInt32LE(FIXED + len))
    return null;
  return {
    seq: slot.readUInt32LE(8),
    epochs: {
      acceptedEpoch: slot.readUInt32LE(12),
      currentEpoch: slot.readUInt32LE(16),
      ...(slot[20] === 1 ? { acceptedLeader: slot.toString('utf8', FIXED, FIXED + len) } : {}),
    },
  };
}

function decodeLegacy(buf: Buffer, file: string): Epochs {
  const len = buf.length >= LEGACY_FIXED ? buf.readUInt16LE(17) : -1;
  const end = LEGACY_FIXED + len;
  if (len < 0 || buf.length !== end + 4 || crc32(buf.subarray(0, end)) !== buf.readUInt32LE(end))
    throw new Error(`corrupt epochs file ${file} (${buf.length} bytes, older format, bad size or checksum)`);
  return {
    acceptedEpoch: buf.readUInt32LE(8),
    currentEpoch: buf.readUInt32LE(12),
    ...(buf[16] === 1 ? { acceptedLeader: buf.toString('utf8', LEGACY_FIXED, end) } : {}),
  };
}

/**
 * The latest epochs in a file's contents. Throws, naming the file, when no slot holds a good
 * record: one update can tear only one slot, so that is damage, not a crash.
 */
function decodeEpochsFile(buf: Buffer, file: string): { latest: Latest; legacy: boolean } {
  if (buf.subarray(0, 8).equals(LEGACY_MAGIC))
    return { latest: { epochs: decodeLegacy(buf, file), seq: 0 }, legacy: true };
  const slots = [buf.subarray(0, SLOT_BYTES), buf.subarray(SLOT_BYTES, 2 * SLOT_BYTES)].map(decodeSlot);
  const good = slots.filter((s): s is Latest => s !== null);
  if (good.length === 0)
    throw new Error(
      `corrupt epochs file ${file} (${buf.length} bytes, neither slot has a good magic and checksum)`,
    );
  const latest = good.reduce((a, b) => (b.seq > a.seq ? b : a));
  return { latest, legacy: false };
}

async function readLatest(file: string): Promise<{ latest: Latest; legacy: boolean } | null> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return decodeEpochsFile(buf, file);
}

/** Read the epochs file of `dir`; a missing file means a fresh node (both epochs 0). */
export async function readEpochs(dir: string): Promise<Epochs> {
  const r = await readLatest(join(dir, EPOCHS_FILE));
  return r?.latest.epochs ?? { acceptedEpoch: 0, currentEpoch: 0 };
}

/**
 * The epochs file of one data directory, open for updates. The first update of a directory whose
 * file is missing or in the older format replaces the file atomically; every later one is one
 * write of one slot (O_DSYNC when `fsync`).
 */
export class EpochsFile {
  private handle: FileHandle | null = null;
  private seq = 0;

  constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
  ) {}

  /** Makes `e` the file's epochs (durable on return when fsync is on); returns the bytes written. */
  async write(e: Epochs): Promise<number> {
    if (this.handle === null) {
      // Recovery read the file at start too; reading its 1 kB again here, once per process, keeps
      // the slots' sequence out of what recovery hands the core.
      const found = await readLatest(join(this.dir, EPOCHS_FILE));
      if (found === null || found.legacy) {
        const first = encodeEpochs(e, 1);
        const written = await writeFileAtomic(
          this.dir,
          EPOCHS_FILE,
          [first, Buffer.alloc(SLOT_BYTES)],
          this.fsync,
        );
        this.seq = 1;
        await this.openHandle();
        return written;
      }
      this.seq = found.latest.seq;
      await this.openHandle();
    }
    const next = this.seq + 1;
    const slot = encodeEpochs(e, next);
    const { bytesWritten } = await this.handle!.write(slot, 0, SLOT_BYTES, slotOffset(next));
    if (bytesWritten !== SLOT_BYTES)
      throw new Error(
        `short write to ${join(this.dir, EPOCHS_FILE)}: ${bytesWritten} of ${SLOT_BYTES} bytes`,
      );
    this.seq = next;
    return bytesWritten;
  }

  private async openHandle(): Promise<void> {
    this.handle = await open(
      join(this.dir, EPOCHS_FILE),
      constants.O_RDWR | (this.fsync ? constants.O_DSYNC : 0),
    );
  }

  async close(): Promise<void> {
    const h = this.handle;
    this.handle = null;
    await h?.close();
  }
}
