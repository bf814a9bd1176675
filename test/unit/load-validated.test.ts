import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../src/util/input-error.js';
import {
  formatFieldPath,
  inputErrorAt,
  loadValidatedFile,
  parseSource,
  validateParsed,
} from '../../src/util/load-validated.js';

const schema = z.strictObject({
  name: z.string(),
  cluster: z.strictObject({
    timers: z.strictObject({ tickMs: z.number().positive(), syncLimit: z.int().positive().default(5) }),
    nodes: z.array(z.strictObject({ id: z.string(), dc: z.string() })).min(1),
  }),
});

const good = `# a topology
name: demo
cluster:
  timers:
    tickMs: 50
  nodes:
    - id: p1
      dc: east
    - id: p2
      dc: west
`;

/** 1-based line and column of the `nth` occurrence of `needle` in `text`. */
function posOf(text: string, needle: string, nth = 1): { line: number; column: number } {
  let at = -1;
  for (let i = 0; i < nth; i++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at >= 0, `fixture has no occurrence ${nth} of ${needle}`);
  }
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, column: at - before.lastIndexOf('\n') };
}

function loadError(file: string, s: z.ZodType = schema): InputError {
  try {
    loadValidatedFile(file, s);
  } catch (err) {
    assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the load to fail');
}

describe('loadValidatedFile', () => {
  let dir: string;
  let n = 0;
  const write = (text: string, ext = 'yaml'): string => {
    const file = join(dir, `f${n++}.${ext}`);
    writeFileSync(file, text);
    return file;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'load-validated-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('returns the validated value with defaults applied', () => {
    const value = loadValidatedFile(write(good), schema);
    assert.equal(value.cluster.timers.syncLimit, 5);
    assert.deepEqual(
      value.cluster.nodes.map((x) => x.id),
      ['p1', 'p2'],
    );
  });

  it('reads JSON too', () => {
    const json = JSON.stringify(
      { name: 'j', cluster: { timers: { tickMs: 1 }, nodes: [{ id: 'a', dc: 'b' }] } },
      null,
      2,
    );
    assert.equal(loadValidatedFile(write(json, 'json'), schema).name, 'j');
  });

  it('points at the offending value, naming its path', () => {
    const text = good.replace('tickMs: 50', 'tickMs: -5');
    const file = write(text);
    const err = loadError(file);
    const pos = posOf(text, '-5');
    assert.equal(err.field, 'cluster.timers.tickMs');
    assert.equal(err.line, pos.line);
    assert.equal(err.column, pos.column);
    assert.equal(
      err.message,
      `${file}:${pos.line}:${pos.column}: cluster.timers.tickMs: expected a positive number, got -5`,
    );
    assert.equal(err.exitCode, 2);
  });

  it('finds items of lists', () => {
    const text = good.replace('dc: west', 'dc: 7');
    const err = loadError(write(text));
    assert.equal(err.field, 'cluster.nodes[1].dc');
    assert.deepEqual([err.line, err.column], Object.values(posOf(text, '7')));
    assert.match(err.problem, /expected a string, got 7/);
  });

  it('falls back to the key naming the parent when a field is missing', () => {
    const text = good.replace('    tickMs: 50\n', '    syncLimit: 3\n');
    const err = loadError(write(text));
    assert.equal(err.field, 'cluster.timers.tickMs');
    assert.deepEqual([err.line, err.column], Object.values(posOf(text, 'timers:')));
    assert.match(err.problem, /^required \(expected a number\)/);
  });

  it('falls back to the list item when a field of an item is missing', () => {
    const text = good.replace('      dc: west\n', '');
    const err = loadError(write(text));
    assert.equal(err.field, 'cluster.nodes[1].dc');
    assert.deepEqual([err.line, err.column], Object.values(posOf(text, 'id: p2')));
  });

  it('points at the key of an unknown field', () => {
    const text = good.replace('    tickMs: 50\n', '    tickMs: 50\n    tikMs: 5\n');
    const err = loadError(write(text));
    assert.equal(err.field, 'cluster.timers.tikMs');
    assert.equal(err.problem, 'unknown field');
    assert.deepEqual([err.line, err.column], Object.values(posOf(text, 'tikMs')));
  });

  it('points at a key given with no value', () => {
    const text = good.replace('name: demo', 'name:');
    const err = loadError(write(text));
    assert.equal(err.field, 'name');
    assert.deepEqual([err.line, err.column], Object.values(posOf(text, 'name:')));
  });

  it('locates refinements by their path', () => {
    const refined = schema.superRefine((v, ctx) => {
      if (v.cluster.nodes.length < 3) {
        ctx.addIssue({ code: 'custom', path: ['cluster', 'nodes'], message: 'need at least 3 nodes' });
      }
    });
    const file = write(good);
    const err = loadError(file, refined);
    const pos = posOf(good, '- id: p1');
    assert.equal(err.message, `${file}:${pos.line}:${pos.column}: cluster.nodes: need at least 3 nodes`);
  });

  it('gives line and column for YAML syntax errors', () => {
    const text = 'name: demo\ncluster: {\n  timers: [1, 2\n';
    const err = loadError(write(text));
    assert.equal(err.field, '');
    assert.ok(err.line !== undefined && err.line >= 2, `line ${String(err.line)}`);
    assert.ok(err.column !== undefined && err.column >= 1);
    assert.match(err.message, /^.*\.yaml:\d+:\d+: invalid YAML: /);
  });

  it('reports the exact spot of a nested mapping in a compact one', () => {
    const text = 'name: demo\nfoo: bar: baz\n';
    const err = loadError(write(text));
    assert.deepEqual([err.line, err.column], [2, 6]);
  });

  it('rejects duplicate keys where the second one is', () => {
    const text = 'name: a\nname: b\n';
    const err = loadError(write(text));
    assert.equal(err.line, 2);
    assert.match(err.problem, /unique/);
  });

  it('reports an alias to a missing anchor', () => {
    const text = 'name: *nowhere\n';
    const err = loadError(write(text));
    assert.deepEqual([err.line, err.column], [1, 7]);
    assert.match(err.problem, /nowhere/);
  });

  it('says when the file is empty', () => {
    const err = loadError(write('# nothing here\n'));
    assert.match(err.problem, /the file is empty/);
    assert.equal(err.line, 1);
  });

  it('reports an unreadable file without a position', () => {
    const err = loadError(join(dir, 'missing.yaml'));
    assert.equal(err.line, undefined);
    assert.match(err.message, /missing\.yaml: no such file$/);
  });

  it('supports checks made after validation through inputErrorAt', () => {
    const parsed = parseSource('t.yaml', good);
    const value = validateParsed('t.yaml', parsed, schema);
    assert.equal(value.name, 'demo');
    const err = inputErrorAt('t.yaml', parsed, ['cluster', 'nodes', 1, 'id'], 'p2 is taken');
    const pos = posOf(good, 'p2');
    assert.equal(err.message, `t.yaml:${pos.line}:${pos.column}: cluster.nodes[1].id: p2 is taken`);
  });

  it('resolves YAML merge keys before validating', () => {
    const text =
      'name: m\ncluster:\n  timers: &t\n    tickMs: 10\n  nodes:\n    - &n { id: a, dc: x }\n    - <<: *n\n      id: b\n';
    const value = loadValidatedFile(write(text), schema);
    assert.deepEqual(value.cluster.nodes[1], { id: 'b', dc: 'x' });
  });
});

describe('formatFieldPath', () => {
  it('writes dotted names and indexed items', () => {
    assert.equal(formatFieldPath(['peers', 2, 'id']), 'peers[2].id');
    assert.equal(formatFieldPath(['a', 'b c']), 'a["b c"]');
    assert.equal(formatFieldPath([]), '');
  });
});

describe('InputError', () => {
  it('formats what it knows', () => {
    assert.equal(new InputError({ file: 'x.yaml', problem: 'bad' }).message, 'x.yaml: bad');
    assert.equal(
      new InputError({ file: 'x.yaml', line: 3, column: 4, field: 'a.b', problem: 'bad' }).message,
      'x.yaml:3:4: a.b: bad',
    );
  });
});
