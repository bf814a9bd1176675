import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { DOCKER_LABELS } from '../../src/runtime/docker/docker-labels.js';
import { dockerSkipReason, nodeImage } from './docker-env.js';

const RUN_JS = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bin', 'run.js');

test('pole-bench clean removes labelled leftovers made on purpose, and says what it removed', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const docker = new Docker();
  const labels = {
    [DOCKER_LABELS.managed]: 'true',
    [DOCKER_LABELS.run]: 'leftover-test',
    [DOCKER_LABELS.role]: 'holder',
  };
  const net = await docker.createNetwork({ Name: 'pole-bench-leftover-test', Labels: labels });
  const c = await docker.createContainer({
    Image: await nodeImage(),
    name: 'pole-bench-leftover-test',
    Entrypoint: ['node', '-e', 'setInterval(()=>{},1<<30)'],
    Labels: labels,
  });
  await c.start();
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [RUN_JS, 'clean'], (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  assert.match(out, /removed container pole-bench-leftover-test \(run leftover-test\)/);
  assert.match(out, /removed network pole-bench-leftover-test/);
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=leftover-test`] });
  assert.deepEqual(await docker.listContainers({ all: true, filters }), []);
  assert.deepEqual(await docker.listNetworks({ filters }), []);
  void net;
});
