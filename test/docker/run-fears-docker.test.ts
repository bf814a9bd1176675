// The faults leader election fears on the docker runtime: the POLE members in containers, the
// relay in the run's holder namespace cutting one way, a bridge and a ring of majorities, a
// minority paused (docker pause) and every container restarted in turn; the same outcome as on
// processes (test/support/fears-checks.ts), and no container or network left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { dockerLeftovers, dockerSkipReason } from './docker-env.js';
import { assertRunExit, ROOT, runCli } from '../support/run-cli.js';
import { checkFearsRun } from '../support/fears-checks.js';

// This fixture found a write lost on docker (2 of 19 runs): a leader that stepped down in the turn
// it proposed kept the txn in memory and not on disk, led again, and lost it at its restart in the
// roll. Fixed in the node (abandonRole); test/unit/node-core-join.test.ts makes that turn.
test('in containers: a one-way cut of the leader deposes it; a bridge, a ring, a paused minority and a roll are survived', async (t) => {
  const skip = await dockerSkipReason('pole');
  if (skip) return t.skip(skip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-fears-docker-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'test', 'fixtures', 'fears-2dc.yaml'),
      '--runtime',
      'docker',
      '--seed',
      '11',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.runtime, 'docker');
    t.diagnostic(
      `cause ${JSON.stringify(result.leaders.cause)}; elections ${result.elections.list.map((e) => `${e.cause.action}→${e.elected}`).join(', ')}; ${result.writes.acked} acked`,
    );
    checkFearsRun(result);
    assert.deepEqual(await dockerLeftovers(), []);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
