// src/node/: the POLE node, the system under test (`pole-bench node`): the pure protocol (core/), its
// durable log (log/), its wire (net/), write tracing (trace/), the simulator (sim/), and this wiring.
//
// Wires the pure node core to the real world: TCP peer links, the client API, the durable store,
// a monotonic clock, the event stream on stdout and the HTTP status page. Effects are applied in
// the core's required order (persist + fsync, then sends, replies); effects drained while an fsync
// is in progress wait for it and share the next one (group commit), except what promises nothing
// about this node's disk (core/send-order.ts), which leaves at once.
import { performance } from 'node:perf_hooks';
import type { ClientReply, CoreInput, Ready } from './core/core-types.js';
import { compareZxid, formatZxid, ZERO_ZXID, type Zxid } from '../vocabulary/zxid.js';
import { NodeCore } from './core/node-core.js';
import type { Oracle } from './core/oracles/oracle.js';
import { createOracle, knownOracleNames, oracleOptions } from './core/oracles/registry.js';
import { heartbeatOptionsOf, membersOf, type NodeConfig } from './config.js';
import { EventLog, type EventLogOptions } from './event-log.js';
import { DurableStore } from './log/durable-store.js';
import { MetricsRegistry } from './metrics.js';
import { ClientApiServer, type WriteOutcome } from './net/client-server.js';
import { PeerNetwork } from './net/peer-network.js';
import type { PeerMessage } from './core/zab-messages.js';
import type { NodeId } from './core/types.js';
import { TraceBatch } from './trace/trace-batch.js';
import { monoMs, WriteTracer } from './trace/write-tracer.js';
import { HeldSends, lastAppended, replyMayPrecedeFsync } from './core/send-order.js';
import { startStatusServer, type NodeStatus, type StatusServer } from './status-server.js';
import { watchLoopStalls } from './loop-stall-watch.js';

export interface NodeServerOptions {
  /** Where events go (default: stdout). */
  readonly events?: EventLogOptions['out'];
}

export interface BoundPorts {
  readonly peerPort: number;
  readonly clientPort: number;
  readonly httpPort: number;
}

/** A turn's output that waits for its persist ops to be durable (send-order.ts). */
interface HeldTurn {
  readonly persist: Ready['persist'];
  readonly sends: Ready['sends'];
  readonly replies: Ready['replies'];
}

export class NodeServer {
  private readonly pendingReadies: HeldTurn[] = [];
  /** Sends waiting for a disk round, per peer and type: what an early send may not overtake. */
  private readonly held = new HeldSends();
  private readonly clusterSize: number;
  private readonly replyTo = new Map<number, (o: WriteOutcome) => void>();
  private handleSeq = 0;
  private readyScheduled = false;
  /** The leader's commit point last stamped as decided (the write tracer's `decided` step). */
  private decidedUpTo: Zxid = ZERO_ZXID;
  private draining = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt: number | undefined;
  private stopped = false;
  private readonly metrics = new MetricsRegistry();
  private readonly counters;
  /** The configured oracle first, then every other one this node can compute, for /status. */
  private readonly statusOracles: Oracle[];
  /** Stamps the steps of a sample of writes for the report's latency anatomy. */
  private readonly tracer: WriteTracer;
  private readonly traceLines: TraceBatch;
  private readonly stallWatch: NodeJS.Timeout;

