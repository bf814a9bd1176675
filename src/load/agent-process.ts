// The harness's side of one load agent child process (`pole-bench agent`): spawns it with an IPC
// channel, checks every message it sends against the protocol, and exposes the conversation as
// promises (ready, started, done, exited) plus a listener for the per-second intervals.
//
// An agent has exited only once everything it sent has been read. The child's 'exit' does not say
// so: on Linux libuv reaps children with waitpid on any SIGCHLD (another agent's, a node's, a `tc`
// run's), after the I/O of its poll round, so an agent that sends `done` and exits while the
// harness is busy in that round is reaped, and 'exit' emitted, before the bytes of its `done` are
// read in the next round. 'close' comes after the exit and the EOF of every pipe the child had,
// the IPC channel's included; the channel's 'disconnect' follows its EOF by a tick.
//
// An agent on another machine (the swarm runtime's) is no child: it dials the harness and speaks
// the same JSON lines over that connection (AgentProcess.overConnection); its exit is the
// connection's close, which comes after every byte it sent.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  doneOnHarnessClock,
  intervalOnHarnessClock,
  specOnAgentClock,
  startedOnHarnessClock,
  toAgentWall,
} from './agent-clock.js';
import type { ClockOffsets } from '../vocabulary/clock-offsets.js';
import { childNodeArgs } from '../util/child-node-args.js';
import {
  msg,
  parseAgentMessage,
  type DoneMessage,
  type IntervalMessage,
  type LoadSpec,
  type StartedMessage,
} from './agent-protocol.js';

const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/**
 * How long after its exit an agent's pipes may stay open. Its last messages are in the kernel's
 * buffers by then (a few hundred kB), read within a poll round; the bound is for a pipe some other
 * process still holds (a grandchild), so that exited, and kill() with it, always end.
 */
export const EXIT_DRAIN_MS = 5_000;

export interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SpawnAgentOptions {
  /** The CLI entry point (default: this package's bin/run.js). */
  readonly runJs?: string;
  /** How long to wait for `ready`. Default 20000 ms. */
  readonly readyTimeoutMs?: number;
  /** Called for every `interval` message as it arrives. */
  readonly onInterval?: (m: IntervalMessage) => void;
  /**
   * Run the agent through another command (e.g. `docker run -i … agent --stdio`) that speaks the
   * protocol as JSON lines on stdin/stdout instead of the Node IPC channel.
   */
  readonly stdioCommand?: { readonly file: string; readonly args: readonly string[] };
}

/** The harness's end of the conversation: Node IPC, or JSON lines over the child's stdio. */
interface Channel {
  readonly connected: boolean;
  send(m: unknown): void;
}

function ipcChannel(child: ChildProcess, onMessage: (m: unknown) => void): Channel {
  child.on('message', onMessage);
  child.stdout!.resume(); // the agent prints nothing there; keep the pipe from filling anyway
  return {
    get connected() {
      return child.connected;
    },
    // With a callback a failed send (an agent that has just exited, its channel closing: EPIPE)
    // is not thrown as an 'error' event, which would take the harness down; the agent's exit
    // settles its promises with the reason.
    send: (m) => {
      if (child.connected) child.send(m as object, () => undefined);
    },
  };
}

function stdioChannel(child: ChildProcess, onMessage: (m: unknown) => void): Channel {
  const lines = lineChannel(child.stdout!, child.stdin!, onMessage);
  return {
    get connected() {
      return lines.connected && child.exitCode === null;
    },
    send: (m) => lines.send(m),
  };
}

/** JSON lines in from `input`, out to `output` (a child's pipes, or both ends of one connection). */
function lineChannel(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  onMessage: (m: unknown) => void,
): Channel {
  let open = true;
  output.on('error', () => (open = false));
  output.on('close', () => (open = false));
  createInterface({ input }).on('line', (line) => {
    if (line.trim() === '') return;
    try {
      onMessage(JSON.parse(line));
    } catch {
      onMessage({ type: 'not-json', line });
    }
  });
  return {
    get connected() {
      return open;
    },
    send: (m) => {
      if (open) output.write(`${JSON.stringify(m)}\n`);
    },
  };
}

/** What the conversation runs over: a child process, or a connection the agent made. */
interface AgentLink {
  readonly channel: Channel;
  /** Once everything the agent sent has been read. */
  readonly exited: Promise<AgentExit>;
  readonly stderr: NodeJS.ReadableStream | null;
  readonly pid: number | undefined;
  /** Whether its output was still open EXIT_DRAIN_MS after its exit (messages may be unread). */
  readonly unread: () => boolean;
  /** Ends it at once (SIGKILL; a connection destroyed). */
  kill(): void;
  /** A child that could not be spawned or signalled. */
  onError(listener: (err: Error) => void): void;
}

