// The suites shipped in suites/ load, in full and --quick, and every topology they name exists
// and validates: a typo there would otherwise show only hours into a nightly or paper run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadSuite } from '../../src/experiment/suite-file.js';
import { loadTopology } from '../../src/topology/topology.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SUITES = join(ROOT, 'suites');

for (const name of readdirSync(SUITES).filter((n) => n.endsWith('.yaml'))) {
  test(`suites/${name} loads, full and quick, with topologies that validate`, () => {
    for (const quick of [false, true]) {
      const suite = loadSuite(join(SUITES, name), { quick });
      assert.ok(suite.cells.length > 0, `${name} quick=${quick} has cells`);
      const ids = suite.cells.map((c) => `${c.question ?? ''}/${c.id}`);
      assert.equal(new Set(ids).size, ids.length, 'cell ids are unique');
      for (const file of new Set(suite.cells.map((c) => c.topology))) loadTopology(file);
    }
  });
}

test('the paper suite: 16 + 2 quick runs (Fig. 8b at 50 MB), 250 MB in the full Fig. 8', () => {
  const quick = loadSuite(join(SUITES, 'paper.yaml'), { quick: true });
  assert.equal(quick.cells.length * quick.repeats, 18);
  const full = loadSuite(join(SUITES, 'paper.yaml'));
  const fig8 = full.cells.filter((c) => c.id.startsWith('fig8a.') || c.id.startsWith('fig8b.'));
  assert.deepEqual([...new Set(fig8.map((c) => c.params.preload))].sort(), [
    '100MB',
    '10MB',
    '250MB',
    '50MB',
  ]);
  // Fig. 8a: 4 RTTs (LAN, 20, 80, 172 ms) × 2 oracles × 4 sizes; Fig. 8b: 2 oracles × 4 sizes.
  assert.equal(fig8.length, 4 * 2 * 4 + 2 * 4);
});