  private constructor(
    readonly config: NodeConfig,
    private readonly core: NodeCore,
    private readonly store: DurableStore,
    private readonly events: EventLog,
    private net: PeerNetwork | undefined,
    private clients: ClientApiServer | undefined,
    private http: StatusServer | undefined,
  ) {
    // Trace lines are held and written in batches (trace/trace-batch.ts says why).
    this.traceLines = new TraceBatch((f) => this.events.emit('trace', f));
    this.tracer = new WriteTracer((f) => this.traceLines.add(f), monoMs, config.traceEvery);
    this.stallWatch = watchLoopStalls((ms) => this.events.emit('loop-stalled', { ms }));
    this.clusterSize = membersOf(config).length;
    const opts = oracleOptions(config);
    this.statusOracles = [
      createOracle(config.oracle, opts),
      ...knownOracleNames()
        .filter((n) => n !== config.oracle && (n !== 'preference' || config.preference))
        .map((n) => createOracle(n, opts)),
    ];
    this.counters = {
      writes: this.metrics.counter('pole_client_writes_total', 'Client write requests received'),
      replies: this.metrics.counter('pole_client_replies_total', 'Client write replies by outcome', [
        'outcome',
      ]),
      events: this.metrics.counter('pole_events_total', 'Protocol events by kind', ['ev']),
    };
    const epoch = this.metrics.gauge('pole_epoch', 'Epoch of the current leadership or election');
    const role = this.metrics.gauge('pole_role', 'Current role (1 for the active one)', ['role']);
    const committed = this.metrics.gauge('pole_commit_counter', 'Counter of the last committed zxid');
    const logged = this.metrics.gauge('pole_log_counter', 'Counter of the last logged zxid');
    const bytes = this.metrics.gauge('pole_log_bytes_written', 'Bytes written to the durable store');
    const peerBytes = this.metrics.gauge('pole_peer_bytes', 'Bytes on peer links', ['direction']);
    this.metrics.onCollect(() => {
      epoch.set(core.epoch);
      for (const r of ['looking', 'following', 'leading']) role.set(core.role === r ? 1 : 0, { role: r });
      committed.set(core.commitZxid.counter);
      logged.set(core.lastZxid.counter);
      bytes.set(store.bytesWritten);
      const s = this.net?.stats();
      if (s) {
        peerBytes.set(s.bytesIn, { direction: 'in' });
        peerBytes.set(s.bytesOut, { direction: 'out' });
      }
    });
  }

  static async start(config: NodeConfig, opts: NodeServerOptions = {}): Promise<NodeServer> {
    const events = new EventLog(config.id, opts.events !== undefined ? { out: opts.events } : {});
    const { store, recovered, report } = await DurableStore.open({
      dir: config.dataDir,
      fsync: config.fsync,
    });
    const members = membersOf(config);
    const heartbeat = heartbeatOptionsOf(config);
    const core = new NodeCore(
      {
        self: { id: config.id, sid: config.sid },
        members,
        oracle: createOracle(config.oracle, oracleOptions(config)),
        ...(config.initialLeader !== undefined ? { initialLeader: config.initialLeader } : {}),
        timers: config.timers,
        snapshotEvery: config.snapshotEvery,
        ...(config.syncDiffLimit !== undefined ? { syncDiffLimit: config.syncDiffLimit } : {}),
        logInMemory: config.logInMemory,
        ...(config.catchUpFrom !== undefined ? { catchUpFrom: config.catchUpFrom } : {}),
        ...(config.electionWaitFor !== undefined ? { electionWaitFor: config.electionWaitFor } : {}),
        ...(heartbeat ? { heartbeat, measurementWaitMs: config.measure.waitMs } : {}),
        ...(config.resign ? { resign: config.resign } : {}),
      },
      recovered,
    );
    const server = new NodeServer(config, core, store, events, undefined, undefined, undefined);
    try {
      await server.listen();
    } catch (err) {
      await server.stop();
      throw err;
    }
    events.emit('started', {
      pid: process.pid,
      datacenter: config.datacenter,
      // What reached this process of the tunables its runtime set (node-process-env.ts): the run
      // holds it against the ones its report names.
      glibcTunables: process.env['GLIBC_TUNABLES'] ?? null,
      ...server.ports(),
      recovered: {
        txns: report.txns,
        snapshot: report.snapshotZxid ? formatZxid(report.snapshotZxid) : null,
        tornTailBytes: report.tornTailBytes,
        acceptedEpoch: recovered.acceptedEpoch,
        currentEpoch: recovered.currentEpoch,
      },
    });
    core.start(performance.now());
    server.scheduleReady();
    return server;
  }