function childLink(child: ChildProcess, o: SpawnAgentOptions, onMessage: (m: unknown) => void): AgentLink {
  let unread = false;
  return {
    channel: o.stdioCommand ? stdioChannel(child, onMessage) : ipcChannel(child, onMessage),
    exited: drained(child, o.stdioCommand === undefined, () => (unread = true)),
    stderr: child.stderr,
    pid: child.pid,
    unread: () => unread,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    onError: (listener) => child.on('error', listener),
  };
}

/** An agent that dialled the harness: its exit is the connection's close (after its last byte). */
function connectionLink(conn: Duplex, onMessage: (m: unknown) => void): AgentLink {
  const channel = lineChannel(conn, conn, onMessage);
  return {
    channel,
    exited: new Promise((resolve) => conn.once('close', () => resolve({ code: null, signal: null }))),
    stderr: null,
    pid: undefined,
    unread: () => false,
    kill: () => conn.destroy(),
    onError: (listener) => conn.on('error', listener),
  };
}

/**
 * The child's exit, once its output has been read to the end: 'close' (the exit and every pipe's
 * EOF), and with an IPC channel its 'disconnect' too. 'close' also follows a failed spawn, which
 * emits 'error' instead of 'exit'. Bounded by EXIT_DRAIN_MS from the exit.
 */
function drained(child: ChildProcess, ipc: boolean, onUnread: () => void): Promise<AgentExit> {
  return new Promise((resolve) => {
    let exit: AgentExit | undefined;
    let closed = false;
    let disconnected = !ipc;
    let bound: NodeJS.Timeout | undefined;
    const settle = (): void => {
      if (exit === undefined || !closed || !disconnected) return;
      clearTimeout(bound);
      resolve(exit);
    };
    const startBound = (): void => {
      bound ??= setTimeout(() => {
        // One more poll round first: a loop that was busy past the bound may have the last bytes
        // waiting, and timers run before the poll phase, setImmediate after it.
        setImmediate(() => {
          if (!closed || !disconnected) onUnread();
          closed = disconnected = true;
          settle();
        });
      }, EXIT_DRAIN_MS);
    };
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      startBound();
      settle();
    });
    // A spawn that failed has its exitCode set (a negative errno); a failed kill() does not.
    child.on('error', () => {
      if (child.exitCode !== null) startBound();
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      exit ??= { code, signal };
      closed = true;
      settle();
    });
    if (ipc) {
      child.once('disconnect', () => {
        disconnected = true;
        settle();
      });
    }
  });
}

export class AgentProcess {
  readonly started: Promise<StartedMessage>;
  /** Resolves with `done`; rejects on an `error` message, a bad message, or an exit without `done`. */
  readonly done: Promise<DoneMessage>;
  readonly exited: Promise<AgentExit>;
  readonly intervals: IntervalMessage[] = [];
  private readonly stderrLines: string[] = [];
  private settleStarted!: { resolve: (m: StartedMessage) => void; reject: (e: Error) => void };
  private settleDone!: { resolve: (m: DoneMessage) => void; reject: (e: Error) => void };
  private settleReady!: { resolve: () => void; reject: (e: Error) => void };
  private readonly ready: Promise<void>;
  private readonly link: AgentLink;
  private lastClockId = 0;
  /** The agent's clocks against the harness's, when it runs on another host (agent-clock.ts). */
  private clock: ClockOffsets | null = null;
  private readonly clockWaiters = new Map<number, (r: { wallMs: number; monoMs: number }) => void>();

