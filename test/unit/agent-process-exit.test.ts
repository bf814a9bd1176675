// AgentProcess and an agent's exit: an agent that sends `done` and exits at once is done, even when
// the harness learns of the exit before it has read the `done` (the race that lost whole runs); an
// agent that exits without `done` or is killed makes `done` reject, saying so, within a bound.
// The agent here is test/fixtures/agent-exit-race.mjs, which ends the way `pole-bench agent` does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentProcess, EXIT_DRAIN_MS } from '../../src/load/agent-process.js';
import type { LoadSpec } from '../../src/load/agent-protocol.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('test/fixtures/agent-exit-race.mjs', pathToFileURL(ROOT)));

/** `dc` picks the fixture's ending; `rate` is how many acknowledged writes its `done` lists. */
function spec(dc: 'done' | 'die', rate: number): LoadSpec {
  return {
    dc,
    endpoints: [{ node: 'p1', host: '127.0.0.1', port: 1 }],
    rate,
    size: 0,
    arrival: 'constant',
    seed: 1,
    durationMs: 0,
    requestTimeoutMs: 1_000,
    writeDeadlineMs: 1_000,
    clientIdPrefix: 'exit-race',
    pathPrefix: '/race',
  };
}

/**
 * Whether waitpid would reap `pid` now: its main thread is a zombie and no other thread is left
 * (a Node process's helper threads die after its main thread; until then it is not reapable and
 * its parent has no SIGCHLD).
 */
function reapable(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return true; // already reaped
  }
  return /^State:\s+Z/m.test(status) && /^Threads:\s+1$/m.test(status);
}

/**
 * Blocks this thread (the harness busy, as it is parsing another agent's `done`) until `pid` can
 * be reaped, and 50 ms more: the kernel sends SIGCHLD as the last thread goes, this makes sure it
 * has been sent.
 */
function busyUntilReapable(pid: number): void {
  const deadline = Date.now() + 20_000;
  while (!reapable(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not exit within 20 s`);
  }
  const until = Date.now() + 50;
  while (Date.now() < until);
}

describe('AgentProcess: an agent exits', () => {
  it('sends done and exits while the harness is busy: done arrives though the exit is seen first', async () => {
    // libuv reaps every exited child on any SIGCHLD, after the I/O of its poll round. So: one poll
    // round holds a helper's output and its SIGCHLD; while the harness handles that output, the
    // agent sends `done` and exits; the round then reaps both, before the agent's `done` is read.
    const N = 3_000; // ~80 kB: fits the socket's buffer, so the agent is gone before any is read
    const agent = await AgentProcess.spawn({ runJs: FIXTURE });
    try {
      agent.start(spec('done', N));
      await agent.started;
      const pid = agent.pid!;
      let doneRead = false;
      void agent.done.then(
        () => (doneRead = true),
        () => undefined, // asserted below
      );
      let window: { agentReaped: boolean; doneRead: boolean } | undefined;
      const helper = spawn(process.execPath, ['-e', 'process.stdout.write("x")'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const helperExit = new Promise<void>((resolve) =>
        helper.once('exit', () => {
          // Reaped in the same round as the helper (/proc/<pid> is gone), before its done was read.
          window = { agentReaped: !existsSync(`/proc/${pid}`), doneRead };
          resolve();
        }),
      );
      helper.stdout.once('data', () => {
        agent.stop(); // written to the agent's channel at once; the agent answers and exits
        busyUntilReapable(pid);
      });
      busyUntilReapable(helper.pid!);

      const done = await agent.done;
      await helperExit;
      assert.deepEqual(
        window,
        { agentReaped: true, doneRead: false },
        'the test did not hold the window open: the agent was not reaped before its done was read',
      );
      assert.equal(done.acked.length, N, 'every acknowledged write listed in done');
      assert.equal(done.totals.acked, N);
      assert.equal(agent.intervals.length, 1, 'the last interval, sent just before done, is kept');
      assert.deepEqual(await agent.exited, { code: 0, signal: null });
    } finally {
      await agent.kill();
    }
  });

  it('exits without done: done rejects saying so, and the interval it did send is kept', async () => {
    const agent = await AgentProcess.spawn({ runJs: FIXTURE });
    try {
      agent.start(spec('die', 10));
      await agent.started;
      agent.stop();
      await assert.rejects(
        agent.done,
        /load agent exited \(code 0, signal null\) without sending done; stderr: $/,
      );
      assert.deepEqual(await agent.exited, { code: 0, signal: null });
      assert.equal(agent.intervals.length, 1);
      assert.equal(agent.intervals[0]!.acked, 10);
    } finally {
      await agent.kill();
    }
  });

  it('is killed: kill() returns with the signal well within the drain bound, and done rejects naming it', async () => {
    const agent = await AgentProcess.spawn({ runJs: FIXTURE });
    agent.start(spec('done', 10));
    await agent.started;
    const t0 = performance.now();
    const exit = await agent.kill();
    const tookMs = performance.now() - t0;
    assert.deepEqual(exit, { code: null, signal: 'SIGKILL' });
    assert.ok(tookMs < EXIT_DRAIN_MS / 2, `kill() took ${tookMs} ms: the pipes' close was not seen`);
    await assert.rejects(agent.done, /load agent exited \(code null, signal SIGKILL\) without sending done/);
  });

  it('cannot be spawned (no such command): spawn rejects with the reason instead of hanging', async () => {
    await assert.rejects(
      AgentProcess.spawn({ stdioCommand: { file: '/nonexistent/pole-bench-agent', args: [] } }),
      /load agent: spawn \/nonexistent\/pole-bench-agent ENOENT/,
    );
  });
});