  private async listen(): Promise<void> {
    const c = this.config;
    this.net = new PeerNetwork({
      self: { id: c.id, sid: c.sid },
      listenHost: c.listen.host,
      listenPort: c.listen.peerPort,
      peers: c.peers.map((p) => ({ member: { id: p.id, sid: p.sid }, host: p.host, port: p.port })),
      onMessage: (from, msg) => {
        this.tracer.peerIn(from, msg);
        this.input({ type: 'message', now: performance.now(), from, msg });
      },
      onConnected: (peer) => this.input({ type: 'connected', now: performance.now(), peer }),
      onDisconnected: (peer) => this.input({ type: 'disconnected', now: performance.now(), peer }),
      onProgress: (peer) => this.input({ type: 'heard', now: performance.now(), peer }),
      onLinkError: (info) => process.stderr.write(`${c.id}: peer link ${info.peer ?? '?'}: ${info.reason}\n`),
    });
    await this.net.start();
    this.clients = new ClientApiServer({
      host: c.listen.host,
      port: c.listen.clientPort,
      maxWriteBytes: c.maxWriteBytes,
      // The load's end: its trace lines now rather than at the batch's timer, so the run has them.
      onClientClosed: () => this.traceLines.flush(),
      handler: {
        write: (req, reply) => {
          this.counters.writes.inc();
          const handle = ++this.handleSeq;
          this.replyTo.set(handle, reply);
          this.tracer.clientWrite(handle, req.clientId, req.requestId);
          this.input({ type: 'write', now: performance.now(), handle, ...req });
        },
        read: (path) => {
          if (this.core.clientReadable === undefined) return 'NOT_SERVING';
          const z = this.core.read(path);
          return z ? { zxid: z.zxid, version: z.version, data: z.data } : undefined;
        },
        status: () => this.status(),
      },
    });
    await this.clients.start();
    this.http = await startStatusServer({
      host: c.listen.host,
      port: c.listen.httpPort,
      status: () => this.status(),
      metrics: this.metrics,
    });
  }

  ports(): BoundPorts {
    return {
      peerPort: this.net?.port ?? 0,
      clientPort: this.clients?.port ?? 0,
      httpPort: this.http?.port ?? 0,
    };
  }

  status(): NodeStatus & { commitCounter: number; connectedPeers: readonly string[] } {
    const core = this.core;
    return {
      id: this.config.id,
      sid: this.config.sid,
      datacenter: this.config.datacenter,
      role: core.role,
      phase: core.phase,
      epoch: core.epoch,
      ...(core.leader !== undefined ? { leader: core.leader } : {}),
      lastZxid: formatZxid(core.lastZxid),
      commitZxid: formatZxid(core.commitZxid),
      commitCounter: core.commitZxid.counter,
      oracle: this.config.oracle,
      scores: Object.fromEntries(this.statusOracles.map((o) => [o.name, core.scoreWith(o)])),
      ...this.measurementStatus(),
      connectedPeers: this.net?.connectedPeers() ?? [],
    };
  }

  private measurementStatus(): Pick<NodeStatus, 'rttMs' | 'requestRates' | 'requestRate' | 'peers'> {
    const m = this.core.measurements();
    if (!m) return {};
    const peers: Record<string, NonNullable<NodeStatus['peers']>[string]> = {};
    for (const [id, p] of Object.entries(m.peers)) {
      peers[id] = {
        samples: p.samples,
        live: p.live,
        ...(p.rttMs !== undefined ? { rttMs: p.rttMs } : {}),
        ...(p.rate !== undefined ? { rate: p.rate } : {}),
        ...(p.score !== undefined ? { score: p.score } : {}),
      };
    }
    return {
      rttMs: Object.fromEntries(m.rttMs),
      requestRates: Object.fromEntries(m.requestRates),
      requestRate: m.requestRates.get(this.config.id) ?? 0,
      peers,
    };
  }

  private input(i: CoreInput): void {
    if (this.stopped) return;
    this.core.step(i);
    this.scheduleReady();
  }

  /** Drain once per turn of the event loop, so a burst of inputs becomes one batch (one fsync). */
  private scheduleReady(): void {
    if (this.readyScheduled || this.stopped) return;
    this.readyScheduled = true;
    setImmediate(() => {
      this.readyScheduled = false;
      if (this.stopped) return;
      const r = this.core.ready();
      // The leader's commit point moved in this turn: the decision, whichever follower hears of
      // it when (a COMMIT at once, or the point carried by a later PROPOSAL).
      if (this.core.role === 'leading' && compareZxid(this.core.commitZxid, this.decidedUpTo) > 0) {
        this.decidedUpTo = this.core.commitZxid;
        this.tracer.decided(this.decidedUpTo);
      }
      // Heartbeats wait for no fsync: an RTT sample must not include the disk.
      for (const s of r.heartbeats) this.net?.send(s.to, s.msg);
      // Events are observations: stamp them now, not after the fsync.
      for (const e of r.events) {
        this.counters.events.inc({ ev: e.ev });
        this.events.emitEvent(e);
      }
      if (r.persist.length + r.sends.length + r.replies.length > 0) {
        this.pendingReadies.push(this.sendEarly(r));
        void this.drain();
      }
      this.armTimer();
    });
  }

