// The JSON Schema of topology files, for editors (e.g. a `# yaml-language-server: $schema=…` line),
// generated from the same zod definition the loader validates with. It describes the input side:
// fields with defaults are optional and show their default. Cross-field rules (every pair of data
// centers has a delay, names are known, …) are beyond JSON Schema; the loader checks those.
// schemas/topology.schema.json is this, committed; scripts/gen-topology-schema.js rewrites it.
import { z } from 'zod';
import { rawTopologySchema } from './topology-schema.js';

/** Where the committed schema lives, relative to the package root. */
export const TOPOLOGY_SCHEMA_PATH = 'schemas/topology.schema.json';

export function topologyJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(rawTopologySchema, {
    io: 'input',
    target: 'draft-2020-12',
    // Transforms (durations → ms) are output-side; the input side is plain strings with a pattern.
    unrepresentable: 'any',
  });
  return { ...schema, title: 'pole-bench topology' };
}

/** The schema as the committed file holds it (before any formatter): 2-space JSON and a newline. */
export function topologyJsonSchemaText(): string {
  return `${JSON.stringify(topologyJsonSchema(), null, 2)}\n`;
}
