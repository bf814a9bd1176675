// `pole-bench run` end to end on the process runtime with the relay: a short two-data-center run
// with a leader kill, checked on its result, not only on its exit code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../../src/report/result.js';
import { descendants, stillAlive } from '../support/processes.js';
import { REPORT_SECTIONS } from '../../src/report/markdown-report.js';
import { assertRunExit, startRunUntilLoad, type RunningCli } from '../support/run-cli.js';
import { checkNodeTunables } from '../support/node-tunables-check.js';
import { linkReading } from '../support/link-reading.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RUN_JS = join(ROOT, 'bin', 'run.js');
const TOPOLOGY = join(ROOT, 'test', 'fixtures', 'e2e-2dc.yaml');

/** The CLI with its own TMPDIR, so what it leaves there is its own doing. */
function run(args: string[], tmp?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = tmp ? { ...process.env, TMPDIR: tmp } : process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [RUN_JS, ...args], { maxBuffer: 64 << 20, env }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('a two-data-center run with a leader kill: new leader, ordered recovery, latency, links, no lost writes', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-e2e-'));
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-e2e-tmp-'));
  try {
    const r = await run(
      [
        'run',
        TOPOLOGY,
        '--runtime',
        'process',
        '--seed',
        '11',
        '--out',
        out,
        '--json',
        '--threshold',
        'writes.lost == 0',
      ],
      tmp,
    );
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as RunResult;
    assert.equal(result.schema, 'pole-bench/result@8');
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assertSelfCheckClean(result);
    assert.equal(result.runtime, 'process');
    assert.equal(result.shaping.mode, 'relay');
    assert.equal(result.leaders.initial, 'p5');
    assert.equal(result.leaders.killed, 'p5');
    // The nodes' malloc on huge pages (src/node/node-process-env.ts), as the report states it and
    // as each node's own process read it.
    checkNodeTunables(result);
    assert.ok(result.leaders.elected && result.leaders.elected !== 'p5', `elected ${result.leaders.elected}`);
    const rec = result.recovery;
    for (const k of ['detectMs', 'electedMs', 'servingMs', 'firstCommitMs'] as const)
      assert.ok(typeof rec[k] === 'number' && rec[k] >= 0, `${k} = ${rec[k]}`);
    assert.ok(
      rec.detectMs! <= rec.electedMs! &&
        rec.electedMs! <= rec.servingMs! &&
        rec.servingMs! <= rec.firstCommitMs!,
    );
    assert.equal(rec.paperRecoveryMs, rec.firstCommitMs! - rec.electedMs!);
    for (const dc of ['east', 'west']) {
      assert.ok((result.latency[dc]?.before?.count ?? 0) > 100, `${dc} before`);
      assert.ok((result.latency[dc]?.after?.count ?? 0) > 100, `${dc} after`);
      // Every data center's clients waited for the new epoch: from the kill, never before it.
      const outage = rec.perDc[dc]?.outageMs;
      assert.ok(typeof outage === 'number' && outage >= rec.electedMs!, `${dc} outage ${outage}`);
    }
    // The floor comes from each window's traced writes and is kept apart from the paper's model,
    // the topology's formula alone; every write's mean less the model lands on it (the run's own
    // cross-check), and so does everything else the run checks itself.
    // (At 200 writes/s for 9 s a window has 5-6 traced writes: a floor where there are 5, too few
    // to be held against every write's mean, which the check says it skipped.)
    assert.ok(['traced', 'none'].includes(result.floor.source), result.floor.source);
    for (const dc of ['east', 'west'])
      for (const w of ['before', 'after'] as const) {
        const floor = result.floor.perDc[dc]?.[w];
        const traced = result.anatomy.perDc[dc]?.[w]?.writes ?? 0;
        if (traced >= 5) assert.ok(typeof floor === 'number' && floor > 0, `${dc} ${w} floor ${floor}`);
      }
    // The self-check sampled the load: five nodes (and p5's restart, if any), two agents, the harness.
    assert.equal(result.cpu.sampled, true);
    assert.ok(result.cpu.windowS >= 8, `window ${result.cpu.windowS} s`);
    assert.ok((result.cpu.groups.nodes?.processes ?? 0) >= 5);
    assert.equal(result.cpu.groups.agents?.processes, 2);
    assert.equal(result.cpu.groups.harness?.processes, 1);
    assert.ok((result.cpu.groups.nodes?.pctOfCore ?? 0) > 0);
    assert.ok(result.cpu.machineBusyPct !== null && result.cpu.machineBusyPct > 0);
    // Per-DC and per-process CPU per acknowledged write.
    assert.equal(result.cpu.ackedWrites, result.writes.acked);
    assert.deepEqual(
      result.cpu.processes
        .filter((p) => p.group === 'nodes')
        .map((p) => p.label)
        .slice(0, 5),
      ['p1', 'p2', 'p3', 'p4', 'p5'],
    );
    assert.ok((result.cpu.groups.nodes?.usPerWrite ?? 0) > 0);
    // Latency anatomy: nodes and agents stamp on one clock, so the parts of each traced write are
    // consecutive and add up to its measured latency; a hop between the data centers took the
    // relay's 5 ms (less 2 % jitter at most) and a little more (sockets, a busy receiver).
    const an = result.anatomy;
    assert.ok(an.traced >= 15 && an.complete >= an.traced * 0.7, `${an.complete} of ${an.traced} complete`);
    const eastBefore = an.perDc.east?.before;
    assert.ok(eastBefore && eastBefore.writes >= 2, 'east before');
    for (const [dc, windows] of Object.entries(an.perDc))
      for (const [w, b] of Object.entries(windows)) {
        assert.ok(b.maxSumErrorMs <= 0.2, `${dc} ${w}: parts off by ${b.maxSumErrorMs} ms`);
        const buckets = b.networkMs + b.transportMs + b.diskMs + b.nodesMs + b.clientMs;
        assert.ok(Math.abs(buckets - b.totalMs) < 1e-6, `${dc} ${w}`);
      }
    // East's writes go to p5 in west and come back: two 5 ms hops on the critical path, and two
    // more where the quorum's deciding ACK came from east (a west follower held up past 10 ms on
    // a busy VM: a CI run read 12 = four writes at 10 and one at 20). Each write's network part is
    // the configured delay of the path it took, so the mean is one of those over the writes.
    const perWrite = (eastBefore.networkMs * eastBefore.writes) / 10;
    assert.ok(
      eastBefore.networkMs >= 10 &&
        eastBefore.networkMs <= 20 &&
        Math.abs(perWrite - Math.round(perWrite)) < 1e-6,
      `east before: network ${eastBefore.networkMs} ms over ${eastBefore.writes} writes`,
    );
    for (const hop of ['forward hop', 'COMMIT hop'] as const) {
      const m = eastBefore.parts[hop] ?? NaN;
      // Never under the relay's delay (less its 2 % jitter): the stamps share one clock. No bound
      // above: the mean is over four or five writes on two busy cores, where one stalled receiver
      // adds ms to it (a CI run on 2026-11-28 read 10.21 ms against the old bound of 10), and a
      // doubled delay (10 ms) sat on that bound anyway. A doubled delay fails the measured RTT
      // below; the relay's own accuracy is tested in relay.test.ts.
      assert.ok(m >= 5 * 0.98 - 0.05, `east ${hop}: ${m} ms for a 5 ms one-way delay`);
    }
    // The link, less what the machine added to the undelayed route read beside it: a CI run read
    // 11.67 ms against a bound of 10 ± 1.5 when only the link was held. A missing or doubled delay
    // (0 or 20) is 10 ms out. The run holds every link itself, closer (self-check.ts), and that
    // check must have run: its verdict is asserted above.
    const link = linkReading(result, 'east', 'west');
    assert.ok(
      link.measuredMs >= 10 * 0.98 && Math.abs(link.beyondMs - 10) <= 3,
      `${link.said}, configured 10`,
    );
    assert.ok(
      result.selfCheck.checked.some((c) => c.startsWith('every link measured')),
      result.selfCheck.checked.join('\n'),
    );
    assert.equal(result.writes.lost, 0);
    assert.equal(result.writes.failed, 0);
    assert.equal(result.writes.acked, result.writes.attempted);
    assert.deepEqual(result.thresholds, [{ expr: 'writes.lost == 0', ok: true, actual: 0 }]);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    for (const section of REPORT_SECTIONS) assert.ok(report.includes(section), `report section ${section}`);
    const events = (await readFile(join(out, 'events.jsonl'), 'utf8')).trim().split('\n');
    assert.ok(events.some((l) => l.includes('"ev":"elected"')));
    const hlog = await readFile(join(out, 'latency.hlog'), 'utf8');
    assert.ok(hlog.includes('Tag=east,') && hlog.includes('Tag=west,'));
    assert.deepEqual(await readdir(tmp), [], 'the run removed its temp dirs');
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});

test('bad input exits 2 naming the flag', async () => {
  const r = await run(['run', TOPOLOGY, '--kill-at', '30s']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--kill-at/);
  // With --json too: the error as JSON on stdout, and the exit code it was raised with.
  const j = await run(['run', TOPOLOGY, '--kill-at', '30s', '--json']);
  assert.equal(j.code, 2, j.stdout);
  const err = (JSON.parse(j.stdout) as { error: { message: string } }).error;
  assert.match(err.message, /--kill-at/);
  // A runtime's own option for another runtime: refused before anything is probed or started.
  const p = await run(['run', TOPOLOGY, '--runtime', 'process', '--place', 'tud=node1']);
  assert.equal(p.code, 2, p.stderr);
  const said = p.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
  assert.match(said, /--place: is the swarm runtime's own option and needs --runtime swarm, not process/);
  // A read path the target does not have, and a share of reads out of range.
  const m = await run(['run', TOPOLOGY, '--reads', '0.2', '--read-mode', 'sync']);
  assert.equal(m.code, 2, m.stderr);
  assert.match(m.stderr.replace(/\s*›\s*/g, ' '), /--read-mode: the pole target reads by default, not sync/);
  const f = await run(['run', TOPOLOGY, '--reads', '1.5']);
  assert.equal(f.code, 2, f.stderr);
  assert.match(f.stderr, /--reads/);
});

test('Ctrl-C in the middle of a run: exit 3, and no node, agent or temp dir is left behind', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-e2e-tmp-'));
  const out = join(tmp, 'out');
  let run: RunningCli | undefined;
  try {
    run = await startRunUntilLoad(
      [TOPOLOGY, '--runtime', 'process', '--duration', '60s', '--kill-at', '30s', '--out', out],
      { ...process.env, TMPDIR: tmp },
    );
    const child = run.child;
    const children = await descendants(child.pid!);
    const cmds = await Promise.all(
      children.map((p) => readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')),
    );
    const count = (what: string): number => cmds.filter((c) => c.includes(`run.js\u0000${what}`)).length;
    assert.equal(count('node'), 5, cmds.join('\n'));
    assert.equal(count('agent'), 2, cmds.join('\n'));
    child.kill('SIGINT');
    const code = await run.exited;
    const { stderr } = run.output();
    assert.equal(code, 3, stderr);
    assert.match(stderr, /interrupted/);
    assert.deepEqual(stillAlive(children), [], 'every child process is gone');
    assert.deepEqual(await readdir(tmp), [], 'no temp dir and no report are left');
  } finally {
    run?.child.kill('SIGKILL');
    await rm(tmp, { recursive: true, force: true });
  }
});

test('--dry-run prints the network, every holder and node container, and the tc plan, and runs nothing', async () => {
  const three = join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml');
  const r = await run(['run', three, '--dry-run', '--shaping', 'netem', '--seed', '4']);
  assertRunExit(r, 0);
  assert.match(r.stdout, /docker network create --driver bridge --subnet 10\.231\.4\.0\/24/);
  assert.equal((r.stdout.match(/--cap-add NET_ADMIN/g) ?? []).length, 5, 'five holders');
  assert.equal((r.stdout.match(/--network container:/g) ?? []).length, 5, 'five node containers');
  assert.match(r.stdout, /tc qdisc replace dev eth0 root handle 1: htb default 1/);
  assert.match(r.stdout, /netem delay 38\.530ms 0\.771ms distribution pareto/);
  assert.match(r.stdout, /u32 match ip dst 10\.231\.4\.11\/32/);
});

test('--dry-run of the zookeeper target: its image per member and the relay addresses per pair', async () => {
  const two = join(ROOT, 'topologies', 'paper-2dc.yaml');
  const r = await run([
    'run',
    two,
    '--target',
    'zookeeper',
    '--dry-run',
    '--shaping',
    'relay',
    '--seed',
    '4',
  ]);
  assertRunExit(r, 0);
  assert.match(r.stdout, /--ip-range 10\.231\.4\.0\/25/);
  assert.equal(
    (r.stdout.match(/pole-bench-zookeeper:\S+ 'sh' '-c'/g) ?? []).length,
    5,
    'five member containers',
  );
  // paper-2dc: 2 members in tud, 3 in cern: 12 ordered pairs across, .128 to .139.
  assert.match(r.stdout, /10\.231\.4\.128 … 10\.231\.4\.139/);
});