  private constructor(
    makeLink: (onMessage: (m: unknown) => void) => AgentLink,
    private readonly o: SpawnAgentOptions,
  ) {
    this.ready = new Promise((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.started = new Promise((resolve, reject) => (this.settleStarted = { resolve, reject }));
    this.done = new Promise((resolve, reject) => (this.settleDone = { resolve, reject }));
    // Callers may await only some of these; a rejection nobody awaits must not crash the harness.
    for (const p of [this.ready, this.started, this.done]) p.catch(() => undefined);
    this.link = makeLink((raw) => this.onMessage(raw));
    this.exited = this.link.exited;
    if (this.link.stderr)
      createInterface({ input: this.link.stderr }).on('line', (line) => {
        this.stderrLines.push(line);
        if (this.stderrLines.length > 30) this.stderrLines.shift();
      });
    // A child that cannot be spawned (no such command) or signalled: said, never thrown.
    this.link.onError((err) => {
      const why = new Error(`load agent: ${err.message}`);
      this.settleReady.reject(why);
      this.settleStarted.reject(why);
      this.settleDone.reject(why);
    });
    // Everything the agent sent has been read by now: without `done`, it never sent one.
    void this.exited.then((x) => {
      const unread = this.link.unread()
        ? `; its output was still open ${EXIT_DRAIN_MS} ms after its exit, so messages may be unread`
        : '';
      // A dialled agent's end is its connection's close: no exit status, no stderr of ours to show.
      const why = new Error(
        this.link.stderr === null
          ? `load agent's connection to the harness closed without done${unread}`
          : `load agent exited (code ${x.code}, signal ${x.signal}) without sending done${unread}; stderr: ${this.stderrTail()}`,
      );
      this.settleReady.reject(why);
      this.settleStarted.reject(why);
      this.settleDone.reject(why);
    });
  }

  /** Spawns `pole-bench agent` and waits until it says it is ready. */
  static async spawn(o: SpawnAgentOptions = {}): Promise<AgentProcess> {
    const child = o.stdioCommand
      ? spawn(o.stdioCommand.file, [...o.stdioCommand.args], { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(process.execPath, [...childNodeArgs(), o.runJs ?? RUN_JS, 'agent'], {
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        });
    return AgentProcess.whenReady(new AgentProcess((onMessage) => childLink(child, o, onMessage), o), o);
  }

  /**
   * An agent that dialled the harness (swarm-task agent) and speaks the protocol as JSON lines on
   * `conn`; waits until it says it is ready. kill() destroys the connection (the agent stops).
   */
  static overConnection(
    conn: Duplex,
    o: Pick<SpawnAgentOptions, 'onInterval' | 'readyTimeoutMs'> = {},
  ): Promise<AgentProcess> {
    return AgentProcess.whenReady(new AgentProcess((onMessage) => connectionLink(conn, onMessage), o), o);
  }

  private static async whenReady(agent: AgentProcess, o: SpawnAgentOptions): Promise<AgentProcess> {
    const timeoutMs = o.readyTimeoutMs ?? 20_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        agent.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`load agent not ready within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
    } catch (err) {
      await agent.kill();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return agent;
  }

  get pid(): number | undefined {
    return this.link.pid;
  }

  /** Throws if the agent is no longer connected. */
  start(spec: LoadSpec): void {
    if (!this.link.channel.connected) throw new Error('the load agent is no longer connected');
    this.link.channel.send(msg.start(this.clock ? specOnAgentClock(spec, this.clock) : spec));
  }

  /**
   * Switch the recording phase now, or from a wall-clock instant. Ignored once the agent has
   * gone (it ends by itself after durationMs); how it ended is `done`'s to say.
   */
  phase(name: string, atMs?: number): void {
    const at = atMs !== undefined && this.clock ? toAgentWall(atMs, this.clock) : atMs;
    if (this.link.channel.connected) this.link.channel.send(msg.phase(name, at));
  }

  /** Ask the agent to stop sending and finish with `done`; ignored once it has gone. */
  stop(): void {
    if (this.link.channel.connected) this.link.channel.send(msg.stop());
  }

  /**
   * The agent's clocks (wall and monotonic ms), from a `clock` round trip: a RemoteClockReader for
   * measure/clock-probe.ts. Rejects once `signal` aborts (an agent that has gone never answers).
   */
  readClock(signal: AbortSignal): Promise<{ wallMs: number; monoMs: number }> {
    if (!this.link.channel.connected)
      return Promise.reject(new Error('the load agent is no longer connected'));
    const id = ++this.lastClockId;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.clockWaiters.delete(id);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.clockWaiters.set(id, (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      });
      this.link.channel.send(msg.clockQuestion(id));
    });
  }

  /**
   * From now on, stamps go out on the agent's clocks and come back on the harness's (agent-clock.ts):
   * for an agent on another host, with its offsets as measured (readClock, measure/clock-probe.ts).
   */
  onClocks(offsets: ClockOffsets): void {
    this.clock = offsets;
  }

  /** SIGKILL (if still running) and wait for the exit (at most EXIT_DRAIN_MS after it). */
  async kill(): Promise<AgentExit> {
    this.link.kill();
    return this.exited;
  }

  stderrTail(): string {
    return this.stderrLines.join(' | ');
  }

  private onMessage(raw: unknown): void {
    let m;
    try {
      m = parseAgentMessage(raw);
    } catch (err) {
      this.settleDone.reject(err as Error);
      return;
    }
    switch (m.type) {
      case 'ready':
        return this.settleReady.resolve();
      case 'started':
        return this.settleStarted.resolve(this.clock ? startedOnHarnessClock(m, this.clock) : m);
      case 'interval': {
        const i = this.clock ? intervalOnHarnessClock(m, this.clock) : m;
        this.intervals.push(i);
        this.o.onInterval?.(i);
        return;
      }
      case 'done':
        return this.settleDone.resolve(this.clock ? doneOnHarnessClock(m, this.clock) : m);
      case 'clock':
        this.clockWaiters.get(m.id)?.({ wallMs: m.wallMs, monoMs: m.monoMs });
        this.clockWaiters.delete(m.id);
        return;
      case 'error': {
        const e = new Error(`load agent: ${m.message}`);
        this.settleStarted.reject(e);
        this.settleDone.reject(e);
        return;
      }
    }
  }
}
