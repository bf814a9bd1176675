// The image's build context without Docker: which packages are production ones (from the lock),
// what gets planned and staged, when the content hash changes, and how builder output becomes steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  hashContext,
  planContext,
  stageContext,
  type ContextSources,
} from '../../src/image/build-context.js';
import { BuildStepTracker, type BuildStep } from '../../src/image/build-steps.js';
import { ModulesMismatchError, productionPackageDirs } from '../../src/image/production-modules.js';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A tiny project: two production packages (one nested), one dev package, one absent optional. */
function fixture(): { root: string; sources: ContextSources; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'pole-image-ctx-'));
  write(join(root, 'package.json'), JSON.stringify({ name: 'pole-bench', version: '9.9.9' }));
  write(
    join(root, 'package-lock.json'),
    JSON.stringify({
      lockfileVersion: 3,
      packages: {
        '': { name: 'pole-bench', version: '9.9.9' },
        'node_modules/prod-a': { version: '1.0.0' },
        'node_modules/prod-a/node_modules/inner': { version: '2.0.0' },
        'node_modules/dev-b': { version: '3.0.0', dev: true },
        'node_modules/opt-c': { version: '4.0.0', optional: true },
      },
    }),
  );
  write(join(root, 'node_modules/prod-a/package.json'), JSON.stringify({ version: '1.0.0' }));
  write(join(root, 'node_modules/prod-a/index.js'), 'export default 1;\n');
  write(
    join(root, 'node_modules/prod-a/node_modules/inner/package.json'),
    JSON.stringify({ version: '2.0.0' }),
  );
  write(join(root, 'node_modules/dev-b/package.json'), JSON.stringify({ version: '3.0.0' }));
  write(join(root, 'oclif.manifest.json'), '{"version":"9.9.9","commands":{}}\n');
  write(join(root, 'bin/run.js'), '#!/usr/bin/env node\n');
  chmodSync(join(root, 'bin/run.js'), 0o755);
  write(join(root, 'topologies/a.yaml'), 'name: a\n');
  write(join(root, 'out/src/commands/x.js'), 'export {};\n');
  write(join(root, 'out/src/commands/x.js.map'), '{}');
  write(join(root, 'docker/Dockerfile'), 'FROM scratch\n');
  write(join(root, 'fake-node'), 'not really node');
  chmodSync(join(root, 'fake-node'), 0o644);
  const sources: ContextSources = {
    root,
    compiledSrc: join(root, 'out/src'),
    dockerfile: join(root, 'docker/Dockerfile'),
    nodeBinary: join(root, 'fake-node'),
  };
  return { root, sources, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('production packages: everything not dev, nested ones on their own, absent optional ones skipped', () => {
  const f = fixture();
  try {
    assert.deepEqual(productionPackageDirs(f.root), [
      'node_modules/prod-a',
      'node_modules/prod-a/node_modules/inner',
    ]);
  } finally {
    f.cleanup();
  }
});

test('node_modules that does not match the lock is refused, saying what to run', () => {
  const f = fixture();
  try {
    write(join(f.root, 'node_modules/prod-a/package.json'), JSON.stringify({ version: '1.0.1' }));
    assert.throws(
      () => productionPackageDirs(f.root),
      (err: unknown) => {
        assert.ok(err instanceof ModulesMismatchError);
        assert.match(
          err.message,
          /node_modules\/prod-a is 1\.0\.1 in node_modules but 1\.0\.0 in package-lock\.json: run npm ci/,
        );
        return true;
      },
    );
    rmSync(join(f.root, 'node_modules/prod-a'), { recursive: true });
    assert.throws(() => productionPackageDirs(f.root), /not installed: run npm ci/);
  } finally {
    f.cleanup();
  }
});

test('the plan holds exactly what the image needs, and staging reproduces it', () => {
  const f = fixture();
  const stage = mkdtempSync(join(tmpdir(), 'pole-image-stage-'));
  try {
    const plan = planContext(f.sources);
    assert.deepEqual(
      plan.map((e) => e.to),
      [
        'Dockerfile',
        'bin/run.js',
        'dist/src/commands/x.js',
        'node',
        'node_modules/prod-a/index.js',
        'node_modules/prod-a/node_modules/inner/package.json',
        'node_modules/prod-a/package.json',
        'oclif.manifest.json',
        'package.json',
        'topologies/a.yaml',
      ],
    );
    stageContext(plan, stage);
    assert.equal(readFileSync(join(stage, 'node'), 'utf8'), 'not really node');
    assert.equal(statSync(join(stage, 'node')).mode & 0o777, 0o755);
    // Staged files may be hard links to the sources: giving the staged one its mode must not
    // have changed the source's.
    assert.equal(statSync(f.sources.nodeBinary).mode & 0o777, 0o644);
    assert.equal(statSync(join(stage, 'bin/run.js')).mode & 0o777, 0o755);
    assert.equal(readFileSync(join(stage, 'dist/src/commands/x.js'), 'utf8'), 'export {};\n');
  } finally {
    rmSync(stage, { recursive: true, force: true });
    f.cleanup();
  }
});

test('an unbuilt project (no oclif.manifest.json) is refused by name, not shipped slow', () => {
  const f = fixture();
  try {
    rmSync(join(f.root, 'oclif.manifest.json'));
    assert.throws(() => planContext(f.sources), /oclif\.manifest\.json is missing: run npm run build/);
  } finally {
    f.cleanup();
  }
});

test('the content hash changes with any planned file or the base, and with nothing else', () => {
  const f = fixture();
  try {
    const hash = (): string => hashContext(planContext(f.sources), ['base=sha256:1']);
    const h0 = hash();
    assert.match(h0, /^[0-9a-f]{64}$/);
    assert.equal(hash(), h0, 'same inputs, same hash');
    // Not in the image: a source map, a dev package.
    write(join(f.root, 'out/src/commands/x.js.map'), '{"changed":true}');
    write(join(f.root, 'node_modules/dev-b/index.js'), 'changed');
    assert.equal(hash(), h0);
    assert.notEqual(hashContext(planContext(f.sources), ['base=sha256:2']), h0, 'another base');
    write(join(f.root, 'out/src/commands/x.js'), 'export const y = 1;\n');
    const h1 = hash();
    assert.notEqual(h1, h0, 'compiled code changed');
    chmodSync(join(f.root, 'topologies/a.yaml'), 0o600);
    assert.notEqual(hash(), h1, 'a mode changed');
  } finally {
    f.cleanup();
  }
});

test('classic builder output becomes one step per instruction, with cache hits and durations', () => {
  let now = 0;
  const seen: BuildStep[] = [];
  const tracker = new BuildStepTracker(
    (s) => seen.push(s),
    () => now,
  );
  const output = [
    ['Sending build context to Docker daemon  127.8MB', false],
    ['Step 1/3 : FROM pole-bench-base:bookworm-abc', true],
    [' ---> de0f25b808e2', true],
    ['Step 2/3 : COPY node /usr/local/bin/node', true],
    [' ---> Using cache', true],
    [' ---> 1a2b3c4d5e6f', true],
    ['Step 3/3 : RUN   node -e "console.log(1)"', true],
    [' ---> Running in 0123456789ab', true],
    ['1', false],
    ['Removing intermediate container 0123456789ab', true],
  ] as const;
  for (const [line, bookkeeping] of output) {
    assert.equal(tracker.line(line), bookkeeping, line);
    now += 100;
  }
  tracker.finish();
  assert.deepEqual(
    seen.map((s) => [s.index, s.total, s.instruction, s.cached, s.ms]),
    [
      [1, 3, 'FROM pole-bench-base:bookworm-abc', false, 200],
      [2, 3, 'COPY node /usr/local/bin/node', true, 300],
      [3, 3, 'RUN node -e "console.log(1)"', false, 400],
    ],
  );
  assert.deepEqual(tracker.steps, seen);
});
