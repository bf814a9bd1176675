import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeContainerEnv, nodeProcessEnv, nodeTunables } from '../../src/node/node-process-env.js';

test("a node's glibc tunables: malloc's huge pages added to what it inherits, unless it says otherwise", () => {
  assert.equal(nodeTunables(undefined), 'glibc.malloc.hugetlb=1');
  assert.equal(nodeTunables(''), 'glibc.malloc.hugetlb=1');
  assert.equal(
    nodeTunables('glibc.malloc.arena_max=2'),
    'glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1',
    'kept, and ours appended',
  );
  assert.equal(
    nodeTunables('glibc.malloc.hugetlb=0'),
    'glibc.malloc.hugetlb=0',
    "the caller's own setting wins",
  );
  assert.equal(
    nodeTunables('glibc.malloc.hugetlb=2:glibc.malloc.arena_max=2'),
    'glibc.malloc.hugetlb=2:glibc.malloc.arena_max=2',
  );
});

test("a node's environment is the harness's own with the tunables; a container's only the tunables", () => {
  const env = nodeProcessEnv({ PATH: '/bin', GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' });
  assert.deepEqual(env, { PATH: '/bin', GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1' });
  assert.deepEqual(nodeContainerEnv({ PATH: '/bin' }), ['GLIBC_TUNABLES=glibc.malloc.hugetlb=1']);
});
