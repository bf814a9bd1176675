// `pole-bench run --target etcd` end to end on the process runtime: three members with a leader
// kill and restart, and the paper's two data centers with its leader killed, checked on the
// result; a member that cannot start failing the run at once with etcd's own words; and a
// machine where no namespace can be made, refused as a usage error. Nothing may be left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../../src/report/result.js';
import { predictElected, predictLatency } from '../../src/topology/model.js';
import { checkKillRun, checkPaper2dcEtcdRun, recoveryLine } from '../support/etcd-run-checks.js';
import { parseTopology } from '../../src/topology/topology.js';
import { etcdMissing, etcdSkip } from '../support/prerequisites.js';
import { processesUnder } from '../support/processes.js';
import { assertRunExit, ROOT, runCli, runCliOnAQuietMachine } from '../support/run-cli.js';

/** etcd processes whose data dir lives under `dir` (this test's own TMPDIR). */
const etcdsUnder = (dir: string): string[] => processesUnder(dir, 'etcd');

/** Runs the CLI with a TMPDIR of its own; checks that nothing of the run is left; gives the result. */
async function runEtcd(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string; out: string }> {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-etcd-e2e-'));
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-etcd-e2e-tmp-'));
  try {
    const r = await runCliOnAQuietMachine(
      [...args, '--out', out],
      { ...process.env, TMPDIR: tmp, ...env },
      console.log,
    );
    assert.deepEqual(etcdsUnder(tmp), [], 'no etcd left running');
    assert.deepEqual(await readdir(tmp), [], 'the run removed its temp dirs');
    return { ...r, out };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

test('three etcd members: the leader killed and restarted, another elected, every acknowledged write read back', async (t) => {
  if (etcdSkip) return t.skip(etcdSkip);
  const r = await runEtcd([
    'run',
    join(ROOT, 'test', 'fixtures', 'etcd-3.yaml'),
    '--target',
    'etcd',
    '--runtime',
    'process',
    '--seed',
    '3',
    '--json',
  ]);
  try {
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    const rec = result.recovery;
    t.diagnostic(`${recoveryLine(result)}; ${result.writes.acked} acked`);
    checkKillRun(result, 'e3');
    // A Raft election: the survivors wait out an election timeout (500 ms here, randomised up to
    // twice that) after the last heartbeat before one stands.
    assert.ok(rec.electedMs! >= 400 && rec.electedMs! < 5_000, `elected after ${rec.electedMs} ms`);
    assert.deepEqual(
      result.timeline.faults.map((f) => [f.action, f.node]),
      [
        ['kill', 'e3'],
        ['restart', 'e3'],
      ],
    );
    const events = (await readFile(join(r.out, 'events.jsonl'), 'utf8')).trim().split('\n');
    assert.ok(events.some((l) => l.includes('"ev":"leader-lost"') && l.includes('"src":"etcd-log"')));
    // The restarted member rejoined and follows the new leader.
    assert.ok(
      events.some(
        (l) =>
          l.includes('"ev":"following"') &&
          l.includes('"node":"e3"') &&
          l.includes(`"leader":"${result.leaders.elected}"`),
      ),
      'e3 follows the new leader after its restart',
    );
  } finally {
    await rm(r.out, { recursive: true, force: true });
  }
});

test('paper-2dc on etcd: p5 killed, another elected, latency over the model of the leader etcd elected, nothing lost', async (t) => {
  if (etcdSkip) return t.skip(etcdSkip);
  const r = await runEtcd([
    'run',
    join(ROOT, 'topologies', 'paper-2dc.yaml'),
    '--target',
    'etcd',
    '--runtime',
    'process',
    '--rate',
    '50',
    '--duration',
    '40s',
    '--kill-at',
    '15s',
    '--seed',
    '7',
    '--json',
  ]);
  try {
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    checkPaper2dcEtcdRun(result, (l) => t.diagnostic(l));
  } finally {
    await rm(r.out, { recursive: true, force: true });
  }
});

test("a member that cannot start fails the run at once with etcd's message, exit 3, nothing left", async (t) => {
  if (etcdSkip) return t.skip(etcdSkip);
  const started = Date.now();
  const r = await runEtcd(
    ['run', join(ROOT, 'test', 'fixtures', 'etcd-3.yaml'), '--target', 'etcd', '--runtime', 'process'],
    { POLE_BENCH_ETCD_ARGS: '--quota-backend-bytes=notanumber' },
  );
  try {
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout + r.stderr, /before it started/);
    assert.match(r.stdout + r.stderr, /invalid value "notanumber" for flag -quota-backend-bytes/);
    assert.ok(Date.now() - started < 30_000, 'failed at once, not after a start timeout');
  } finally {
    await rm(r.out, { recursive: true, force: true });
  }
});

test('where no namespace can be made for a member, --target etcd on processes is refused before anything starts: exit 2, saying what works instead', async (t) => {
  if (etcdMissing) return t.skip(etcdMissing);
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-no-unshare-'));
  try {
    // An unshare that fails as it does in a container with Docker's default privileges.
    const unshare = join(dir, 'unshare');
    await writeFile(
      unshare,
      '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n',
      {
        mode: 0o755,
      },
    );
    const began = Date.now();
    const r = await runCli(
      ['run', join(ROOT, 'topologies', 'paper-2dc.yaml'), '--target', 'etcd', '--runtime', 'process'],
      {
        ...process.env,
        POLE_BENCH_UNSHARE: unshare,
        TMPDIR: dir,
      },
    );
    assert.equal(r.code, 2, r.stderr);
    const said = r.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
    assert.match(said, /--target etcd --runtime process: etcd members need an \/etc\/hosts of their own/);
    assert.match(said, /Operation not permitted/);
    assert.match(said, /Use --runtime docker/);
    // Refused before anything started: nothing of a run in its temp dir, no etcd under it.
    assert.deepEqual(etcdsUnder(dir), []);
    assert.deepEqual((await readdir(dir)).sort(), ['unshare']);
    assert.ok(Date.now() - began < 20_000, `took ${Date.now() - began} ms`);
    // doctor asks the same probe, and says the same.
    const d = await runCli(['doctor', '--json'], {
      ...process.env,
      POLE_BENCH_UNSHARE: unshare,
      TMPDIR: dir,
    });
    assert.equal(d.code, 0, d.stderr);
    const cells = (
      JSON.parse(d.stdout) as { runs: { target: string; runtime: string; ok: boolean; why?: string }[] }
    ).runs;
    const cell = cells.find((c) => c.target === 'etcd' && c.runtime === 'process');
    assert.equal(cell?.ok, false);
    assert.ok(said.includes(cell.why!.replace(/\s+/g, ' ')), `doctor: ${cell.why}\nrun: ${said}`);
    assert.equal(cells.find((c) => c.target === 'pole' && c.runtime === 'process')?.ok, true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--etcd-prefer oracle on paper-3dc-deployment-1: after the kill, the oracle choice leads, Raft choice first', async (t) => {
  if (etcdSkip) return t.skip(etcdSkip);
  const file = join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml');
  const topology = parseTopology(file, await readFile(file, 'utf8'));
  const want = predictElected(topology, topology.cluster.oracle, ['p5']).leader;
  const r = await runEtcd([
    'run',
    file,
    '--target',
    'etcd',
    '--etcd-prefer',
    'oracle',
    '--runtime',
    'process',
    '--rate',
    '50',
    '--duration',
    '30s',
    '--kill-at',
    '12s',
    '--seed',
    '5',
    '--json',
  ]);
  try {
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    const rec = result.recovery;
    t.diagnostic(
      `oracle ${topology.cluster.oracle} wants ${want}; Raft elected ${result.leaders.elected} after ${rec.electedMs?.toFixed(0)} ms, ` +
        `handed to ${result.leaders.transferredTo} after ${rec.transferMs?.toFixed(0)} ms`,
    );
    checkKillRun(result, 'p5');
    const events = (await readFile(join(r.out, 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ev: string; node: string; leader?: string; to?: string });
    // Whoever leads last is the oracle's choice.
    const leaders = events.filter((e) => e.ev === 'elected' && e.leader === e.node).map((e) => e.node);
    assert.equal(leaders.at(-1), want, `leaders in turn: ${leaders.join(' → ')}`);
    if (result.leaders.elected === want) {
      // Raft chose it itself: nothing to hand over.
      assert.equal(result.leaders.transferredTo, null);
    } else {
      assert.equal(result.leaders.transferredTo, want);
      assert.ok(
        events.some((e) => e.ev === 'transfer-asked' && e.node === result.leaders.elected && e.to === want),
      );
      assert.ok(rec.transferMs! > rec.electedMs!, JSON.stringify(rec));
      const report = await readFile(join(r.out, 'report.md'), 'utf8');
      assert.match(report, new RegExp(`Handed to ${want} \\(--etcd-prefer: MoveLeader\\), leads`));
    }
    // The "after" model is the oracle choice's.
    const predicted = predictLatency(
      topology,
      want,
      topology.nodes.map((n) => n.id).filter((id) => id !== 'p5'),
    );
    for (const dc of topology.datacenters) assert.equal(result.model[dc.name]?.after, predicted[dc.name]);
  } finally {
    await rm(r.out, { recursive: true, force: true });
  }
});

test('--etcd-prefer is refused (exit 2) without --target etcd, and for a member the topology does not have', async () => {
  const file = join(ROOT, 'topologies', 'paper-2dc.yaml');
  const notEtcd = await runCli(['run', file, '--etcd-prefer', 'p1', '--runtime', 'process'], process.env);
  assert.equal(notEtcd.code, 2, notEtcd.stderr);
  assert.match(notEtcd.stderr, /--etcd-prefer[\s\S]*needs[\s\S]*--target[\s\S]*etcd/);
  const nobody = await runCli(
    ['run', file, '--target', 'etcd', '--etcd-prefer', 'p9', '--runtime', 'process'],
    process.env,
  );
  assert.equal(nobody.code, 2, nobody.stderr);
  assert.match(nobody.stderr, /p9 is neither a member[\s\S]*of[\s\S]*paper-2dc/);
});
