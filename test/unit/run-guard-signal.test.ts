import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = fileURLToPath(new URL('test/fixtures/guard-signal.mjs', pathToFileURL(ROOT)));
const MODULE = new URL('dist/src/run/run-guard.js', pathToFileURL(ROOT)).href;

describe('RunGuard and signals', () => {
  it('a SIGTERM while an execa subprocess runs aborts the run; the process ends with its own code', async () => {
    const child = spawn(process.execPath, [SCRIPT, MODULE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const ended = await Promise.race([
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      ),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000).unref()),
    ]);
    if (ended === null) child.kill('SIGKILL');
    assert.ok(ended !== null, `the process was still there after 15 s: ${out} ${err}`);
    assert.equal(ended.signal, null, `killed by ${ended.signal} instead of ending itself: ${err}`);
    assert.equal(ended.code, 3, err);
    assert.equal(out.trim(), 'aborted: interrupted (SIGTERM)');
  });
});
