// Processes whose clocks are really shifted, probed the way a run probes another host's: a POLE
// node's GET /clock (the node's own status server and event log, test/fixtures/clock-node.mjs) and
// a load agent's `clock` message (the real `pole-bench agent --stdio`). Their wall clock is moved
// +2.5 s by libfaketime (FAKETIME in their LD_PRELOAD; FAKETIME_DONT_FAKE_MONOTONIC=1, or
// libfaketime 0.9.10 would turn CLOCK_MONOTONIC into an epoch-like count), and, where the kernel
// allows it, their CLOCK_MONOTONIC +1000 s by a time namespace (`unshare --time --monotonic`),
// as another host's would be off by its boot time. Each estimate must find its shift within its
// own stated ±, and the node's event stamp, corrected by it, must fall where the harness saw it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { hostClocks, toHarnessMs, type OffsetEstimate } from '../../src/measure/clock-offset.js';
import { harnessWallMs, httpClockReader, probeClock } from '../../src/measure/clock-probe.js';
import { AgentProcess } from '../../src/load/agent-process.js';
import { monoMs } from '../../src/node/trace/write-tracer.js';
import { faketimeSkip, findLibfaketime } from '../support/faketime.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = `${ROOT}test/fixtures/clock-node.mjs`;
const RUN_JS = `${ROOT}bin/run.js`;
const WALL_SHIFT_MS = 2500;
const MONO_SHIFT_S = 1000;
/** Loopback round trips are well under a millisecond; a ± this wide would prove nothing. */
const MEANINGFUL_MS = 50;
/** The node rounds its stamps to the µs (event-log.ts wallClockMs), and so may our own reading. */
const ROUNDING_MS = 0.002;

/** Whether this kernel lets us give a process a monotonic clock of its own (time namespaces, root). */
const timeNamespace =
  spawnSync('unshare', ['--time', `--monotonic=${MONO_SHIFT_S}`, '--fork', 'true'], { stdio: 'ignore' })
    .status === 0;
const MONO_SHIFT_MS = timeNamespace ? MONO_SHIFT_S * 1000 : 0;

/**
 * The harness's monotonic clock − its wall clock, ms: what a remote monotonic clock's offset
 * (measured against the harness's wall clock) is when the remote shares the harness's kernel. Read
 * back to back; the smallest of a few readings' spans bounds the error to a few µs.
 */
function harnessMonoMinusWall(): number {
  let best = { span: Infinity, diff: 0 };
  for (let i = 0; i < 20; i++) {
    const w0 = harnessWallMs();
    const m = monoMs();
    const w1 = harnessWallMs();
    if (w1 - w0 < best.span) best = { span: w1 - w0, diff: m - (w0 + w1) / 2 };
  }
  return best.diff;
}

/**
 * The command under libfaketime (wall +2.5 s) and, where it can be had, a time namespace
 * (monotonic +1000 s); `--kill-child` takes the command down with unshare if it is killed.
 */
function shifted(command: readonly string[]): string[] {
  const faked = [
    'env',
    `LD_PRELOAD=${findLibfaketime()}`,
    `FAKETIME=+${WALL_SHIFT_MS / 1000}s`,
    'FAKETIME_DONT_FAKE_MONOTONIC=1',
    ...command,
  ];
  if (!timeNamespace) return faked;
  return ['unshare', '--time', `--monotonic=${MONO_SHIFT_S}`, '--fork', '--kill-child', ...faked];
}

interface ClockNode {
  readonly child: ChildProcess;
  readonly port: number;
  /** The `listening` event's stamp, and harness wall ms just before the spawn and once the line was read. */
  readonly stampMs: number;
  readonly spawnedMs: number;
  readonly readMs: number;
}

async function startClockNode(shift: boolean): Promise<ClockNode> {
  const command = [process.execPath, FIXTURE];
  const [file, ...args] = shift ? shifted(command) : command;
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
async function measureNode(n: ClockNode): Promise<ReturnType<typeof hostClocks>> {
  const reader = httpClockReader('127.0.0.1', n.port);
  try {
    const before = await probeClock(reader.read);
    const after = await probeClock(reader.read);
    return hostClocks(before, after);
  } finally {
    reader.close();
  }
}

function assertFound(what: string, e: OffsetEstimate, expectedMs: number): void {
  const line = `${what}: ${e.offsetMs.toFixed(3)} ± ${e.uncertaintyMs.toFixed(3)} ms (expected ${expectedMs.toFixed(3)})`;
  console.log(line);
  assert.ok(e.uncertaintyMs < MEANINGFUL_MS, `${line}: the ± is too wide to mean anything`);
  assert.ok(Math.abs(e.offsetMs - expectedMs) <= e.uncertaintyMs + ROUNDING_MS, `${line}: outside its ±`);
}

describe('clock offsets of really shifted clocks', { skip: faketimeSkip }, () => {
  if (!timeNamespace)
    console.log('no time namespace here (unshare --time failed): monotonic clocks unshifted');

  it("finds a node's shifts through GET /clock, and corrects its event stamp by them", async () => {
    for (const shift of [false, true]) {
      const n = await startClockNode(shift);
      try {
        const c = await measureNode(n);
        const wall = shift ? WALL_SHIFT_MS : 0;
        const mono = harnessMonoMinusWall() + (shift ? MONO_SHIFT_MS : 0);
        const who = shift ? 'shifted node' : 'node';
        assertFound(`${who}, wall, before`, c.wall.before, wall);
        assertFound(`${who}, wall, after`, c.wall.after!, wall);
        assertFound(`${who}, monotonic, before`, c.mono.before, mono);
        assertFound(`${who}, monotonic, after`, c.mono.after!, mono);
        // The event was stamped between the spawn and the reading of its line, harness time.
        const at = toHarnessMs(n.stampMs, c.wall);
        const slack = at.uncertaintyMs + ROUNDING_MS;
        assert.ok(
          at.ms >= n.spawnedMs - slack && at.ms <= n.readMs + slack,
          `corrected stamp ${at.ms} ± ${at.uncertaintyMs} outside [${n.spawnedMs}, ${n.readMs}]`,
        );
        // Uncorrected, the shifted node's stamp is from 2.5 s in the future: the correction placed it.
        if (shift) assert.ok(n.stampMs > n.readMs + WALL_SHIFT_MS / 2, 'the stamp itself is shifted');
      } finally {
        await stopClockNode(n);
      }
    }
  });

  it("finds a load agent's shifts through its `clock` message", async () => {
    const [file, ...args] = shifted([process.execPath, RUN_JS, 'agent', '--stdio']);
    const agent = await AgentProcess.spawn({ stdioCommand: { file: file!, args } });
    try {
      const e = await probeClock((signal) => agent.readClock(signal));
      assertFound('shifted agent, wall', e.wall, WALL_SHIFT_MS);
      assertFound('shifted agent, monotonic', e.mono, harnessMonoMinusWall() + MONO_SHIFT_MS);
      agent.stop();
      const done = await agent.done;
      assert.equal(done.totals.attempted, 0);
    } finally {
      await agent.kill();
    }
  });
});
