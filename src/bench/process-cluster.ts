// A cluster of real `pole-bench node` processes on loopback, for the node's own benchmarks and
// tests: writes their configs from the node's own knobs (timers, resign, sync limits: what a
// topology does not expose), starts them, reads their event streams, kills and restarts them, and
// removes everything on stop(). Runs plan their POLE members from the topology instead
// (targets/pole/pole-members.ts) and start them on a runtime.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeId } from '../vocabulary/names.js';
import { freePorts } from '../util/free-port.js';
import { childNodeArgs } from '../util/child-node-args.js';
import { nodeProcessEnv } from '../node/node-process-env.js';
import { MemberProcesses, type ProcessMembers } from '../runtime/process/member-processes.js';
import { parseNodeEventLine, type ClusterEvent } from '../vocabulary/node-events.js';

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
  /** A follower further behind than this many txns is synced with a snapshot. */
  readonly syncDiffLimit?: number;
  /** Whom a new leader behind its quorum catches up from among equals. */
  readonly catchUpFrom?: 'first-answer' | 'highest-id';
  /** Whom an election's collection waits for before T (the node's default: live). */
  readonly electionWaitFor?: 'all' | 'live';
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
  /** One write in this many traced (default: the node's, TRACE_EVERY). */
  readonly traceEvery?: number;
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
}

const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/** The benches' and tests' cluster of POLE nodes, with the members' controls runs use too (ProcessMembers). */
export class ProcessCluster implements ProcessMembers {
  private constructor(
    readonly dir: string,
    private readonly slots: Map<NodeId, NodeSlot>,
    private readonly members: MemberProcesses,
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
      });
    }
    const processes = new MemberProcesses(
      [...slots.values()].map((s) => ({
        id: s.id,
        // stdin stays open for the node's life: if this process dies, even by SIGKILL, the pipe
        // closes and the node stops itself.
        launch: {
          command: process.execPath,
          args: [...childNodeArgs(), RUN_JS, 'node', '--config', s.configFile, '--stop-with-stdin'],
          env: nodeProcessEnv(),
        },
        translate: parseNodeEventLine,
        stopsWithStdin: true,
        stopGraceMs: STOP_GRACE_MS,
        isStarted: (e) => e.ev === 'started',
        startTimeoutMs: 20_000,
      })),
    );
    const cluster = new ProcessCluster(dir, slots, processes);
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
          ...(opts.syncDiffLimit !== undefined ? { syncDiffLimit: opts.syncDiffLimit } : {}),
          ...(opts.catchUpFrom !== undefined ? { catchUpFrom: opts.catchUpFrom } : {}),
          ...(opts.electionWaitFor !== undefined ? { electionWaitFor: opts.electionWaitFor } : {}),
          ...(opts.snapshotEvery ? { snapshotEvery: opts.snapshotEvery } : {}),
          ...(opts.traceEvery ? { traceEvery: opts.traceEvery } : {}),
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
    return this.members.pid(id);
  }

  isRunning(id: NodeId): boolean {
    return this.members.isRunning(id);
  }

  private slot(id: NodeId): NodeSlot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no node ${id} in this cluster`);
    return s;
  }

  /** Start (or restart) a node; resolves once it has announced `started`. */
  startNode(id: NodeId): Promise<void> {
    this.slot(id);
    return this.members.start(id);
  }

  restart(id: NodeId): Promise<void> {
    return this.startNode(id);
  }

  /** Send a signal (SIGKILL by default, the way a machine dies) and wait for the process to go. */
  kill(id: NodeId, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
    return this.members.kill(id, signal);
  }

  pause(id: NodeId): void {
    this.members.pause(id);
  }

  resume(id: NodeId): void {
    this.members.resume(id);
  }

  /** The first event (from index `since` on) matching `pred`, waiting up to timeoutMs for it. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.members.waitFor(pred, timeoutMs, since);
  }

  get events(): readonly ClusterEvent[] {
    return this.members.events;
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
    return { leader: e.node, epoch: e.ev === 'serving' ? (e.epoch ?? 0) : 0, event: e };
  }

  /**
   * Stop every process and remove the cluster's files. Nodes are asked first (stdin closed: they
   * flush their events and exit, and a profiler started with POLE_BENCH_NODE_ARGS gets to write
   * its file); whatever is still there after STOP_GRACE_MS is killed.
   */
  async stop(): Promise<void> {
    await this.members.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** How long a node may take to stop by itself at the end of a run before it is killed. */
const STOP_GRACE_MS = 3_000;
