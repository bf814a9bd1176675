import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeContainerEnv, nodeProcessEnv, nodeTunables } from '../../src/node/node-process-env.js';
import { nodeTunablesSeen } from '../../src/report/node-tunables-seen.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';

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

test('what each node read of its tunables: from its last `started` event that says; none from members that do not', () => {
  const started = (t: number, node: string, glibcTunables?: string | null): ClusterEvent => ({
    t,
    node,
    ev: 'started',
    ...(glibcTunables !== undefined ? { glibcTunables } : {}),
  });
  assert.equal(
    nodeTunablesSeen([started(1, 'p1'), started(2, 'p2')]),
    undefined,
    'ZooKeeper, etcd, older runs',
  );
  assert.deepEqual(
    nodeTunablesSeen([
      started(1, 'p1', 'glibc.malloc.hugetlb=0'),
      started(2, 'p2', null),
      { t: 3, node: 'p1', ev: 'stopped' },
      // p1 restarted: what it read then is what its later life ran with.
      started(4, 'p1', 'glibc.malloc.hugetlb=1'),
    ]),
    { p1: 'glibc.malloc.hugetlb=1', p2: null },
  );
});