  /**
   * Sends at once what may precede this turn's fsync (send-order.ts: forwards, PROPOSALs, COMMITs,
   * replies) while a disk round is pending or due; returns what must wait for it. With nothing to
   * wait for, everything waits for nothing: drain() sends it in this same turn.
   */
  private sendEarly(r: Ready): HeldTurn {
    if (r.persist.length === 0 && this.pendingReadies.length === 0 && !this.draining) return r;
    const sends = this.held.split(r.sends, this.clusterSize, (s) => this.sendPeer(s.to, s.msg));
    if (!replyMayPrecedeFsync(this.clusterSize)) return { persist: r.persist, sends, replies: r.replies };
    for (const rep of r.replies) this.reply(rep);
    return { persist: r.persist, sends, replies: [] };
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.pendingReadies.length > 0 && !this.stopped) {
        const batch = this.pendingReadies.splice(0);
        const persist = batch.flatMap((r) => r.persist);
        if (persist.length > 0) {
          const traced = this.tracer.persisting(persist);
          this.store.apply(persist);
          await this.store.flush();
          this.tracer.durable(traced);
          // The leader counts itself in a quorum only for what is durable (send-order.ts). Only a
          // leader needs to hear it: elsewhere it would cost a turn per flush for nothing.
          const last = this.core.role === 'leading' ? lastAppended(persist) : undefined;
          if (last) this.input({ type: 'persisted', now: performance.now(), zxid: last });
        }
        for (const r of batch) {
          this.held.release(r.sends, (s) => this.sendPeer(s.to, s.msg));
          for (const rep of r.replies) this.reply(rep);
        }
      }
    } catch (err) {
      // The disk failed: nothing more can be made durable, so this node must stop rather than ack.
      process.stderr.write(`${this.config.id}: fatal: ${(err as Error).stack ?? String(err)}\n`);
      this.events.emit('fatal', { error: String(err) });
      await this.stop();
      process.exitCode = 3;
    } finally {
      this.draining = false;
    }
  }

  private reply(rep: ClientReply): void {
    const fn = this.replyTo.get(rep.handle);
    if (!fn) return;
    this.replyTo.delete(rep.handle);
    this.counters.replies.inc({ outcome: rep.ok ? 'ok' : rep.code });
    fn(rep.ok ? { ok: true, zxid: rep.zxid } : { ok: false, code: rep.code });
    this.tracer.replied(rep.handle);
  }

  private sendPeer(to: NodeId, msg: PeerMessage): void {
    this.net?.send(to, msg);
    this.tracer.peerOut(msg);
  }

  private armTimer(): void {
    const at = this.core.nextTimerAt();
    if (at === this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = at;
    if (at === undefined || this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = undefined;
        this.input({ type: 'tick', now: Math.max(performance.now(), at) });
      },
      Math.max(0, at - performance.now()),
    );
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    clearInterval(this.stallWatch);
    await Promise.allSettled([this.net?.close(), this.clients?.close(), this.http?.close()]);
    await this.store.close().catch(() => undefined);
    this.traceLines.flush();
    this.events.emit('stopped', {});
    await this.events.flush();
  }
}

/**
 * `pole-bench node`: run until SIGTERM or SIGINT, then shut down cleanly. With `stopWithStdin`
 * (set by harnesses that start nodes), also when stdin closes: the harness holds the other end,
 * so a harness that dies, however it dies, takes its nodes with it.
 */
export async function runNode(config: NodeConfig, opts: { stopWithStdin?: boolean } = {}): Promise<void> {
  const server = await NodeServer.start(config);
  await new Promise<void>((resolve) => {
    const done = (): void => resolve();
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
    if (opts.stopWithStdin) {
      process.stdin.once('end', done);
      process.stdin.once('close', done);
      process.stdin.resume();
    }
  });
  await server.stop();
  process.stdin.destroy();
}
