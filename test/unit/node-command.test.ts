import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import NodeCommand from '../../src/commands/node.js';

type OclifError = Error & { oclif?: { exit?: number } };

describe('pole-bench node', () => {
  let dir: string;
  // oclif's Command records a failure in process.exitCode, which would fail this test file.
  const exitCodeBefore = process.exitCode;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-command-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    process.exitCode = exitCodeBefore;
  });
  // oclif finds the package root (for its config) by walking up from here.
  const root = fileURLToPath(import.meta.url);

  it('rejects a bad config with its located message and exit code 2, before starting anything', async () => {
    const file = join(dir, 'p3.yaml');
    writeFileSync(
      file,
      'id: p3\nlisten: { peerPort: 0, clientPort: 0, httpPort: 0 }\npeers: []\ndataDir: d\n',
    );
    await assert.rejects(NodeCommand.run(['--config', file], root), (err: OclifError) => {
      assert.equal(err.oclif?.exit, 2);
      assert.equal(err.message.slice(0, file.length + 13), `${file}:3:8: peers: `);
      assert.match(err.message, /a cluster of 1 server cannot survive losing its leader/);
      return true;
    });
  });

  it('treats a missing config file as bad input too (exit 2)', async () => {
    const file = join(dir, 'absent.yaml');
    await assert.rejects(NodeCommand.run(['--config', file], root), (err: OclifError) => {
      assert.equal(err.oclif?.exit, 2);
      assert.equal(err.message, `${file}: no such file`);
      return true;
    });
  });
});
