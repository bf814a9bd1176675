// The command line as people expect it: `help COMMAND`, a suggestion for a mistyped command (exit 2,
// bad input), repeatable flags that leave the arguments after them alone, durations in help written
// as durations.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli } from '../support/run-cli.js';

const TOPOLOGY = join(ROOT, 'topologies', 'paper-2dc.yaml');

test('`pole-bench help run` prints the run command’s help', async () => {
  const r = await runCli(['help', 'run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /USAGE\s+\$ pole-bench run TOPOLOGY/);
  assert.match(r.stdout, /--threshold/);
});

test('a mistyped command is refused with exit 2 and the command it was likely meant to be', async () => {
  const r = await runCli(['comapre', 'a', 'b']);
  assert.equal(r.code, 2);
  const said = r.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
  assert.match(said, /`comapre a b` is not a pole-bench command\. Did you mean `pole-bench compare`\?/);
  const far = await runCli(['zzzzzzzz']);
  assert.equal(far.code, 2);
  assert.doesNotMatch(far.stderr, /Did you mean/);
});

test('--threshold before the topology takes one value and leaves the topology as the argument', async () => {
  const r = await runCli([
    'run',
    '--threshold',
    'writes.lost == 0',
    TOPOLOGY,
    '--dry-run',
    '--runtime',
    'process',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /paper-2dc/);
});

test('duration flags show their default as a duration in help', async () => {
  const r = await runCli(['help', 'bench', 'load']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /--duration=<duration>\s+\[default: 10s\]/);
});
