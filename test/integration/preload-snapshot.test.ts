// The paper's recovery experiment in small (issue 14): 50 MB of state written before the load, p1
// killed and restarted 600 writes behind (past the sync diff limit), then the leader killed. p1
// must be brought in line with a snapshot of the whole state, and the run must say who sent it,
// how big it was and how long it took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { assertRunExit, ROOT, runCli } from '../support/run-cli.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';

test(
  '50 MB preloaded and p1 outdated: a SNAP of at least 50 MB to p1, its transfer time, nothing lost',
  { timeout: 300_000 },
  async () => {
    const out = await mkdtemp(join(tmpdir(), 'pole-bench-preload-'));
    try {
      const r = await runCli([
        'run',
        join(ROOT, 'test', 'fixtures', 'preload-lag-2dc.yaml'),
        '--runtime',
        'process',
        '--seed',
        '21',
        '--out',
        out,
        '--json',
      ]);
      assertRunExit(r, 0);
      const result = JSON.parse(r.stdout) as RunResult;
      assert.equal(result.verdict, 'passed', result.errors.join('; '));
      assertSelfCheckClean(result);
      assert.ok(
        result.preload && result.preload.bytes >= 50_000_000,
        `preload ${JSON.stringify(result.preload)}`,
      );
      assert.equal(result.preload.writes, Math.ceil(50_000_000 / 1024));
      const toP1 = result.snapshots.filter((s) => s.to === 'p1');
      // On a busy machine the leader may give up on a first 50 MB transfer (p1 not in sync within
      // the sync limit) and send it again: the report lists the first as never installed. What
      // must hold is that p1 installed one, so the test looks at the installed one.
      const snap = toP1.find((s) => s.transferMs !== null);
      assert.ok(snap !== undefined, `no snapshot to p1 installed: ${JSON.stringify(result.snapshots)}`);
      assert.ok(snap.bytes >= 50_000_000, `${snap.bytes} bytes`);
      assert.ok(['p3', 'p4', 'p5', 'p2'].includes(snap.from));
      assert.ok(snap.transferMs !== null && snap.transferMs > 0, `transfer ${snap.transferMs} ms`);
      // p1 came back at 8 s (seconds from the load start) and got its snapshot after that.
      assert.ok(snap.atS >= 8, `sent at ${snap.atS} s`);
      assert.equal(result.writes.lost, 0);
      const report = await readFile(join(out, 'report.md'), 'utf8');
      assert.match(report, /Preloaded before the load: 48,829 znodes, 50\.0 MB/);
      assert.match(report, new RegExp(`\\| ${snap.from} \\| p1 \\| sync \\|`));
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  },
);
