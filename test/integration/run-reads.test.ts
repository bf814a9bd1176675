// Runs with reads (issue 46): every operation in history.jsonl, the checker's result in
// result.safety against what the target promises, and `pole-bench check` on the run's own
// history finding exactly what the run did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { etcdSkip } from '../support/prerequisites.js';
import { assertRunExit, ROOT, runCli, runCliOnAQuietMachine } from '../support/run-cli.js';

const TOPOLOGY = join(ROOT, 'topologies', 'paper-2dc.yaml');

async function runWithReads(target: string): Promise<{ result: RunResult; out: string }> {
  const out = await mkdtemp(join(tmpdir(), `pole-bench-reads-${target}-`));
  const r = await runCliOnAQuietMachine(
    [
      'run',
      TOPOLOGY,
      '--target',
      target,
      '--runtime',
      'process',
      '--rate',
      '200',
      '--duration',
      '20s',
      '--kill-at',
      '8s',
      '--reads',
      '0.2',
      '--seed',
      '31',
      '--out',
      out,
      '--json',
    ],
    process.env,
    console.log,
  );
  assertRunExit(r, 0);
  return { result: JSON.parse(await readFile(join(out, 'result.json'), 'utf8')) as RunResult, out };
}

/** The run's own history, checked again by `check`, gives the run's figures exactly. */
async function recheck(out: string, result: RunResult): Promise<void> {
  const c = await runCli(['check', join(out, 'history.jsonl'), '--json']);
  const [file] = JSON.parse(c.stdout) as Array<{
    ops: number;
    keys: number;
    ok: number;
    violated: number;
    unknown: number;
  }>;
  const m = result.safety!.models[0]!;
  assert.deepEqual(
    [file!.ops, file!.keys, file!.ok, file!.violated, file!.unknown],
    [m.ops, m.keys, m.ok, m.violated, m.unknown],
  );
  assert.equal(c.code, m.violated > 0 ? 1 : 0);
}

test('POLE with 20 % reads: the history, its check beside the writes, not held (reads from a member’s own state)', async () => {
  const { result, out } = await runWithReads('pole');
  try {
    const s = result.safety!;
    assert.equal(s.history, 'history.jsonl');
    const m = s.models[0]!;
    assert.equal(m.promised, false);
    assert.equal(s.broken, 0, 'what POLE does not promise is not held against it');
    // What it does promise, a connection's reads in order, is held, and holds.
    const session = s.models[1]!;
    assert.deepEqual([session.model, session.promised, session.violated], ['session', true, 0]);
    assert.ok(session.ops > 500 && session.keys > 300, `${session.ops} reads over ${session.keys} pairs`);
    // 20 s at 200 operations/s: about 4,000, a fifth of them reads; every key of both data centers.
    assert.ok(m.ops > 3_500 && m.ops <= 4_000, `${m.ops} ops`);
    assert.equal(m.unknown, 0);
    assert.equal(m.ok + m.violated, m.keys);
    const lines = (await readFile(join(out, 'history.jsonl'), 'utf8')).trim().split('\n');
    const reads = lines.filter((l) => l.includes('"f":"read"') && l.includes('"type":"invoke"')).length;
    assert.ok(reads > 0.15 * m.ops && reads < 0.25 * m.ops, `${reads} reads of ${m.ops}`);
    // Writes are the rest: the write figures count them alone.
    assert.equal(result.writes.attempted + reads, lines.filter((l) => l.includes('"type":"invoke"')).length);
    await recheck(out, result);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('etcd with 20 % reads: linearizable reads promised, held by the verdict, and found so', async (t) => {
  if (etcdSkip) return t.skip(etcdSkip);
  const { result, out } = await runWithReads('etcd');
  try {
    const m = result.safety!.models[0]!;
    assert.equal(m.promised, true);
    assert.deepEqual([m.violated, m.unknown, result.safety!.broken], [0, 0, 0]);
    assert.ok(result.thresholds.some((x) => x.expr === 'safety.broken == 0' && x.ok));
    await recheck(out, result);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
