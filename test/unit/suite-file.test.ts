import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSuite, runArgs } from '../../src/experiment/suite-file.js';
import { planRuns } from '../../src/experiment/suite-runner.js';
import { InputError } from '../../src/util/input-error.js';

const TOPOLOGIES = fileURLToPath(new URL('../../../topologies/', import.meta.url));

function withSuite(text: string, check: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'pole-bench-suite-file-'));
  try {
    const file = join(dir, 'suite.yaml');
    writeFileSync(file, text.replaceAll('TOPO/', TOPOLOGIES));
    check(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('suite files', () => {
  it("takes reads as a run flag and an axis; suite --reads is the default a file's own wins over", () => {
    withSuite(
      [
        'runs: { duration: 30s }',
        'matrix:',
        '  topology: [TOPO/paper-2dc.yaml]',
        '  reads: [0, 0.2]',
        '',
      ].join('\n'),
      (file) => {
        const swept = loadSuite(file, { reads: 0.5 });
        assert.deepEqual(
          swept.cells.map((c) => c.params.reads),
          [0, 0.2],
        );
        assert.deepEqual(runArgs(swept.cells[1]!, { seed: 1, out: 'o', thresholds: [] }).slice(-2), [
          '--reads',
          '0.2',
        ]);
      },
    );
    withSuite(
      ['runs: { duration: 30s }', 'matrix:', '  topology: [TOPO/paper-2dc.yaml]', ''].join('\n'),
      (file) => {
        const given = loadSuite(file, { reads: 0.25 });
        assert.equal(given.cells[0]!.params.reads, 0.25);
        assert.equal(loadSuite(file).cells[0]!.params.reads, undefined);
      },
    );
  });

  it('expands the matrix into cells named by what varies, with quick overrides', () => {
    withSuite(
      [
        'repeats: 3',
        'runs: { duration: 30s, killAt: 15s }',
        'matrix:',
        '  topology: [TOPO/paper-2dc.yaml]',
        '  oracle: [history, rotating]',
        '  share: [{tud: 1, cern: 0}, {tud: 1, cern: 1}]',
        '  rate: [200]',
        'quick: { repeats: 1, runs: { duration: 10s, killAt: 6s }, matrix: { oracle: [history] } }',
        '',
      ].join('\n'),
      (file) => {
        const full = loadSuite(file);
        assert.equal(full.name, 'suite');
        assert.deepEqual(
          full.cells.map((c) => c.id),
          [
            'paper-2dc.oracle-history.share-tud1-cern0',
            'paper-2dc.oracle-history.share-tud1-cern1',
            'paper-2dc.oracle-rotating.share-tud1-cern0',
            'paper-2dc.oracle-rotating.share-tud1-cern1',
          ],
        );
        assert.equal(full.repeats, 3);
        assert.equal(new Set(full.cells.map((c) => c.configHash)).size, 4);
        const first = full.cells[0]!;
        assert.deepEqual(runArgs(first, { seed: 5, out: 'o', thresholds: ['writes.lost == 0'] }), [
          'run',
          first.topology,
          '--out',
          'o',
          '--seed',
          '5',
          '--quiet',
          '--oracle',
          'history',
          '--rate',
          '200',
          '--duration',
          '30s',
          '--kill-at',
          '15s',
          '--share',
          'tud=1,cern=0',
          '--threshold',
          'writes.lost == 0',
        ]);
        const quick = loadSuite(file, { quick: true });
        assert.equal(quick.repeats, 1);
        assert.deepEqual(
          quick.cells.map((c) => c.params.duration),
          ['10s', '10s'],
        );
        assert.equal(planRuns(quick, 'out').length, 2);
      },
    );
  });

  it('etcdPrefer becomes --etcd-prefer, after the target', () => {
    withSuite(
      [
        'runs: { target: etcd, etcdPrefer: oracle, duration: 30s, killAt: 12s }',
        'matrix: { topology: [TOPO/paper-3dc-deployment-1.yaml] }',
        '',
      ].join('\n'),
      (file) => {
        const [cell] = loadSuite(file).cells;
        const args = runArgs(cell!, { seed: 1, out: 'o', thresholds: [] });
        assert.deepEqual(args.slice(args.indexOf('--target'), args.indexOf('--target') + 4), [
          '--target',
          'etcd',
          '--etcd-prefer',
          'oracle',
        ]);
      },
    );
  });

  it('expands questions, each with its own matrix, runs and quick overrides, cells prefixed by the question', () => {
    withSuite(
      [
        'runs: { rate: 100 }',
        'quick: { repeats: 1, runs: { rate: 50 } }',
        'questions:',
        '  - id: a',
        '    title: First',
        '    runs: { duration: 30s, killAt: 15s }',
        '    matrix: { topology: [TOPO/paper-2dc.yaml], oracle: [history, rotating] }',
        '    quick: { matrix: { oracle: [history] } }',
        '  - id: b',
        '    title: Second',
        '    matrix: { topology: [TOPO/paper-fig8-2dc-lan.yaml], preload: [10MB, 50MB] }',
        '    quick: { skip: true }',
        '',
      ].join('\n'),
      (file) => {
        const full = loadSuite(file);
        assert.deepEqual(
          full.cells.map((c) => [c.id, c.question, c.params.rate, c.params.preload ?? null]),
          [
            ['a.paper-2dc.oracle-history', 'First', 100, null],
            ['a.paper-2dc.oracle-rotating', 'First', 100, null],
            ['b.paper-fig8-2dc-lan.preload-10MB', 'Second', 100, '10MB'],
            ['b.paper-fig8-2dc-lan.preload-50MB', 'Second', 100, '50MB'],
          ],
        );
        const quick = loadSuite(file, { quick: true });
        assert.deepEqual(
          quick.cells.map((c) => [c.id, c.params.rate, c.params.duration]),
          [['a.paper-2dc', 50, '30s']],
        );
      },
    );
  });

  it('names file, line and field for a bad value, a missing topology and a cell its topology refuses', () => {
    const fails = (text: string, pattern: RegExp): void =>
      withSuite(text, (file) =>
        assert.throws(
          () => planRuns(loadSuite(file), 'out'),
          (err: unknown) => err instanceof InputError && pattern.test(err.message),
        ),
      );
    fails(
      'matrix:\n  topology: [TOPO/paper-2dc.yaml]\n  rate: [fast]\n',
      /suite\.yaml:3:\d+: matrix\.rate\[0\]/,
    );
    fails(
      'matrix:\n  topology: [nowhere.yaml]\n',
      /suite\.yaml:2:\d+: matrix\.topology\[0\]: no such topology file/,
    );
    fails(
      'runs: { duration: 10 }\nmatrix:\n  topology: [TOPO/paper-2dc.yaml]\n',
      /suite\.yaml:1:\d+: runs\.duration: expected a duration/,
    );
    fails(
      'runs: { duration: 20s, killAt: 30s }\nmatrix:\n  topology: [TOPO/paper-2dc.yaml]\n',
      /cell paper-2dc: --kill-at: a fault at 30000 ms must fall/,
    );
    fails('repeats: 1\n', /suite\.yaml:1:1: give either matrix or questions/);
    fails(
      'questions:\n  - { id: a, title: A, matrix: { topology: [TOPO/paper-2dc.yaml] } }\n  - { id: a, title: B, matrix: { topology: [TOPO/lan-5.yaml] } }\n',
      /suite\.yaml:3:\d+: questions\[1\]\.id: a is the id of an earlier question/,
    );
    fails(
      'runs: { share: { nowhere: 1 } }\nmatrix:\n  topology: [TOPO/paper-2dc.yaml]\n',
      /cell paper-2dc: --share: "nowhere" is not a data center/,
    );
  });
});
