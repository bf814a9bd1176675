// Ending a worker thread in bounded time. `worker.terminate()` waits for the thread's clean-up,
// which Node cannot always finish (a handle it never closes keeps it in
// Environment::CleanupHandles, spinning), and a process exiting then waits for that thread too,
// forever: the hang issue 12 was about. So: wait a while; if the thread is still there, say so, and
// make sure the process's exit does not wait for it: on 'exit' (after the exit code is decided and
// everything else has run) the process ends itself with SIGKILL, which no thread can hold up. The
// exit status is then 137 instead of the command's own code; the message says which code it was.
import type { Worker } from 'node:worker_threads';

export const TERMINATE_LIMIT_MS = 5_000;

let killOnExit = false;

/** Resolves true once the thread is gone, false if it was still there after `limitMs`. */
export async function terminateThread(
  worker: Worker,
  what: string,
  limitMs = TERMINATE_LIMIT_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    worker.terminate().then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), limitMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
  // Nor may the stuck thread keep the event loop alive: the process must come to its exit.
  if (!gone) worker.unref();
  if (!gone && !killOnExit) {
    killOnExit = true;
    process.stderr.write(
      `pole-bench: ${what} did not stop within ${limitMs / 1000} s of being terminated; Node would wait for it at exit forever, so this process will end itself with SIGKILL when it exits\n`,
    );
    process.once('exit', (code) => {
      process.stderr.write(`pole-bench: exiting with SIGKILL (the exit code was ${code})\n`);
      process.kill(process.pid, 'SIGKILL');
    });
  }
  return gone;
}
