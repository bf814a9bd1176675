// The docs hold the CLI as it is: every flag of every command is on its page (its row of
// docs/commands.md, or a page that row links to), no row names a flag its command lacks, and every
// file an example names (in `--help`, the README or docs/commands.md) exists.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/run-cli.js';

interface ManifestCommand {
  readonly hidden?: boolean;
  readonly flags: Record<string, { readonly hidden?: boolean; readonly allowNo?: boolean }>;
  readonly examples?: readonly (string | { readonly command: string })[];
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, ManifestCommand>;
};
const visible = Object.entries(manifest.commands).filter(([, c]) => !c.hidden);
const commandsMd = readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8');
const rows = commandsMd.split('\n').filter((l) => l.startsWith('| `pole-bench '));

/** The rows of docs/commands.md that document `id` ("bench:node" is `pole-bench bench node`). */
function rowsOf(id: string): string[] {
  const words = id.split(':').join(' ');
  const named = new RegExp(`\`pole-bench ${words}(?=[\\s\`])`);
  return rows.filter((r) => named.test(r.split(' | ')[0]!));
}

/** Flags named in text: `--name`, as the docs write them. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
}

test('every command has a row in docs/commands.md, and every flag of it is on its page', () => {
  const missing: string[] = [];
  for (const [id, c] of visible) {
    const own = rowsOf(id);
    if (own.length === 0) {
      missing.push(`${id}: no row in docs/commands.md`);
      continue;
    }
    // Its page: the row itself and the docs it links to.
    const linked = own.flatMap((r) => [...r.matchAll(/\]\(([\w-]+\.md)\)/g)].map((m) => m[1]!));
    const page = [...own, ...linked.map((f) => readFileSync(join(ROOT, 'docs', f), 'utf8'))].join('\n');
    const named = flagsIn(page);
    for (const [flag, f] of Object.entries(c.flags))
      if (!f.hidden && !named.has(flag)) missing.push(`${id} --${flag}`);
  }
  assert.deepEqual(missing, [], 'flags with no word in the docs');
});

test("no command's synopsis in docs/commands.md names a flag the command does not have", () => {
  const wrong: string[] = [];
  for (const [id, c] of visible)
    for (const r of rowsOf(id)) {
      // Only the synopsis cell: the description may name other commands' flags.
      const synopsis = r.split(' | ')[0]!;
      // A row for two commands (`swarm up … / swarm down`): each part belongs to its own.
      const part = synopsis
        .split(' / ')
        .find((p) => new RegExp(`pole-bench ${id.split(':').join(' ')}(?=[\\s\`])`).test(p));
      for (const flag of flagsIn(part ?? ''))
        if (!(flag in c.flags) && !c.flags[flag.replace(/^no-/, '')]?.allowNo)
          wrong.push(`${id}: --${flag} in its synopsis, not a flag of it`);
    }
  assert.deepEqual(wrong, []);
});

/** Paths of the project's own input files an example names (topologies, suites, fixtures). */
function filesNamed(text: string): string[] {
  return [
    ...text.matchAll(
      /(?<![\w/.-])((?:topologies|suites|test\/fixtures|examples)\/[\w./-]+\.(?:ya?ml|json))/g,
    ),
  ].map((m) => m[1]!);
}

test('every file an example names exists: --help examples, the README, docs/commands.md', () => {
  const sources: [string, string][] = [
    ['README.md', readFileSync(join(ROOT, 'README.md'), 'utf8')],
    ['docs/commands.md', commandsMd],
    ...visible.map(([id, c]): [string, string] => [
      `${id} --help`,
      (c.examples ?? []).map((e) => (typeof e === 'string' ? e : e.command)).join('\n'),
    ]),
  ];
  const absent: string[] = [];
  let named = 0;
  for (const [where, text] of sources)
    for (const f of filesNamed(text)) {
      named++;
      if (!existsSync(join(ROOT, f))) absent.push(`${where}: ${f}`);
    }
  assert.ok(named > 5, `only ${named} files named: the pattern no longer finds them`);
  assert.deepEqual(absent, []);
});
