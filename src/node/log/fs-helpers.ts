// Small file-system steps that durability depends on: syncing a directory (so a created, renamed or
// deleted entry survives a power cut) and replacing a file atomically.
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { TMP_SUFFIX } from './file-names.js';

/** fsync a directory: makes entries created, renamed or removed in it durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replace `dir/name` by `chunks`, atomically: write `name.tmp`, fsync it, rename it over `name`,
 * fsync the directory. A crash leaves either the old file or the new one, never a mix. With
 * `fsync` off only the rename's atomicity remains (enough against a process crash, not a power cut).
 * Returns the bytes written.
 */
export function writeFileAtomic(
  dir: string,
  name: string,
  chunks: readonly Uint8Array[],
  fsync: boolean,
): Promise<number> {
  return writeFileAtomicStream(
    dir,
    name,
    (async function* () {
      yield* chunks;
    })(),
    fsync,
  );
}

/**
 * writeFileAtomic for contents produced as they are written: each chunk is written (and the write
 * awaited) before the next is asked for, so a large file never has to exist in memory at once. An
 * error from the producer leaves only the temp file, which is removed.
 */
export async function writeFileAtomicStream(
  dir: string,
  name: string,
  chunks: AsyncIterable<Uint8Array>,
  fsync: boolean,
): Promise<number> {
  const tmp = join(dir, name + TMP_SUFFIX);
  const handle = await open(tmp, 'w');
  let written = 0;
  try {
    for await (const chunk of chunks) {
      const { bytesWritten } = await handle.write(chunk, 0, chunk.byteLength, written);
      if (bytesWritten !== chunk.byteLength)
        throw new Error(`short write to ${tmp}: ${bytesWritten} of ${chunk.byteLength} bytes`);
      written += bytesWritten;
    }
    if (fsync) await handle.sync();
  } catch (err) {
    await handle.close();
    await unlinkIfExists(tmp);
    throw err;
  }
  await handle.close();
  await rename(tmp, join(dir, name));
  if (fsync) await fsyncDir(dir);
  return written;
}

/** Remove a file; a file that is already gone is not an error. */
export async function unlinkIfExists(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
