// A soak's machinery end to end on the process runtime, in a minute: repeated leader kills with
// `restart: killed`, the leader's data center partitioned, a link slowed and restored, keys
// written over and over, the file's own thresholds; every election accounted for, nothing lost,
// every process's memory and open files sampled (topologies/soak.yaml is the 30-minute version).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readResultFile } from '../../src/report/result.js';
import { assertRunExit, ROOT, runCli } from '../support/run-cli.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';

test('a short soak: three leader kills and a partition of the leader, each followed by a serving leader; nothing lost; resources sampled', async () => {
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-soak-'));
  try {
    const r = await runCli([
      'run',
      join(ROOT, 'test', 'fixtures', 'soak-short.yaml'),
      '--runtime',
      'process',
      '--seed',
      '9',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    // The written result reads back through its schema (result@8).
    const result = readResultFile(join(out, 'result.json'));
    assert.equal(result.verdict, 'passed', result.errors.join('; '));
    assertSelfCheckClean(result);
    assert.deepEqual(
      result.thresholds.map((t) => [t.expr, t.ok]),
      [
        ['writes.lost == 0', true],
        ['elections.incomplete == 0', true],
      ],
    );
    // Three kills, three restarts of whoever each kill took down, the partition and its heal, two link changes.
    const faults = result.timeline.faults;
    assert.deepEqual(
      faults.map((f) => [f.action, Math.round(f.atS)]),
      [
        ['kill', 10],
        ['restart', 17],
        ['partition', 22],
        ['heal', 26],
        ['kill', 30],
        ['restart', 37],
        ['link', 40],
        ['link', 44],
        ['kill', 50],
        ['restart', 57],
      ],
    );
    for (let i = 0; i < faults.length; i++)
      if (faults[i]!.action === 'restart')
        assert.equal(
          faults[i]!.node,
          faults[i - 1]!.node,
          'restart: killed brings back the node the kill before it took down',
        );
    const e = result.elections;
    assert.deepEqual(
      e.list.map((x) => x.cause.action),
      ['kill', 'partition', 'kill', 'kill'],
    );
    assert.equal(e.completed, 4);
    assert.equal(e.incomplete, 0);
    for (const x of e.list) {
      assert.notEqual(x.elected, x.leader);
      assert.ok(x.servingMs! > 0 && x.servingMs! < 5_000, JSON.stringify(x));
    }
    // The partition took out the leader the first kill's election made, from its own data center.
    assert.equal(e.list[1]!.leader, e.list[0]!.elected);
    const cut = faults.find((f) => f.action === 'partition')!.node.split(',');
    const dcOf = new Map(
      result.topology.datacenters.flatMap((d) => d.nodes.map((n) => [n, d.name] as const)),
    );
    assert.deepEqual(cut, [dcOf.get(e.list[1]!.leader)]);
    // Keys written over and over: far more writes than keys, and none lost.
    assert.equal(result.writes.lost, 0);
    assert.ok(result.writes.acked > 3 * 100 * 10, `${result.writes.acked} acked`);
    // Memory and files of the harness, every node process (restarted ones too) and every agent.
    const res = result.resources;
    assert.ok(res.sampled);
    const labels = new Set(res.processes.map((p) => `${p.group}:${p.label}`));
    for (const l of ['harness:harness', 'nodes:p1', 'nodes:p2', 'nodes:p3', 'nodes:p4', 'nodes:p5'])
      assert.ok(labels.has(l), `${l} sampled (${[...labels].join(' ')})`);
    assert.ok(
      res.processes.filter((p) => p.group === 'nodes').length >= 5 + 3,
      'restarted nodes are new processes',
    );
    for (const p of res.processes) assert.ok(p.peak.rssMiB > 10 && p.peak.fds > 3, JSON.stringify(p.peak));
    // A minute is too short to judge growth: the maxima stay null rather than read as "no growth".
    assert.equal(res.judged, 0);
    assert.equal(res.maxRssGrowthMiB, null);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    assert.match(
      report,
      /## Elections\n\n4 faults took the serving leader out; after every one a new leader served within 30 s/,
    );
    assert.match(report, /## Resources/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
