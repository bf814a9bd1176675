// Every duration flag reads like a topology duration ("10s", "500ms"); a bare number is refused
// with exit 2 before anything starts, since it could mean ms or s.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import BenchHeartbeat from '../../src/commands/bench/heartbeat.js';
import BenchLoad from '../../src/commands/bench/load.js';
import BenchNode from '../../src/commands/bench/node.js';

type OclifError = Error & { oclif?: { exit?: number } };

describe('duration flags of the bench commands', () => {
  const exitCodeBefore = process.exitCode;
  afterEach(() => {
    process.exitCode = exitCodeBefore;
  });
  const root = fileURLToPath(import.meta.url);

  const cases: Array<[string, string, (argv: string[]) => Promise<unknown>]> = [
    ['bench node', '--duration', (argv) => BenchNode.run(argv, root)],
    ['bench load', '--duration', (argv) => BenchLoad.run(argv, root)],
    ['bench heartbeat', '--duration', (argv) => BenchHeartbeat.run(argv, root)],
    ['bench heartbeat', '--period', (argv) => BenchHeartbeat.run(argv, root)],
  ];
  for (const [name, flag, run] of cases) {
    it(`${name} ${flag} refuses a bare number, naming the forms it takes (exit 2)`, async () => {
      await assert.rejects(run([flag, '10']), (err: OclifError) => {
        assert.equal(err.oclif?.exit, 2);
        assert.match(err.message, new RegExp(`${flag}`));
        assert.match(err.message, /a bare number has no unit: write 10s or 10ms/);
        return true;
      });
    });
  }

  it('bench node --duration refuses less than its minimum', async () => {
    await assert.rejects(BenchNode.run(['--duration', '500ms'], root), (err: OclifError) => {
      assert.equal(err.oclif?.exit, 2);
      assert.match(err.message, /must be at least 1s, got "500ms"/);
      return true;
    });
  });
});
