// A soak's scenario in a topology file: faults repeated with `every`, `restart: killed`,
// `partition: [leader]`, keys written over and over, and thresholds declared in the file; their
// errors name the file, line and field like every other topology error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology, parseTopology } from '../../src/topology/topology.js';
import { loadTopologyForRun } from '../../src/run/run-overrides.js';
import { InputError } from '../../src/util/input-error.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const soak = (faults: string, extra = ''): string => `name: s
datacenters:
  - { name: a, nodes: [p1, p2] }
  - { name: b, nodes: [p3] }
links:
  - { between: [a, b], rtt: 10ms }
workload: { rate: 100, keys: 50 }
scenario:
  duration: 100s
  warmup: 5s
  faults:
${faults}
${extra}`;

function fails(text: string): InputError {
  try {
    parseTopology('soak.yaml', text);
  } catch (err) {
    assert.ok(err instanceof InputError, String(err));
    return err;
  }
  assert.fail('expected the topology to be rejected');
}

describe('topology: a soak scenario', () => {
  it('expands a fault with every into its copies inside the run, in time order', () => {
    const t = parseTopology(
      'soak.yaml',
      soak(`    - { at: 10s, every: 30s, kill: leader }
    - { at: 20s, every: 30s, restart: killed }
    - { at: 50s, partition: [leader] }`),
    );
    assert.deepEqual(
      t.scenario.faults.map((f) => [f.atMs, f.action, f.target, f.everyMs ?? null]),
      [
        [10_000, 'kill', 'leader', 30_000],
        [20_000, 'restart', 'killed', 30_000],
        [40_000, 'kill', 'leader', 30_000],
        // Faults at the same instant keep the order they are written in.
        [50_000, 'restart', 'killed', 30_000],
        [50_000, 'partition', 'leader', null],
        [70_000, 'kill', 'leader', 30_000],
        [80_000, 'restart', 'killed', 30_000],
      ],
    );
    assert.equal(t.workload.keys, 50);
    assert.deepEqual(t.scenario.thresholds, []);
  });

  it('keeps the file thresholds, and rejects a bad one at its line', () => {
    const ok = parseTopology(
      'soak.yaml',
      soak('    - { at: 10s, kill: p1 }', '  thresholds: ["writes.lost == 0", "elections.incomplete == 0"]'),
    );
    assert.deepEqual(ok.scenario.thresholds, ['writes.lost == 0', 'elections.incomplete == 0']);
    const text = soak(
      '    - { at: 10s, kill: p1 }',
      '  thresholds:\n    - writes.lost == 0\n    - writes.lsot == 0',
    );
    const err = fails(text);
    assert.equal(err.field, 'scenario.thresholds[1]');
    assert.equal(err.line, text.split('\n').findIndex((l) => l.includes('lsot')) + 1);
    assert.match(err.problem, /lsot/);
  });

  it('refuses killed outside restart/resume, leader in a restart, and a zero period', () => {
    assert.match(
      fails(soak('    - { at: 10s, kill: killed }')).problem,
      /"killed" .* is for restart and resume, not kill/,
    );
    assert.match(
      fails(soak('    - { at: 10s, restart: leader }')).problem,
      /restart needs a node name or "killed"/,
    );
    const zero = fails(soak('    - { at: 10s, every: 0s, kill: leader }'));
    assert.equal(zero.field, 'scenario.faults[0].every');
  });

  it('reserves "leader" and "killed" as names', () => {
    const node = fails(soak('    - { at: 10s, kill: p1 }').replace('nodes: [p3]', 'nodes: [killed]'));
    assert.match(node.problem, /"killed" is reserved/);
    const dc = fails(
      soak('    - { at: 10s, kill: p1 }')
        .replace('name: b,', 'name: leader,')
        .replace('[a, b]', '[a, leader]'),
    );
    assert.equal(dc.field, 'datacenters[1].name');
  });

  it('a shorter --duration keeps the repeated faults that fit and drops the rest', () => {
    const file = join(ROOT, 'topologies', 'soak.yaml');
    const full = loadTopology(file);
    const short = loadTopologyForRun(file, { duration: '5m' });
    assert.ok(full.scenario.faults.length > short.scenario.faults.length);
    assert.ok(short.scenario.faults.length > 0);
    assert.ok(short.scenario.faults.every((f) => f.atMs < 300_000));
    assert.deepEqual(
      short.scenario.faults.map((f) => f.atMs),
      full.scenario.faults.filter((f) => f.atMs < 300_000).map((f) => f.atMs),
    );
  });

  it('topologies/soak.yaml: 30 leader kills, 6 partitions and heals, delay changes, in 30 minutes', () => {
    const t = loadTopology(join(ROOT, 'topologies', 'soak.yaml'));
    const n = (action: string): number => t.scenario.faults.filter((f) => f.action === action).length;
    assert.equal(t.scenario.durationMs, 30 * 60_000);
    assert.equal(t.scenario.faults.filter((f) => f.action === 'kill' && f.target === 'leader').length, 30);
    assert.equal(n('restart'), 30);
    assert.equal(n('partition'), 6);
    assert.equal(n('heal'), 6);
    assert.ok(n('link') >= 2);
    // No two faults at the same instant: each one's effect can be told apart.
    const times = t.scenario.faults.map((f) => f.atMs);
    assert.equal(new Set(times).size, times.length);
    assert.ok(t.scenario.thresholds.includes('writes.lost == 0'));
  });
});
