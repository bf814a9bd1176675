// A cluster of real `pole-bench node` processes on loopback: writes their configs, starts them,
// reads their event streams, kills and restarts them, and removes everything on stop(). Used by
// the node benchmark and the integration tests (and, behind the Runtime interface, by runs).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { NodeId } from '../../node/core/types.js';
import { freePorts } from '../../util/free-port.js';
import { childNodeArgs } from '../../util/child-node-args.js';
import { EventBook, type ClusterEvent } from '../event-book.js';

export type { ClusterEvent };

export interface ProcessClusterOptions {
  /** How many nodes (named p1, p2, …) or the members themselves. */
  readonly nodes: number | ReadonlyArray<{ readonly id: NodeId; readonly sid: number }>;
  readonly oracle?: string;
  readonly initialLeader?: NodeId;
  readonly preference?: readonly NodeId[];
  readonly fsync?: boolean;
  readonly timers?: {
    readonly tickMs?: number;
    readonly syncLimit?: number;
    readonly initLimit?: number;
    readonly electionTimeoutMs?: number;
    readonly retryBaseMs?: number;
    readonly heartbeatMs?: number;
  };
  /** The node config's `measure` section (heartbeat window and the like). */
  readonly measure?: Readonly<Record<string, number>>;
  readonly resign?: { readonly margin?: number; readonly checks?: number; readonly holdMs?: number };
  /** Data center of each node (default: all in "dc1"). */
  readonly datacenterOf?: (id: NodeId) => string;
  /**
   * Called once the nodes' peer ports are known and before any node starts: returns where `from`
   * dials `to` (a delay relay, say). Default: straight to the peer's own port.
   */
  readonly dialVia?: (
    nodes: ReadonlyArray<{ id: NodeId; sid: number; peerPort: number }>,
  ) => Promise<(from: NodeId, to: NodeId) => { host: string; port: number }>;
  readonly snapshotEvery?: number;
  /** Parent of the run's temp dir (default: the OS temp dir). */
  readonly baseDir?: string;
}

interface NodeSlot {
  readonly id: NodeId;
  readonly sid: number;
  readonly peerPort: number;
  readonly clientPort: number;
  readonly httpPort: number;
  readonly configFile: string;
  child: ChildProcess | undefined;
  exited: Promise<void> | undefined;
}

const RUN_JS = fileURLToPath(new URL('../../../../bin/run.js', import.meta.url));

export class ProcessCluster {
  private readonly book = new EventBook();
  private readonly waiters = new Set<{
    pred: (e: ClusterEvent) => boolean;
    resolve: (e: ClusterEvent) => void;
  }>();
  private readonly stderrTail = new Map<NodeId, string[]>();

  private constructor(
    readonly dir: string,
    private readonly slots: Map<NodeId, NodeSlot>,
  ) {}

  static async start(opts: ProcessClusterOptions): Promise<ProcessCluster> {
    const dir = await mkdtemp(join(opts.baseDir ?? tmpdir(), 'pole-bench-cluster-'));
    const members =
      typeof opts.nodes === 'number'
        ? Array.from({ length: opts.nodes }, (_, i) => ({ id: `p${i + 1}`, sid: i + 1 }))
        : opts.nodes;
    const ports = await freePorts(members.length * 3);
    const slots = new Map<NodeId, NodeSlot>();
    for (const [i, { id, sid }] of members.entries()) {
      slots.set(id, {
        id,
        sid,
        peerPort: ports[3 * i]!,
        clientPort: ports[3 * i + 1]!,
        httpPort: ports[3 * i + 2]!,
        configFile: join(dir, `${id}.json`),
        child: undefined,
        exited: undefined,
      });
    }
    const cluster = new ProcessCluster(dir, slots);
    try {
      const all = [...slots.values()].map((x) => ({ id: x.id, sid: x.sid, peerPort: x.peerPort }));
      const dial = opts.dialVia
        ? await opts.dialVia(all)
        : (_from: NodeId, to: NodeId) => ({ host: '127.0.0.1', port: cluster.slot(to).peerPort });
      for (const s of slots.values()) {
        await mkdir(join(dir, s.id), { recursive: true });
        const config = {
          id: s.id,
          sid: s.sid,
          listen: { host: '127.0.0.1', peerPort: s.peerPort, clientPort: s.clientPort, httpPort: s.httpPort },
          datacenter: opts.datacenterOf?.(s.id) ?? 'dc1',
          peers: [...slots.values()]
            .filter((p) => p.id !== s.id)
            .map((p) => ({ id: p.id, sid: p.sid, ...dial(s.id, p.id) })),
          dataDir: join(dir, s.id),
          fsync: opts.fsync ?? true,
          oracle: opts.oracle ?? 'history',
          ...(opts.initialLeader ? { initialLeader: opts.initialLeader } : {}),
          ...(opts.preference ? { preference: opts.preference } : {}),
          timers: opts.timers ?? {},
          ...(opts.measure ? { measure: opts.measure } : {}),
          ...(opts.resign ? { resign: opts.resign } : {}),
          ...(opts.snapshotEvery ? { snapshotEvery: opts.snapshotEvery } : {}),
        };
        await writeFile(s.configFile, JSON.stringify(config, null, 2));
      }
      await Promise.all([...slots.keys()].map((id) => cluster.startNode(id)));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get ids(): NodeId[] {
    return [...this.slots.keys()];
  }

  clientAddress(id: NodeId): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.slot(id).clientPort };
  }

