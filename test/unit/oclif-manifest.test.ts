// The build writes oclif.manifest.json (scripts/oclif-manifest.js) so that a process loads only
// the command it runs. A manifest that lost a command, or kept one that is gone, would route a
// command line wrongly: it must name exactly the built command modules.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function commandIds(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.js'))
    .map((f) => relative(dir, join(f.parentPath, f.name)).replace(/\.js$/, ''))
    .map((p) =>
      p
        .split(sep)
        .filter((part, i, all) => !(part === 'index' && i === all.length - 1))
        .join(':'),
    )
    .sort();
}

test('the built manifest names exactly the built commands', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as {
    version: string;
    commands: Record<string, { id: string; flags: Record<string, unknown> }>;
  };
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  assert.equal(manifest.version, pkg.version);
  assert.deepEqual(Object.keys(manifest.commands).sort(), commandIds(join(root, 'dist', 'src', 'commands')));
  // Flags are read from it for help and routing: a command's own flags are there.
  assert.ok('rate' in manifest.commands['run']!.flags, 'run --rate in the manifest');
});
