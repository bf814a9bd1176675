#!/usr/bin/env node
// Writes schemas/topology.schema.json from the compiled zod definition (run `npm run build` first).
// Usage: node scripts/gen-topology-schema.js [--check] [--dist DIR]
//   --check: write nothing; exit 1 when the committed file differs from what would be written.
//   --dist DIR: the compiled output to read (default dist), for builds into another directory.
// The output goes through prettier when it is installed (a dev dependency), so `npm run lint`
// accepts the file as written; the unit test compares parsed JSON, so formatting never matters.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const distAt = process.argv.indexOf('--dist');
const dist = distAt >= 0 ? process.argv[distAt + 1] : 'dist';
if (!dist) {
  console.error('--dist needs a directory');
  process.exit(2);
}
const { topologyJsonSchemaText, TOPOLOGY_SCHEMA_PATH } = await import(
  new URL(`${dist.replace(/\/+$/, '')}/src/topology/json-schema.js`, root).href
);
const target = fileURLToPath(new URL(TOPOLOGY_SCHEMA_PATH, root));

let text = topologyJsonSchemaText();
try {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(target)) ?? {};
  text = await prettier.format(text, { ...options, filepath: target });
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
}

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing: differs
  }
  if (committed !== text) {
    console.error(`${TOPOLOGY_SCHEMA_PATH} is out of date: run node scripts/gen-topology-schema.js`);
    process.exit(1);
  }
  console.log(`${TOPOLOGY_SCHEMA_PATH} is up to date`);
} else {
  writeFileSync(target, text);
  console.log(`wrote ${TOPOLOGY_SCHEMA_PATH}`);
}
