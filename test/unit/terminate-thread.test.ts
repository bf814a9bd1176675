import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = new URL('test/fixtures/stuck-thread.mjs', pathToFileURL(ROOT));
const MODULE = new URL('dist/src/util/terminate-thread.js', pathToFileURL(ROOT)).href;

describe('terminateThread', () => {
  it('a thread that cannot finish its clean-up does not keep the process from exiting', async () => {
    const child = spawn(process.execPath, [fileURLToPath(SCRIPT), MODULE], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const started = Date.now();
    const ended = await Promise.race([
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      ),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000).unref()),
    ]);
    if (ended === null) child.kill('SIGKILL');
    assert.ok(ended !== null, `the process was still there after 15 s: ${out} ${err}`);
    assert.equal(out.trim(), 'gone false', 'the thread was stuck, as arranged');
    assert.equal(ended.signal, 'SIGKILL');
    assert.match(
      err,
      /the test thread did not stop within 1 s[\s\S]*exiting with SIGKILL \(the exit code was 5\)/,
    );
    assert.ok(Date.now() - started < 10_000);
  });
});
