import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runNodeScript } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = fileURLToPath(new URL('test/fixtures/stuck-thread.mjs', pathToFileURL(ROOT)));
const MODULE = new URL('dist/src/util/terminate-thread.js', pathToFileURL(ROOT)).href;

describe('terminateThread', () => {
  it('a thread that cannot finish its clean-up does not keep the process from exiting', async () => {
    const ended = await runNodeScript(SCRIPT, [MODULE]);
    assert.ok(!('timedOut' in ended), `the process was still there after 15 s: ${ended.out} ${ended.err}`);
    assert.equal(ended.out.trim(), 'gone false', 'the thread was stuck, as arranged');
    assert.equal(ended.signal, 'SIGKILL');
    assert.match(
      ended.err,
      /the test thread did not stop within 1 s[\s\S]*exiting with SIGKILL \(the exit code was 5\)/,
    );
    assert.ok(ended.ms < 10_000);
  });
});
