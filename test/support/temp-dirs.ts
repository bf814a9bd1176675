// Temporary directories for a test file, removed when the file's tests are done.
import { after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A maker of fresh directories named `prefix…` under the OS's temp dir; all removed after the file. */
export function tempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  after(async () => {
    await Promise.all(made.map((d) => rm(d, { recursive: true, force: true })));
  });
  return async () => {
    const d = await mkdtemp(join(tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
