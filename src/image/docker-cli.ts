// Running the docker CLI (and helper scripts) with execa: whole-output calls for short queries,
// line-streaming calls for long ones (builds), with the tail of the output kept for error messages.
import type * as ExecaModule from 'execa';

/**
 * execa, loaded at the first command rather than with this module: a run on local processes
 * imports this module (through the images a target may need) and never calls docker, and execa
 * is a quarter of a second of every `pole-bench` start-up on the 2-core VM.
 */
export function loadExeca(): Promise<typeof ExecaModule> {
  return import('execa');
}

export class CommandError extends Error {
  override readonly name = 'CommandError';
  constructor(
    message: string,
    /** The last lines the command printed (stdout and stderr interleaved), for diagnosis. */
    readonly tail: readonly string[] = [],
  ) {
    super(message);
  }
}

export interface RunOptions {
  readonly timeoutMs?: number;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Ends the command (SIGTERM) when aborted: a Ctrl-C must not wait for a long one. */
  readonly cancelSignal?: AbortSignal;
}

/** `docker ARGS…`; resolves to trimmed stdout, rejects with the first line docker complained with. */
export async function docker(args: readonly string[], opts: RunOptions = {}): Promise<string> {
  const { execa } = await loadExeca();
  const r = await execa('docker', args, {
    reject: false,
    stdin: 'ignore',
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.cancelSignal ? { cancelSignal: opts.cancelSignal } : {}),
  });
  if (r.failed) {
    const why = firstLine(r.stderr) || firstLine(r.stdout) || (r.shortMessage ?? 'failed');
    throw new CommandError(
      `docker ${args.slice(0, 2).join(' ')}: ${why}`,
      lastLines(`${r.stdout}\n${r.stderr}`),
    );
  }
  return r.stdout.trim();
}

/** Like docker(), but resolves to undefined instead of rejecting (for "does X exist" questions). */
export async function dockerMaybe(
  args: readonly string[],
  opts: RunOptions = {},
): Promise<string | undefined> {
  try {
    return await docker(args, opts);
  } catch (err) {
    if (err instanceof CommandError) return undefined;
    throw err;
  }
}

const TAIL_LINES = 40;

/**
 * Runs FILE ARGS…, handing every output line (stdout and stderr) to onLine as it comes.
 * Resolves to all stdout lines; rejects with a CommandError carrying the last lines when it fails.
 */
export async function runStreaming(
  file: string,
  args: readonly string[],
  onLine: (line: string) => void,
  opts: RunOptions = {},
): Promise<string[]> {
  const { execa } = await loadExeca();
  const sub = execa(file, args, {
    reject: false,
    stdin: 'ignore',
    all: true,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.cancelSignal ? { cancelSignal: opts.cancelSignal } : {}),
  });
  const tail: string[] = [];
  for await (const line of sub.iterable({ from: 'all' })) {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    onLine(line);
  }
  const r = await sub;
  if (r.failed) {
    throw new CommandError(
      `${file} ${args.slice(0, 2).join(' ')} failed: ${(r.shortMessage ?? '').split('\n')[0]}`,
      tail,
    );
  }
  return r.stdout.split('\n').filter((l) => l.length > 0);
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ''
  );
}

function lastLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .slice(-TAIL_LINES);
}
