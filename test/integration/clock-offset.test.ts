// A process whose wall clock is really shifted (libfaketime: FAKETIME=+2.5s in its LD_PRELOAD),
// probed the way a run probes another host's: a POLE node's GET /clock (the node's own status
// server and event log, test/fixtures/clock-node.mjs) and a load agent's `clock` message (the real
// `pole-bench agent --stdio`). The estimate must find the shift within its own stated ±, and the
// node's event stamps, corrected by it, must fall where the harness saw them happen.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { hostClock, toHarnessMs } from '../../src/measure/clock-offset.js';
import { harnessWallMs, httpClockReader, probeClock } from '../../src/measure/clock-probe.js';
import { AgentProcess } from '../../src/load/agent-process.js';
import { faketimeSkip, findLibfaketime } from '../support/faketime.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = `${ROOT}test/fixtures/clock-node.mjs`;
const RUN_JS = `${ROOT}bin/run.js`;
const SHIFT_MS = 2500;
/** Loopback round trips are well under a millisecond; a ± this wide would prove nothing. */
const MEANINGFUL_MS = 50;
/** The node rounds its stamps to the µs (event-log.ts wallClockMs). */
const STAMP_ROUNDING_MS = 0.001;

/** `env` (coreutils) puts libfaketime under the command, so it shifts only that process. */
function shifted(shiftMs: number | null, command: readonly string[]): string[] {
  if (shiftMs === null) return [...command];
  return ['env', `LD_PRELOAD=${findLibfaketime()}`, `FAKETIME=+${shiftMs / 1000}s`, ...command];
}

interface ClockNode {
  readonly child: ChildProcess;
  readonly port: number;
  /** The `listening` event's stamp, and harness wall ms just before the spawn and once the line was read. */
  readonly stampMs: number;
  readonly spawnedMs: number;
  readonly readMs: number;
}

async function startClockNode(shiftMs: number | null): Promise<ClockNode> {
  const [file, ...args] = shifted(shiftMs, [process.execPath, FIXTURE]);
  const spawnedMs = harnessWallMs();
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  try {
    const [line] = (await Promise.race([
      once(lines, 'line'),
      once(child, 'exit').then(([code]) => {
        throw new Error(`clock-node exited (${code}) before listening`);
      }),
    ])) as [string];
    const readMs = harnessWallMs();
    const ev = JSON.parse(line) as { t: number; ev: string; httpPort: number };
    assert.equal(ev.ev, 'listening');
    return { child, port: ev.httpPort, stampMs: ev.t, spawnedMs, readMs };
  } finally {
    clearTimeout(timer);
  }
}

async function stopClockNode(n: ClockNode): Promise<void> {
  const exited = once(n.child, 'exit');
  n.child.stdin!.end();
  const timer = setTimeout(() => n.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Probes the node's GET /clock: a burst before and one after, as a run does around its load. */
async function measureNode(n: ClockNode): Promise<ReturnType<typeof hostClock>> {
  const reader = httpClockReader('127.0.0.1', n.port);
  try {
    const before = await probeClock(reader.read);
    const after = await probeClock(reader.read);
    return hostClock(before, after);
  } finally {
    reader.close();
  }
}

function assertFound(what: string, offsetMs: number, uncertaintyMs: number, expectedMs: number): void {
  const line = `${what}: ${offsetMs.toFixed(3)} ± ${uncertaintyMs.toFixed(3)} ms (shift ${expectedMs} ms)`;
  console.log(line);
  assert.ok(uncertaintyMs < MEANINGFUL_MS, `${line}: the ± is too wide to mean anything`);
  assert.ok(Math.abs(offsetMs - expectedMs) <= uncertaintyMs + STAMP_ROUNDING_MS, `${line}: outside its ±`);
}

describe('clock offset of a really shifted clock', { skip: faketimeSkip }, () => {
  it("finds a node's shift through GET /clock, and corrects its event stamps by it", async () => {
    for (const shiftMs of [null, SHIFT_MS]) {
      const n = await startClockNode(shiftMs);
      try {
        const clock = await measureNode(n);
        const expected = shiftMs ?? 0;
        assertFound(`node${shiftMs === null ? ' (no libfaketime)' : ''}, before`, clock.before.offsetMs, clock.before.uncertaintyMs, expected);
        assertFound('node, after', clock.after!.offsetMs, clock.after!.uncertaintyMs, expected);
        // The event was stamped between the spawn and the reading of its line, harness time.
        const at = toHarnessMs(n.stampMs, clock);
        assert.ok(
          at.ms >= n.spawnedMs - at.uncertaintyMs - STAMP_ROUNDING_MS &&
            at.ms <= n.readMs + at.uncertaintyMs + STAMP_ROUNDING_MS,
          `corrected stamp ${at.ms} ± ${at.uncertaintyMs} outside [${n.spawnedMs}, ${n.readMs}]`,
        );
        // And uncorrected it would not have been (with the shift): the correction is what places it.
        if (shiftMs !== null) assert.ok(n.stampMs > n.readMs + SHIFT_MS / 2, 'the stamp itself is shifted');
      } finally {
        await stopClockNode(n);
      }
    }
  });

  it("finds a load agent's shift through its `clock` message", async () => {
    const agent = await AgentProcess.spawn({
      stdioCommand: { file: 'env', args: shifted(SHIFT_MS, [process.execPath, RUN_JS, 'agent', '--stdio']).slice(1) },
    });
    try {
      const e = await probeClock((signal) => agent.readClock(signal));
      assertFound('agent', e.offsetMs, e.uncertaintyMs, SHIFT_MS);
      agent.stop();
      const done = await agent.done;
      assert.equal(done.totals.attempted, 0);
    } finally {
      await agent.kill();
    }
  });
});
