// The members of a run as child processes of the harness, whatever they run (a POLE node, a
// ZooKeeper server): start each with its command, read its output lines into events through the
// target's translator, kill, pause and restart it, and stop them all. What a member is, and what
// its lines mean, the caller says; this file only keeps processes and their events.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { EventBook } from '../event-book.js';
import { OutputLines } from '../output-lines.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import type { Endpoint } from '../../load/write-client.js';
import type { MemberControl } from '../../targets/target.js';
import { wallNowMs } from '../../util/wall-clock.js';

/** A target's members running as processes of this machine, as the process runtime holds them. */
export interface ProcessMembers extends MemberControl {
  pid(id: string): number | undefined;
  stop(): Promise<void>;
}

export interface MemberCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

export interface MemberSpec {
  readonly id: string;
  /** The command that starts (or restarts) the member. */
  readonly launch: MemberCommand;
  /**
   * Turns one line of the member's stdout into events (none for most lines). Keeps whatever state
   * it needs (a ZooKeeper server's last state, say) across lines and restarts.
   */
  readonly translate: (line: string) => readonly ClusterEvent[];
  /**
   * The harness holds the member's stdin: closed, a POLE node stops by itself (and a member whose
   * harness died, however it died, goes with it). False for members that do not read stdin.
   */
  readonly stopsWithStdin: boolean;
  /** How long the member may take to stop by itself at the end of a run before it is killed. */
  readonly stopGraceMs: number;
  /** Waits for the first event of a start: the member is up when it appears. */
  readonly isStarted: (e: ClusterEvent) => boolean;
  /** How long a start may take. */
  readonly startTimeoutMs: number;
  /** Where every output line of the member also goes (appended across restarts), if anywhere. */
  readonly logFile?: string;
}

interface Slot {
  readonly spec: MemberSpec;
  child: ChildProcess | undefined;
  exited: Promise<void> | undefined;
  /** The current process's output kept for error messages. */
  readonly output: OutputLines;
}

export class MemberProcesses {
  private readonly book = new EventBook();
  private readonly slots = new Map<string, Slot>();

  constructor(specs: readonly MemberSpec[]) {
    for (const spec of specs)
      this.slots.set(spec.id, { spec, child: undefined, exited: undefined, output: new OutputLines() });
  }

  get ids(): string[] {
    return [...this.slots.keys()];
  }

  get events(): readonly ClusterEvent[] {
    return this.book.events;
  }

  /** Records an event that did not come from a member's output (the harness's own observation). */
  record(e: ClusterEvent): void {
    this.book.push(e);
  }

  pid(id: string): number | undefined {
    return this.slot(id).child?.pid;
  }

  isRunning(id: string): boolean {
    return this.slot(id).child !== undefined;
  }

  /** The member's last output lines (stderr and stdout, interleaved), for an error message. */
  tail(id: string): string {
    return this.slot(id).output.toString();
  }

