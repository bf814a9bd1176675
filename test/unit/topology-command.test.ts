import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CommandRunInput, CommandRunResult } from './run-command-worker.js';
import type { ModelSummary } from '../../src/topology/model.js';
import type { TopologySummary } from '../../src/topology/summary.js';

const here = dirname(fileURLToPath(import.meta.url));

function repoRoot(): string {
  let dir = here;
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'topologies'))) {
    const up = dirname(dir);
    assert.notEqual(up, dir, 'no package root above the test file');
    dir = up;
  }
  return dir;
}

const root = repoRoot();
// The commands compiled with this test (<build>/test/unit → <build>/src/commands), whichever
// outDir that build went to, rather than whatever dist/ holds.
const commands = `./${relative(root, join(resolve(here, '../..'), 'src', 'commands'))}`;

/** `pole-bench ARGV` through runCommand, in a worker thread (see run-command-worker.ts). */
function cli(argv: readonly string[]): Promise<CommandRunResult> {
  const input: CommandRunInput = { root, commands, argv };
  const worker = new Worker(new URL('./run-command-worker.js', import.meta.url), { workerData: input });
  return new Promise<CommandRunResult>((resolvePromise, reject) => {
    const deadline = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`pole-bench ${argv.join(' ')}: no answer within 20 s`));
    }, 20_000);
    worker.once('message', (m: CommandRunResult) => {
      clearTimeout(deadline);
      resolvePromise(m);
    });
    worker.once('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    worker.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`pole-bench ${argv.join(' ')}: the worker exited (${code}) without an answer`));
    });
  });
}

describe('pole-bench topology validate / model', () => {
  const topo = (name: string): string => join(root, 'topologies', `${name}.yaml`);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'topology-command-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('validate prints a summary: data centers, nodes, RTT matrix, rates', async () => {
    const { stdout, error } = await cli(['topology', 'validate', topo('paper-3dc-deployment-1')]);
    assert.equal(error, undefined, error?.message);
    assert.match(stdout, /^paper-3dc-deployment-1 \(.*\): valid, 3 data centers, 5 nodes$/m);
    assert.match(stdout, /^caltech +p4 \(4\), p5 \(5\) +333\.33 +166\.67, 166\.67$/m);
    assert.match(stdout, /^RTT ms +caltech +slac +fnal$/m);
    assert.match(stdout, /^fnal +77\.06 +53\.26 +0$/m);
    assert.match(stdout, /jitter 2% of each delay, pareto/);
    assert.match(stdout, /oracle worst-case, initial leader p5/);
    assert.match(stdout, /kill leader at 60s/);
    assert.ok(stdout.split('\n').length < 25, 'one screen');
  });

  it('validate --json returns the summary', async () => {
    const { stdout, error } = await cli(['topology', 'validate', topo('paper-2dc'), '--json']);
    assert.equal(error, undefined, error?.message);
    const s = JSON.parse(stdout) as TopologySummary;
    assert.equal(s.name, 'paper-2dc');
    assert.equal(s.rttMs['tud']?.['cern'], 20.75);
    assert.equal(s.oneWayMs['cern']?.['tud'], 10.375);
    assert.deepEqual(
      s.datacenters.map((d) => [d.name, d.rate, d.nodes.map((n) => n.id)]),
      [
        ['tud', 500, ['p1', 'p2']],
        ['cern', 500, ['p3', 'p4', 'p5']],
      ],
    );
  });

  it('validate exits 2 with the located message on a bad file', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'datacenters:\n  - name: a\n    nodes: [p1, p2]\n  - name: b\n    nodes: [p3]\nlinks: []\n',
    );
    const { error } = await cli(['topology', 'validate', file]);
    assert.ok(error, 'expected an error');
    assert.equal(error.exit, 2);
    assert.equal(
      error.message,
      `${file}:6:8: links: no delay between a and b: add {between: [a, b], rtt: …}`,
    );
  });

  it('validate exits 2 for a missing file', async () => {
    const file = join(dir, 'absent.yaml');
    const { error } = await cli(['topology', 'validate', file]);
    assert.equal(error?.exit, 2);
    assert.equal(error?.message, `${file}: no such file`);
  });

  it('model prints scores, per-DC latency and each oracle’s choice', async () => {
    const { stdout, error } = await cli(['model', topo('paper-3dc-deployment-1')]);
    assert.equal(error, undefined, error?.message);
    assert.match(stdout, /^before: p5 leads \(configured\)$/m);
    assert.match(stdout, /^ {2}p5 +caltech +9\.88 +38\.86 +86\.94 +166\.67 +9\.88 +19\.76 +86\.94$/m);
    assert.match(stdout, /^after p5 is lost: every candidate$/m);
    assert.match(stdout, /^ {2}p3 +slac +9\.88 +33\.16 +63\.14 +166\.67 +19\.76 +9\.88 +63\.14$/m);
    assert.match(stdout, /^ {2}worst-case \(this cluster's\) +p3 +19\.76 +9\.88 +63\.14$/m);
    assert.match(stdout, /^ {2}history +p4 /m);
    assert.match(stdout, /^ {2}request +p1 /m);
  });

  it('model --json --oracle adds that oracle', async () => {
    const { stdout, error } = await cli([
      'model',
      topo('paper-3dc-deployment-2'),
      '--oracle',
      'latency:10ms,history',
      '--json',
    ]);
    assert.equal(error, undefined, error?.message);
    const m = JSON.parse(stdout) as ModelSummary;
    assert.equal(m.oracle, 'latency:10ms,history');
    const chosen = Object.fromEntries(m.elections.map((e) => [e.oracle, e.leader]));
    assert.equal(chosen['worst-case'], 'p4');
    assert.equal(chosen['latency:10ms,history'], 'p4');
    assert.equal(m.before.id, 'p5');
    assert.deepEqual(
      m.after.map((r) => r.id),
      ['p1', 'p2', 'p3', 'p4'],
    );
  });

  it('model exits 2 for a bad --oracle and for a bad topology', async () => {
    const bad = await cli(['model', topo('paper-2dc'), '--oracle', 'fastest']);
    assert.equal(bad.error?.exit, 2);
    assert.match(bad.error?.message ?? '', /^--oracle: unknown score oracle "fastest"/);
    const file = join(dir, 'bad-oracle.yaml');
    writeFileSync(file, 'datacenters:\n  - name: a\n    nodes: [p1, p2, p3]\ncluster:\n  oracle: fastest\n');
    const badFile = await cli(['model', file]);
    assert.equal(badFile.error?.exit, 2);
    assert.match(
      badFile.error?.message ?? '',
      new RegExp(`^${file}:5:11: cluster\\.oracle: unknown score oracle`),
    );
  });
});
