// What keeps a run from hanging or outliving its harness: Ctrl-C and SIGTERM, the parent going
// away (the `npx` wrapper or a CI step killed by a timeout leaves the harness an orphan), and a
// deadline for the whole run all end it the same way, through one AbortSignal; a scenario that
// does not unwind in time after that is left behind so the caller can tear down and exit with
// the reason; and once the command is done, a process that something still keeps alive (a stuck
// thread) is ended instead of lingering.
import { RunAborted } from './run-scenario.js';

export interface RunGuardOptions {
  /** The whole run, start to verdict, may take this long. */
  readonly deadlineMs: number;
  /** How long after an abort the scenario gets to unwind by itself. */
  readonly unwindMs?: number;
  /** How often the parent is looked for. */
  readonly parentPollMs?: number;
  /** The parent's pid now (a test passes its own view). */
  readonly parentPid?: number;
  readonly currentParentPid?: () => number;
}

export class RunGuard {
  private readonly controller = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private why: string | undefined;
  private readonly onSignal = (sig: NodeJS.Signals): void => this.abort(`interrupted (${sig})`);

  constructor(private readonly o: RunGuardOptions) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped, once it was. */
  get reason(): string | undefined {
    return this.why;
  }

  start(): this {
    // `on`, not `once`, and kept until stop(): execa's clean-up (signal-exit) listens for these
    // signals too, while a subprocess runs, and re-raises the signal, killing the process before
    // the teardown, when it finds itself the only listener left. A `once` listener that ran first
    // has already removed itself by then (a CI run died of SIGTERM, exit 143, that way).
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
    process.on('SIGHUP', this.onSignal);
    const parent = this.o.parentPid ?? process.ppid;
    const current = this.o.currentParentPid ?? ((): number => process.ppid);
    // An orphan is re-parented (to init or a subreaper): its parent pid changes.
    const watch = setInterval(() => {
      if (current() !== parent) this.abort(`the parent process (pid ${parent}) went away`);
    }, this.o.parentPollMs ?? 500);
    watch.unref();
    const deadline = setTimeout(
      () => this.abort(`the run took longer than its limit of ${Math.round(this.o.deadlineMs / 1000)} s`),
      this.o.deadlineMs,
    );
    deadline.unref();
    this.timers.push(watch, deadline);
    return this;
  }

  abort(why: string): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.controller.abort(new RunAborted(why));
  }

  /**
   * `p`, or, once the run is aborted and `p` has not settled within the unwind time, a
   * RunAborted with the reason: a scenario stuck in a wait never keeps the harness from tearing
   * down.
   */
  settle<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        timer = setTimeout(() => reject(new RunAborted(this.why ?? 'aborted')), this.o.unwindMs ?? 10_000);
      };
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          clearTimeout(timer);
          this.signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          this.signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    process.off('SIGHUP', this.onSignal);
  }
}

/**
 * Once a command is done: if anything still keeps the process alive `graceMs` later (a worker
 * thread that did not end, a handle left open), say so and exit with the command's code. The timer
 * is unref'd: a process with nothing left running exits at once, as usual.
 */
export function exitWhenDone(graceMs = 5_000): void {
  const t = setTimeout(() => {
    const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
    process.stderr.write(
      `pole-bench: something of the run was still running ${graceMs / 1000} s after it ended; exiting (code ${code})\n`,
    );
    process.exit(code);
  }, graceMs);
  t.unref();
}

/** `p`, or an error saying what did not finish within `ms`. */
export async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
