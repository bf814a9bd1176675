// `pole-bench check` as a script calls it: its exit codes (0 linearizable, 1 violated, 5 unknown,
// 2 a broken history, 3 an unreadable file) and its --json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/run-cli.js';
import { generateHistory, toEdn } from '../../src/check/history-generator.js';

const W = (v: number, p: number, t0: number, t1: number): string[] => [
  `{:type :invoke, :f :write, :value ${v}, :process ${p}, :time ${t0}}`,
  `{:type :ok, :f :write, :value ${v}, :process ${p}, :time ${t1}}`,
];
const R = (v: number, p: number, t0: number, t1: number): string[] => [
  `{:type :invoke, :f :read, :value nil, :process ${p}, :time ${t0}}`,
  `{:type :ok, :f :read, :value ${v}, :process ${p}, :time ${t1}}`,
];

test('check: exit 0, 1, 5, 2 and 3, and --json with the counterexample', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-check-test-'));
  try {
    const good = join(dir, 'good.edn');
    const stale = join(dir, 'stale.edn');
    await writeFile(good, [...W(1, 0, 0, 10), ...W(2, 1, 20, 30), ...R(2, 2, 40, 50)].join('\n'));
    await writeFile(stale, [...W(1, 0, 0, 10), ...W(2, 1, 20, 30), ...R(1, 2, 40, 50)].join('\n'));
    assert.equal((await runCli(['check', good])).code, 0);
    const v = await runCli(['check', good, stale, '--json']);
    assert.equal(v.code, 1, v.stderr);
    const out = JSON.parse(v.stdout) as Array<{
      file: string;
      ok: number;
      violated: number;
      counterexamples: Array<{ ops: Array<{ line: number; f: string; value: unknown }> }>;
    }>;
    assert.deepEqual(
      out.map((f) => [f.ok, f.violated]),
      [
        [1, 0],
        [0, 1],
      ],
    );
    assert.deepEqual(
      out[1]!.counterexamples[0]!.ops.map((o) => [o.line, o.f, o.value]),
      [
        [1, 'write', '1'],
        [3, 'write', '2'],
        [5, 'read', '1'],
      ],
    );
    // Too long for the search in a millisecond: 20 clients on one register writing 0-4.
    const hard = join(dir, 'hard.edn');
    await writeFile(
      hard,
      toEdn(generateHistory({ seed: 1, ops: 20_000, keys: 1, processes: 20, values: 5 }).events),
    );
    const u = await runCli(['check', hard, '--budget', '1ms', '--json']);
    assert.equal(u.code, 5, u.stderr);
    assert.equal((JSON.parse(u.stdout) as Array<{ unknown: number }>)[0]!.unknown, 1);
    const broken = join(dir, 'broken.edn');
    await writeFile(broken, R(1, 0, 0, 1)[1]!);
    const b = await runCli(['check', broken]);
    assert.equal(b.code, 2);
    assert.match(
      b.stderr.replace(/\s*›\s*/g, ' '),
      /broken\.edn:1: ok of process 0, which has no invoke open/,
    );
    assert.equal((await runCli(['check', join(dir, 'absent.edn')])).code, 3);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
