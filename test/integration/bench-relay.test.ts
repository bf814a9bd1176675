// `pole-bench bench relay --json`: the relay's CPU per relayed message, per chunk and per MB agree
// with its CPU and with the traffic the bench itself sent (counted on the sending side), so a
// per-message figure is the threads' CPU over what went through, not over what was meant to.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import type { RelayBenchResult, ThreadCpu } from '../../src/bench/relay-bench.js';
import { runCli } from '../support/run-cli.js';

const SAMPLES = 30;
const LOAD_MESSAGE_BYTES = 1024;

function cpuUs(c: ThreadCpu): number {
  assert.ok(c.relayMs !== null && c.clockMs !== null, 'thread CPU is read from /proc on Linux');
  return (c.relayMs + c.clockMs) * 1000;
}

test('bench relay: CPU per message, per chunk and per MB add up to the threads’ CPU over what the bench sent', async () => {
  const r = await runCli([
    'bench',
    'relay',
    '--rtt',
    '10',
    '--samples',
    String(SAMPLES),
    '--load-seconds',
    '1',
    '--bulk-mb',
    '4',
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const b = JSON.parse(r.stdout) as RelayBenchResult;

  // The RTT phase: SAMPLES pings and the probe's two warm-up pings, each with its pong, through
  // one route.
  const rtt = b.rttCpu;
  assert.ok(rtt.usPerMessage !== null && rtt.usPerChunk !== null);
  assert.ok(Math.abs(rtt.usPerMessage * 2 * (SAMPLES + 2) - cpuUs(rtt)) < 1, 'per message × messages = CPU');
  assert.equal(rtt.usPerMB, null, '64-byte pings are not counted per MB');
  // A ping is one write, read as one chunk unless two coalesce: never more chunks than messages.
  assert.ok(
    rtt.usPerChunk >= rtt.usPerMessage,
    `${rtt.usPerChunk} per chunk, ${rtt.usPerMessage} per message`,
  );

  // The paced load: every message echoed, so at least twice the bytes sent went through.
  const load = b.load!;
  assert.equal(load.echoedRatio, 1);
  const c = load.cpu;
  assert.ok(c.usPerMessage !== null && c.usPerMB !== null && c.usPerChunk !== null);
  const messages = cpuUs(c) / c.usPerMessage;
  assert.ok(messages >= 2 * load.sent, `${messages} messages counted, ${load.sent} sent and echoed`);
  const mb = cpuUs(c) / c.usPerMB;
  assert.ok(mb >= (2 * load.sent * LOAD_MESSAGE_BYTES) / 1e6, `${mb} MB counted for ${load.sent} kB sent`);
  // Beside it, the echo thread's own CPU, per message it echoed (each paced message and each of
  // the probe's pings, once) and per read; it read at least once and was measured on its thread.
  const e = load.echo;
  assert.ok(e.cpuMs !== null && e.cpuMs > 0, `echo CPU ${e.cpuMs}`);
  assert.ok(e.reads > 0 && e.usPerMessage !== null && e.usPerRead !== null);
  const echoed = (e.cpuMs * 1000) / e.usPerMessage;
  assert.ok(echoed > load.sent && echoed < load.sent + 1000, `${echoed} messages echoed, ${load.sent} sent`);
  assert.ok(Math.abs(e.usPerRead * e.reads - e.cpuMs * 1000) < 1, 'per read × reads = CPU');
  // Its reads were of the relay's traffic: the bytes it read, counted on its thread, are the bytes
  // the relay says it released toward it, and the relay released as many back; at least the paced
  // messages' bytes, as each came back whole (echoedRatio 1).
  const eb = e.bytes;
  assert.equal(eb.echoRead, eb.relayedToEcho, 'the echo read what the relay released toward it');
  assert.equal(eb.relayedBack, eb.relayedToEcho, 'the relay released back what the echo wrote');
  assert.ok(eb.agree);
  assert.ok(eb.echoRead >= load.sent * LOAD_MESSAGE_BYTES, `${eb.echoRead} B read, ${load.sent} kB sent`);

  // The bulk transfer: one way, its bytes once (the sink does not echo).
  const bulk = b.bulk!;
  assert.equal(bulk.cpu.usPerMessage, null);
  const bulkMb = cpuUs(bulk.cpu) / bulk.cpu.usPerMB!;
  assert.ok(Math.abs(bulkMb - bulk.bytes / 1e6) < 1e-6, `${bulkMb} MB counted, ${bulk.bytes / 1e6} sent`);
});
