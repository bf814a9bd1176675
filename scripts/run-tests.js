#!/usr/bin/env node
// Runs the compiled test files under dist/test with Node's own test runner.
// Usage: node scripts/run-tests.js [suite...]   (suites: unit, sim, integration, docker; default all)
// Node 20's runner takes no globs, so the files are listed here.
// Unit and simulation tests first; then, before the integration tests, what they need besides Node
// (ZooKeeper, PostgreSQL) is installed where it can be (scripts/test-prerequisites.js); the tests
// that need what could not be installed skip, and say so, as the lines printed here do.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureTestPrerequisites } from './test-prerequisites.js';

const root = new URL('../dist/test/', import.meta.url).pathname;
const suites = process.argv.slice(2);
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.js')) files.push(path);
  }
}
for (const suite of suites.length > 0 ? suites : readdirSync(root).sort()) {
  const dir = join(root, suite);
  try {
    if (statSync(dir).isDirectory()) walk(dir);
  } catch {
    console.error(`no test suite named ${suite} (looked in ${dir})`);
    process.exit(2);
  }
}
if (files.length === 0) {
  console.error('no test files found: did the build run?');
  process.exit(2);
}
// Unit and simulation tests are CPU-bound and independent: two at a time. Integration tests start
// clusters of processes and measure time (RTTs, recovery), so they run one at a time: two of them
// side by side on a 2-core machine would measure each other.
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const isIntegration = (f) => f.startsWith(join(root, 'integration')) || f.startsWith(join(root, 'docker'));
const batches = [
  { files: files.filter((f) => !isIntegration(f)), concurrency },
  {
    files: files.filter(isIntegration),
    concurrency: process.env.TEST_CONCURRENCY ?? '1',
    prerequisites: true,
  },
];
let status = 0;
let skipped = [];
// Each batch's failures, written by scripts/failure-reporter.js beside the TAP on stdout.
const failuresDir = mkdtempSync(join(tmpdir(), 'pole-bench-test-failures-'));
const failureReporter = new URL('./failure-reporter.js', import.meta.url).pathname;
const failureFiles = [];
for (const batch of batches) {
  if (batch.files.length === 0) continue;
  // Only the process-runtime integration tests need ZooKeeper and PostgreSQL on this machine.
  if (batch.prerequisites && batch.files.some((f) => f.startsWith(join(root, 'integration'))))
    skipped = await ensureTestPrerequisites();
  const failures = join(failuresDir, `batch-${failureFiles.length + 1}.txt`);
  failureFiles.push(failures);
  const result = spawnSync(
    process.execPath,
    [
      '--enable-source-maps',
      '--test',
      `--test-concurrency=${batch.concurrency}`,
      '--test-reporter=tap',
      '--test-reporter-destination=stdout',
      `--test-reporter=${failureReporter}`,
      `--test-reporter-destination=${failures}`,
      ...batch.files,
    ],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) status = result.status ?? 1;
}
// Said again at the end, where it is read: what failed and why, what did not run and why.
const failed = failureFiles
  .map((f) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  })
  .join('');
rmSync(failuresDir, { recursive: true, force: true });
if (failed) console.log(`== failed tests, again:\n${failed}`);
for (const line of skipped) console.log(`test prerequisites: ${line}`);
process.exit(status);