  httpAddress(id: NodeId): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.slot(id).httpPort };
  }

  /** The node's process id while it runs. */
  pid(id: NodeId): number | undefined {
    return this.slot(id).child?.pid;
  }

  isRunning(id: NodeId): boolean {
    return this.slot(id).child !== undefined;
  }

  private slot(id: NodeId): NodeSlot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no node ${id} in this cluster`);
    return s;
  }

  /** Start (or restart) a node; resolves once it has announced `started`. */
  async startNode(id: NodeId): Promise<void> {
    const s = this.slot(id);
    if (s.child) throw new Error(`${id} is already running`);
    const since = this.events.length;
    // stdin stays open for the node's life: if this process dies, even by SIGKILL, the pipe
    // closes and the node stops itself.
    const child = spawn(
      process.execPath,
      [...childNodeArgs(), RUN_JS, 'node', '--config', s.configFile, '--stop-with-stdin'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    s.child = child;
    s.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => {
      if (s.child === child) s.child = undefined;
    });
    createInterface({ input: child.stdout! }).on('line', (line) => this.book.line(line));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const tail = this.stderrTail.get(id) ?? [];
      tail.push(line);
      if (tail.length > 20) tail.shift();
      this.stderrTail.set(id, tail);
    });
    // A node that dies at start (a port taken meanwhile, a bad config) fails the start at once,
    // with what it said, instead of after the timeout.
    const died = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) =>
        setTimeout(
          () =>
            reject(
              new Error(
                `${id} exited (code ${code}, signal ${signal}) before it started; stderr: ${(this.stderrTail.get(id) ?? []).join(' | ')}`,
              ),
            ),
          50, // let its last stderr lines arrive
        ),
      ),
    );
    died.catch(() => undefined);
    await Promise.race([this.waitFor((e) => e.node === id && e.ev === 'started', 20_000, since), died]).catch(
      (err: Error) => {
        throw new Error(`${err.message}; ${id} stderr: ${(this.stderrTail.get(id) ?? []).join(' | ')}`);
      },
    );
  }

  /** Send a signal (SIGKILL by default, the way a machine dies) and wait for the process to go. */
  async kill(id: NodeId, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
    const s = this.slot(id);
    const child = s.child;
    if (!child) throw new Error(`${id} is not running`);
    const at = wallNow();
    child.kill(signal);
    await s.exited;
    return at;
  }

  pause(id: NodeId): void {
    this.slot(id).child?.kill('SIGSTOP');
  }

  resume(id: NodeId): void {
    this.slot(id).child?.kill('SIGCONT');
  }

  /** The first event (from index `since` on) matching `pred`, waiting up to timeoutMs for it. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.book.waitFor(pred, timeoutMs, since);
  }

  get events(): readonly ClusterEvent[] {
    return this.book.events;
  }

  /** The leader serving now: the latest `serving` event of a leader whose process still runs. */
  async waitForServingLeader(
    timeoutMs: number,
    since = 0,
  ): Promise<{ leader: NodeId; epoch: number; event: ClusterEvent }> {
    const e = await this.waitFor(
      (x) => x.ev === 'serving' && x.leader === undefined && this.isRunning(x.node),
      timeoutMs,
      since,
    );
    return { leader: e.node, epoch: e.epoch as number, event: e };
  }

  /**
   * Stop every process and remove the cluster's files. Nodes are asked first (stdin closed: they
   * flush their events and exit, and a profiler started with POLE_BENCH_NODE_ARGS gets to write
   * its file); whatever is still there after STOP_GRACE_MS is killed.
   */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.slots.values()].map(async (s) => {
        const child = s.child;
        if (!child) return;
        child.stdin?.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await s.exited;
        clearTimeout(timer);
      }),
    );
    this.book.clearWaiters();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** How long a node may take to stop by itself at the end of a run before it is killed. */
const STOP_GRACE_MS = 3_000;

export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}
