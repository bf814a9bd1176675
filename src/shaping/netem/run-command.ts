// Running ip/tc as child processes: a result that never throws (for probing, where a failure is an
// answer) and a variant that throws with the command line and its stderr (for applying a plan).
import { execFile } from 'node:child_process';

export interface CommandResult {
  /** Exit code; null when the command could not start, timed out or died from a signal. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why it did not run to an exit code (e.g. "spawn tc ENOENT"), if so. */
  readonly failure?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Run argv (no shell) and resolve with what happened. */
export function runCommand(argv: readonly string[], timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CommandResult> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.reject(new Error('runCommand: empty argv'));
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err === null) return resolve({ code: 0, stdout, stderr });
      const code = typeof err.code === 'number' ? err.code : null;
      resolve(code !== null ? { code, stdout, stderr } : { code, stdout, stderr, failure: err.message });
    });
  });
}

/** Run argv and resolve with its stdout; reject naming the command and its stderr unless it exits 0. */
export async function runChecked(argv: readonly string[], timeoutMs = DEFAULT_TIMEOUT_MS): Promise<string> {
  const r = await runCommand(argv, timeoutMs);
  if (r.code === 0) return r.stdout;
  const why = r.failure ?? `exit ${r.code}${r.stderr.trim() === '' ? '' : `: ${r.stderr.trim()}`}`;
  throw new Error(`${argv.join(' ')} failed (${why})`);
}

/** The argv that runs `argv` inside network namespace `ns` (iproute2's named namespaces). */
export function inNetns(ns: string, argv: readonly string[]): string[] {
  return ['ip', 'netns', 'exec', ns, ...argv];
}
