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
export async function writeFileAtomic(
  dir: string,
  name: string,
  chunks: readonly Uint8Array[],
  fsync: boolean,
): Promise<number> {
  const tmp = join(dir, name + TMP_SUFFIX);
  const handle = await open(tmp, 'w');
  let written = 0;
  try {
    const expected = chunks.reduce((sum, c) => sum + c.byteLength, 0);
    const { bytesWritten } = await handle.writev(chunks, 0);
    if (bytesWritten !== expected)
      throw new Error(`short write to ${tmp}: ${bytesWritten} of ${expected} bytes`);
    written = bytesWritten;
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
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
