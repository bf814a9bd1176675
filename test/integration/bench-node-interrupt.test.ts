// `pole-bench bench node` interrupted (Ctrl-C, or SIGTERM as a CI step limit sends) stops its
// members and removes their files, exit 3, on every target this machine has: a bench that died of
// the signal left etcd's data dirs behind before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdSkip, zookeeperSkip } from '../support/prerequisites.js';
import { processesUnder } from '../support/processes.js';
import { RUN_JS } from '../support/run-cli.js';

for (const target of ['pole', 'zookeeper', 'etcd'] as const) {
  test(`bench node --target ${target}: SIGTERM once its cluster serves stops it, exit 3, nothing left`, async (t) => {
    const skip = target === 'zookeeper' ? zookeeperSkip : target === 'etcd' ? etcdSkip : false;
    if (skip) return t.skip(skip);
    const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-bench-int-'));
    try {
      const child = spawn(
        process.execPath,
        [RUN_JS, 'bench', 'node', '--target', target, '--duration', '30s', '--kills', '3'],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      // Bounded: a cluster that never serves fails the test instead of hanging it.
      const serving = await Promise.race([
        new Promise<boolean>((resolve) => {
          const look = (): void => (/cluster of 5 serving/.test(out) ? resolve(true) : undefined);
          child.stdout.on('data', look);
          child.stderr.on('data', look);
        }),
        exited.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 90_000).unref()),
      ]);
      assert.ok(serving, `the cluster never served: ${out}`);
      child.kill('SIGTERM');
      assert.equal(await exited, 3, out);
      assert.match(out, /bench node stopped: interrupted \(SIGTERM\)/);
      assert.deepEqual(processesUnder(tmp), [], 'no member left running');
      assert.deepEqual(await readdir(tmp), [], 'no member file left');
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
}
