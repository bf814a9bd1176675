// `pole-bench bench node` to its end on the POLE node: a throughput with its cost beside it. The
// members' CPU per write is read from /proc over the measured window; these hold its figures to
// each other, so a window read over another span, or a share divided by the wrong count, fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeBenchResult } from '../../src/bench/node-bench.js';
import { runCli } from '../support/run-cli.js';

test('bench node prints the members’ and the harness’s CPU per write beside the throughput', async () => {
  const { code, stdout, stderr } = await runCli([
    'bench',
    'node',
    '--nodes',
    '3',
    '--duration',
    '3s',
    '--kills',
    '0',
    '--json',
  ]);
  assert.equal(code, 0, stderr);
  const r = JSON.parse(stdout) as NodeBenchResult;
  assert.equal(r.lostWrites, 0);
  const { writesPerSec, cpu } = r.throughput;
  assert.ok(writesPerSec > 0);
  assert.ok(cpu, 'the CPU of the window was read');
  assert.deepEqual(Object.keys(cpu.perNode).sort(), ['p1', 'p2', 'p3']);
  // The window is the measured one (3 s), read at its two ends.
  assert.ok(Math.abs(cpu.windowS - 3) < 0.3, `window ${cpu.windowS} s`);
  // The group is the sum of its members (each rounded to 0.1).
  const sum = Object.values(cpu.perNode).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - cpu.nodesPctOfCore) <= 0.3, `${sum} against ${cpu.nodesPctOfCore}`);
  // µs per write times writes per second gives back the share of a core (1 % of a core is
  // 10,000 µs a second), within what the writes counted against the window's exact span allow.
  for (const [pct, us] of [
    [cpu.nodesPctOfCore, cpu.nodesUsPerWrite],
    [cpu.harnessPctOfCore, cpu.harnessUsPerWrite],
  ] as const) {
    assert.ok(us !== null && us > 0, 'a cost per write');
    const back = (us * writesPerSec) / 10_000;
    assert.ok(
      Math.abs(back - pct) <= 0.05 * pct + 0.5,
      `${us} µs × ${writesPerSec}/s is ${back} %, not ${pct}`,
    );
  }
  // Nobody works more than flat out, and the machine was busy with at least some of it.
  assert.ok(cpu.machineBusyPct !== null && cpu.machineBusyPct > 0 && cpu.machineBusyPct <= 100);
});
