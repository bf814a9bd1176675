// The processes a test started, from /proc: to check that a run left none behind; and running a
// fixture script to its end, bounded; and a run's processes found by the TMPDIR only it uses.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';

/** Every descendant pid of `pid`. */
export async function descendants(pid: number): Promise<number[]> {
  const byParent = new Map<number, number[]>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const c of byParent.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Of `pids`, those still running. */
export function stillAlive(pids: readonly number[]): number[] {
  return pids.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

export interface ChildEnd {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
  readonly ms: number;
}

/**
 * Runs `node script ...args` to its end; SIGKILLs it if it is still there after
 * `limitMs` (then `timedOut`, with what it printed so far).
 */
export async function runNodeScript(
  script: string,
  args: readonly string[],
  limitMs = 15_000,
): Promise<ChildEnd | { readonly timedOut: true; readonly out: string; readonly err: string }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const started = Date.now();
  const ended = await Promise.race([
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    ),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), limitMs).unref()),
  ]);
  if (ended === null) {
    child.kill('SIGKILL');
    return { timedOut: true, out, err };
  }
  return { ...ended, out, err, ms: Date.now() - started };
}

/**
 * Every running process as `pid args…`, read from /proc: a machine (a slim container) may have no
 * ps or pgrep, and the tests must not need what the harness does not.
 */
export function commandLines(): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args.length > 0) out.push(`${name} ${args.join(' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Command lines of the running processes that contain `pattern` and name `dir` (a test's own TMPDIR). */
export function processesUnder(dir: string, pattern: string = dir): string[] {
  return commandLines().filter(
    (l) => l.includes(pattern) && l.includes(dir) && !l.startsWith(`${process.pid} `),
  );
}
