import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runNodeScript } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = fileURLToPath(new URL('test/fixtures/guard-signal.mjs', pathToFileURL(ROOT)));
const MODULE = new URL('dist/src/run/run-guard.js', pathToFileURL(ROOT)).href;

describe('RunGuard and signals', () => {
  it('a SIGTERM while an execa subprocess runs aborts the run; the process ends with its own code', async () => {
    const ended = await runNodeScript(SCRIPT, [MODULE]);
    assert.ok(!('timedOut' in ended), `the process was still there after 15 s: ${ended.out} ${ended.err}`);
    assert.equal(ended.signal, null, `killed by ${ended.signal} instead of ending itself: ${ended.err}`);
    assert.equal(ended.code, 3, ended.err);
    assert.equal(ended.out.trim(), 'aborted: interrupted (SIGTERM)');
  });
});
