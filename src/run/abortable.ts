// The run's waits: a sleep that the run's abort signal (Ctrl-C, run-guard.ts) cuts short with
// RunAborted, which the scenario lets through while it records any other failure as the run's
// error. The bound on a promise that may never settle is util/with-timeout.ts.

export class RunAborted extends Error {}

export function abortable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = (): RunAborted =>
      signal?.reason instanceof RunAborted ? signal.reason : new RunAborted('interrupted');
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
