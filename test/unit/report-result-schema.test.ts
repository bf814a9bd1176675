import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/util/input-error.js';
import { parseResult, readResultFile } from '../../src/report/result.js';
import { RESULT_SCHEMA_ID, runResultSchema } from '../../src/vocabulary/result-schema.js';
import { result2dc, type MutableResult } from './report-fixture.js';

/** The first issue's path and message when `r` does not validate. */
function firstIssue(r: unknown): { path: string; message: string } {
  const parsed = runResultSchema.safeParse(r);
  assert.equal(parsed.success, false, 'expected the result to be rejected');
  const issue = parsed.error?.issues[0];
  return { path: (issue?.path ?? []).join('.'), message: issue?.message ?? '' };
}

function broken(edit: (r: MutableResult) => void): MutableResult {
  const r = result2dc();
  edit(r);
  return r;
}

describe('result.json schema', () => {
  it('accepts the fixture, survives a JSON round trip and keeps every field', () => {
    const r = result2dc();
    const back = parseResult(JSON.parse(JSON.stringify(r)));
    assert.deepEqual(back, r);
    assert.equal(back.schema, RESULT_SCHEMA_ID);
  });

  it('accepts a failed run where nothing was observed', () => {
    const r = result2dc();
    r.verdict = 'run-failed';
    r.errors = ['the relay could not bind'];
    r.leaders = { ...r.leaders, initial: null, killed: null, elected: null, epoch: null, scores: {} };
    r.recovery = {
      transferMs: null,
      detectMs: null,
      electedMs: null,
      servingMs: null,
      firstCommitMs: null,
      paperRecoveryMs: null,
      faultAtS: null,
      scheduledAtS: null,
      perDc: { tud: { outageMs: null, longestAckGapMs: null } },
    };
    r.latency = {
      tud: { before: null, after: null, during: null, warmup: null, attempted: 0, failed: 0, lost: null },
    };
    r.model = { tud: { before: null, after: null } };
    r.links = { tud: { cern: { configuredRttMs: 20.75, measuredRttMs: null } } };
    r.load = { targetRate: 1000, achievedRate: null, latenessP99Ms: null };
    r.timeline = { startedAt: null, seconds: [], faults: [] };
    assert.equal(runResultSchema.safeParse(r).success, true);
  });

  it("keeps a data center's lost-agent reason through a JSON round trip, and wants it a string", () => {
    const r = result2dc();
    r.latency.cern = {
      before: null,
      after: null,
      during: null,
      warmup: null,
      attempted: 0,
      failed: 0,
      lost: 'load agent exited (code 0, signal null)',
    };
    assert.deepEqual(parseResult(JSON.parse(JSON.stringify(r))).latency.cern, r.latency.cern);
    assert.equal(
      firstIssue(broken((b) => ((b.latency.cern as { lost?: unknown }).lost = true))).path,
      'latency.cern.lost',
    );
  });

  it('rejects another schema version (result@1 had the floor folded into the model)', () => {
    assert.equal(
      firstIssue(broken((r) => ((r as { schema: string }).schema = 'pole-bench/result@1'))).path,
      'schema',
    );
  });

  it('rejects missing and mistyped fields, naming the path', () => {
    assert.equal(firstIssue(broken((r) => delete (r as Partial<MutableResult>).recovery)).path, 'recovery');
    assert.equal(
      firstIssue(broken((r) => ((r.latency.tud!.after as { p99: unknown }).p99 = '23.35'))).path,
      'latency.tud.after.p99',
    );
    assert.equal(firstIssue(broken((r) => (r.writes.lost = -1))).path, 'writes.lost');
    assert.equal(firstIssue(broken((r) => (r.writes.acked = 1.5))).path, 'writes.acked');
    assert.equal(firstIssue(broken((r) => (r.verdict = 'ok' as never))).path, 'verdict');
    assert.equal(firstIssue(broken((r) => (r.startedAt = 'yesterday'))).path, 'startedAt');
    assert.equal(
      firstIssue(broken((r) => (r.timeline.faults[0]!.action = 'explode' as never))).path,
      'timeline.faults.0.action',
    );
    assert.equal(
      firstIssue(broken((r) => ((r.leaders.scores as Record<string, unknown>).p1 = 3))).path,
      'leaders.scores.p1',
    );
  });

  it('rejects a "passed" verdict with a failed threshold', () => {
    const issue = firstIssue(broken((r) => (r.verdict = 'passed')));
    assert.equal(issue.path, 'verdict');
    assert.match(issue.message, /threshold failed/);
  });

  it('reads a file back, and names file and field when it is broken', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-result-'));
    try {
      const good = join(dir, 'result.json');
      await writeFile(good, JSON.stringify(result2dc(), null, 2));
      assert.equal(readResultFile(good).leaders.elected, 'p4');

      const bad = join(dir, 'bad.json');
      await writeFile(
        bad,
        JSON.stringify(
          broken((r) => ((r.load as { targetRate: unknown }).targetRate = 'lots')),
          null,
          2,
        ),
      );
      assert.throws(
        () => readResultFile(bad),
        (err: unknown) =>
          err instanceof InputError &&
          err.file === bad &&
          err.field === 'load.targetRate' &&
          err.line !== undefined,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
