import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOPOLOGY_SCHEMA_PATH, topologyJsonSchema } from '../../src/topology/json-schema.js';

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'schemas'))) {
    const up = dirname(dir);
    assert.notEqual(up, dir, 'no package root above the test file');
    dir = up;
  }
  return dir;
}

test('the committed topology JSON Schema is what the generator produces now', () => {
  const committed: unknown = JSON.parse(readFileSync(join(repoRoot(), TOPOLOGY_SCHEMA_PATH), 'utf8'));
  assert.deepEqual(
    committed,
    topologyJsonSchema(),
    `${TOPOLOGY_SCHEMA_PATH} is out of date: npm run build && node scripts/gen-topology-schema.js`,
  );
});

test('the schema describes the input side: defaults optional, durations as strings, link forms', () => {
  const s = topologyJsonSchema() as {
    required: string[];
    properties: Record<string, { properties?: Record<string, unknown>; items?: { oneOf?: unknown[] } }>;
  };
  assert.deepEqual(s.required, ['datacenters']);
  const scenario = s.properties['scenario']?.properties ?? {};
  assert.deepEqual(
    { ...(scenario['duration'] as object), pattern: undefined },
    { default: '60s', type: 'string', pattern: undefined },
  );
  assert.equal(s.properties['links']?.items?.oneOf?.length, 2);
});