  private slot(id: string): Slot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no member ${id}`);
    return s;
  }

  /** Starts (or restarts) a member; resolves once it is started, rejects at once if it dies first. */
  async start(id: string): Promise<void> {
    const s = this.slot(id);
    if (s.child) throw new Error(`${id} is already running`);
    const since = this.book.events.length;
    const { launch } = s.spec;
    const child = spawn(launch.command, [...launch.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(launch.env ? { env: launch.env } : {}),
      ...(launch.cwd ? { cwd: launch.cwd } : {}),
    });
    s.child = child;
    // A member that is gone when its stdin is closed (killed, or stopping by itself) makes the
    // pipe fail with EPIPE; unhandled, that error would take the harness down at tear-down.
    child.stdin?.on('error', () => undefined);
    s.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => {
      if (s.child === child) s.child = undefined;
    });
    // A member that cannot be started at all (no such command) reports it as an error event.
    s.output.clear();
    child.once('error', (err) => s.output.keep(`spawn failed: ${err.message}`));
    const log = s.spec.logFile ? createWriteStream(s.spec.logFile, { flags: 'a' }) : undefined;
    // The log is a copy for the reader: a failing disk must not take the harness down.
    log?.on('error', (err) => s.output.keep(`log file ${s.spec.logFile}: ${err.message}`));
    // Ended once the output pipes are drained ('close'), not at 'exit': lines still in a pipe when
    // the process exits are read after it, and a write after end() threw out of the harness (a
    // member killed while writing, CI's `bench node --target etcd` SIGTERM test).
    child.once('close', () => log?.end());
    createInterface({ input: child.stdout! }).on('line', (line) => {
      log?.write(`${line}\n`);
      const evs = s.spec.translate(line);
      // Kept for an error message: plain text (a JVM's, or a flag's complaint), and what a member
      // that logs JSON (etcd) said as an error.
      if (
        (evs.length === 0 && !line.startsWith('{')) ||
        evs.some((e) => e.ev === 'log-error' || e.ev === 'fatal')
      )
        s.output.keep(line);
      for (const e of evs) this.book.push(e);
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      log?.write(`${line}\n`);
      s.output.keep(line);
    });
    // A member that dies at start (a port taken meanwhile, a bad config) fails the start at once,
    // with what it said, instead of after the timeout.
    const died = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) =>
        setTimeout(
          () =>
            reject(
              new Error(
                `${id} exited (code ${code}, signal ${signal}) before it started; output: ${this.tail(id)}`,
              ),
            ),
          100, // let its last lines arrive
        ),
      ),
    );
    died.catch(() => undefined);
    await Promise.race([
      this.book.waitFor((e) => e.node === id && s.spec.isStarted(e), s.spec.startTimeoutMs, since),
      died,
    ]).catch((err: Error) => {
      if (err.message.startsWith(`${id} exited`)) throw err;
      throw new Error(`${id} did not start: ${err.message}; output: ${this.tail(id)}`);
    });
  }

  /** Sends a signal (SIGKILL by default, the way a machine dies); resolves when the process is gone. */
  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
    const s = this.slot(id);
    const child = s.child;
    if (!child) throw new Error(`${id} is not running`);
    const at = wallNowMs();
    child.kill(signal);
    await s.exited;
    return at;
  }

  pause(id: string): void {
    this.slot(id).child?.kill('SIGSTOP');
  }

  resume(id: string): void {
    this.slot(id).child?.kill('SIGCONT');
  }

  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.book.waitFor(pred, timeoutMs, since);
  }

  /**
   * These processes as a target's members: what only the target knows (addresses, what to remove
   * after stopping) is given, the rest is this class's.
   */
  asMembers(o: {
    clientAddress: (id: string) => Endpoint;
    httpAddress?: (id: string) => Endpoint | undefined;
    afterStop?: () => Promise<void>;
  }): ProcessMembers {
    const book = this.book;
    return {
      get events() {
        return book.events;
      },
      waitFor: (pred, timeoutMs, since) => this.waitFor(pred, timeoutMs, since),
      kill: (id) => this.kill(id),
      restart: (id) => this.start(id),
      pause: (id) => this.pause(id),
      resume: (id) => this.resume(id),
      isRunning: (id) => this.isRunning(id),
      pid: (id) => this.pid(id),
      clientAddress: o.clientAddress,
      httpAddress: o.httpAddress ?? (() => undefined),
      stop: async () => {
        await this.stop();
        await o.afterStop?.();
      },
    };
  }

  /**
   * Stops every member: asked first (stdin closed, or SIGTERM for members that do not read it),
   * killed after its grace period. A paused member is resumed first so that it can stop.
   */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.slots.values()].map(async (s) => {
        const child = s.child;
        if (!child) return;
        child.kill('SIGCONT');
        if (s.spec.stopsWithStdin) child.stdin?.end();
        else child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), s.spec.stopGraceMs);
        await s.exited;
        clearTimeout(timer);
      }),
    );
    this.book.clearWaiters();
  }
}
