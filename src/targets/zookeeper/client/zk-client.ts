// src/targets/zookeeper/client/: the harness's own ZooKeeper client: jute, the records and requests it
// speaks, and a session over one connection (this file).
//
// ZkClient: one ZooKeeper session over one TCP connection, requests pipelined. ZooKeeper answers
// a session's requests in the order they were sent, but replies are still matched by xid, so a
// reply that does not fit is a protocol error instead of a silent mix-up.
//
// No reconnection: a session whose connection ends is over for this client (the load agents open
// a new one on the next write, as they do with the POLE node). Failures reject with ZkError:
//   code = ZooKeeper's own error name (NONODE, NODEEXISTS, BADVERSION, SESSIONEXPIRED, …) for an
//   error reply, or the client's: DISCONNECTED (connection lost or never made), TIMEOUT (no reply
//   within requestTimeoutMs), CLOSED (close() or abandon() called), PROTOCOL (undecodable bytes).
//
// For the election's participants, which live many to one OS process and are crashed and paused:
// abandon() ends the connection the way a killed process's ends (no closeSession, so the server
// expires the session only after its timeout), pause() stalls the client as the OS would stall
// its process, and acknowledgedSentAt says how recently the server is known to have heard from
// the session (what a lease on the session can be measured from).
import { connect as tcpConnect, type Socket } from 'node:net';
import { CoalescingWriter } from '../../../util/wire/coalescing-writer.js';
import { FrameDecoder, describeFrameError } from '../../../util/wire/frame-decoder.js';
import type { Zxid } from '../../../vocabulary/zxid.js';
import { JuteReader } from './jute.js';
import {
  XID_NOTIFICATION,
  XID_PING,
  decodeConnectResponse,
  decodeReplyBody,
  decodeReplyHeader,
  decodeWatcherEvent,
  encodeConnectRequest,
  encodeRequest,
  errorName,
  zxidOf,
  type CreateModeName,
  type CreateOp,
  type MultiResult,
  type ReplyBody,
  type Request,
  type Stat,
  type WatcherEvent,
} from './zk-protocol.js';
import { wallNowMs } from '../../../util/wall-clock.js';

export type ZkClientCode = 'DISCONNECTED' | 'TIMEOUT' | 'CLOSED' | 'PROTOCOL';

export class ZkError extends Error {
  override readonly name = 'ZkError';
  constructor(
    /** ZooKeeper's error name, or the client's own (ZkClientCode). */
    readonly code: string,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? code, options);
  }
}

export interface ZkClientOptions {
  /** Session timeout asked for; the server bounds it to [2, 20] × its tickTime. Default 10000. */
  readonly sessionTimeoutMs?: number;
  /** Per-request deadline; 0 disables it. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Deadline of the TCP connect plus the session handshake. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Called for every watch notification. */
  onWatch?(e: WatcherEvent): void;
  /** Called once when an established session's connection ends (close() and abandon() included). */
  onDisconnect?(error: ZkError): void;
  /**
   * Called when a reply shows the server received a message sent at `sentAt` (wall-clock ms),
   * later than any it was known to have received before: see acknowledgedSentAt.
   */
  onAcknowledged?(sentAt: number): void;
}

export interface ZkReply<T> {
  readonly zxid: Zxid;
  readonly value: T;
}

interface Pending {
  readonly op: Request['op'];
  readonly resolve: (r: { header: { zxid: bigint }; body: ReplyBody }) => void;
  readonly reject: (err: ZkError) => void;
  timer: NodeJS.Timeout | undefined;
  /** wallMs() when the request was handed to the writer (it leaves within the same loop turn). */
  readonly sentAt: number;
}

/** Largest reply accepted: ZooKeeper's default jute.maxbuffer (1 MiB) plus headers. */
const MAX_FRAME = 1024 * 1024 + 4096;

/** Wall-clock ms with µs resolution: the clock the harness stamps events with (event-log.ts). */
function wallMs(): number {
  return wallNowMs();
}

/**
 * Pings unanswered before the connection counts as lost: far past any session timeout (the
 * server would have expired the session long before), only a bound on the send times kept.
 */
const MAX_PINGS_UNANSWERED = 1_000;

export class ZkClient {
  private socket: Socket | undefined;
  private writer: CoalescingWriter | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextXid = 1;
  private gone: ZkError | undefined;
  private pinger: NodeJS.Timeout | undefined;
  /** Send times of the pings not answered yet, oldest first. */
  private readonly pingsSent: number[] = [];
  private acknowledged = 0;
  /** While paused: until when, the timer that resumes, and what arrived meanwhile (in order). */
  private pausedUntil = 0;
  private resumer: NodeJS.Timeout | undefined;
  private held: (() => void)[] = [];
  /** The session the server gave us. */
  sessionId = 0n;
  /** Negotiated session timeout, ms. */
  sessionTimeoutMs = 0;

  private constructor(private readonly o: ZkClientOptions) {}

  /** Connects and opens a new session; rejects with DISCONNECTED or SESSIONEXPIRED. */
  static async connect(host: string, port: number, o: ZkClientOptions = {}): Promise<ZkClient> {
    const c = new ZkClient(o);
    await c.open(host, port);
    return c;
  }

  private open(host: string, port: number): Promise<void> {
    const socket = tcpConnect({ host, port, noDelay: true });
    this.socket = socket;
    const deadline = this.o.connectTimeoutMs ?? 5_000;
    return new Promise<void>((resolve, reject) => {
      const fail = (err: ZkError): void => {
        clearTimeout(timer);
        socket.destroy();
        this.gone ??= err;
        reject(this.gone);
      };
      const timer = setTimeout(
        () => fail(new ZkError('DISCONNECTED', `no session from ${host}:${port} within ${deadline} ms`)),
        deadline,
      );
      const decoder = new FrameDecoder(MAX_FRAME);
      let handshaking = true;
      let connectSentAt = 0;
      socket.on('error', (err) => {
        if (handshaking)
          fail(new ZkError('DISCONNECTED', `cannot connect to ${host}:${port}: ${err.message}`));
        else this.whenAwake(() => this.lose(new ZkError('DISCONNECTED', err.message, { cause: err })));
      });
      socket.on('close', () => {
        // A server that is not serving (electing, or not synced yet) closes new connections.
        if (handshaking)
          fail(new ZkError('DISCONNECTED', `${host}:${port} closed the connection before a session`));
        else this.whenAwake(() => this.lose(new ZkError('DISCONNECTED', 'connection closed')));
      });
      socket.on('data', (chunk: Buffer) => {
        const err = decoder.push(chunk, (frame) => {
          // A paused client handles nothing: frames wait as in a stalled process's socket buffer.
          if (!handshaking) return this.whenAwake(() => this.onFrame(frame));
          handshaking = false;
          clearTimeout(timer);
          let r;
          try {
            r = decodeConnectResponse(frame);
          } catch (e) {
            return fail(new ZkError('PROTOCOL', `bad connect response: ${(e as Error).message}`));
          }
          if (r.timeoutMs <= 0) return fail(new ZkError('SESSIONEXPIRED', 'the server refused the session'));
          this.sessionId = r.sessionId;
          this.sessionTimeoutMs = r.timeoutMs;
          this.writer = new CoalescingWriter(socket);
          // The server created the session when the connect request arrived, so it counts from then.
          this.acknowledge(connectSentAt);
          this.startPinger();
          resolve();
        });
        if (err) {
          if (handshaking) fail(new ZkError('PROTOCOL', describeFrameError(err)));
          else this.whenAwake(() => this.lose(new ZkError('PROTOCOL', describeFrameError(err))));
        }
      });
      socket.once('connect', () => {
        connectSentAt = wallMs();
        socket.write(
          encodeConnectRequest({
            lastZxidSeen: 0n,
            timeoutMs: this.o.sessionTimeoutMs ?? 10_000,
            sessionId: 0n,
            passwd: new Uint8Array(16),
          }),
        );
      });
    });
  }

  get connected(): boolean {
    return this.writer !== undefined && this.gone === undefined;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * The send time (wall-clock ms, wallNowMs()) of the newest message
   * (the connect request, a ping or a request) the server is known to have received: a reply to
   * it came back, without error. The server restarts the session's timeout whenever a message of
   * it arrives, which is no earlier than it was sent, so the session cannot expire before
   * acknowledgedSentAt + sessionTimeoutMs. 0 before a session.
   */
  get acknowledgedSentAt(): number {
    return this.acknowledged;
  }

  /** Whether pause() holds the client now. */
  get paused(): boolean {
    return this.pausedUntil > 0;
  }

  async create(
    path: string,
    data: Uint8Array,
    mode: CreateModeName = 'persistent',
  ): Promise<ZkReply<string>> {
    const r = await this.request({ op: 'create', path, data, mode });
    return { zxid: zxidOf(r.header.zxid), value: (r.body as { path: string }).path };
  }

  /**
   * Creates every node in one transaction (a multi): all of them or, when one fails, none. Rejects
   * then with the failed create's code (NODEEXISTS when one is there already). Resolves to the
   * transaction's zxid.
   */
  async createAll(creates: readonly CreateOp[]): Promise<Zxid> {
    const r = await this.request({ op: 'multi', creates });
    const { results } = r.body as { results: readonly MultiResult[] };
    const codes = results.flatMap((x) => ('err' in x && x.err !== 0 ? [x.err] : []));
    // The creates after the one that failed say RUNTIMEINCONSISTENCY: the first other code is why.
    const why = codes.find((c) => errorName(c) !== 'RUNTIMEINCONSISTENCY') ?? codes[0];
    if (why !== undefined) throw new ZkError(errorName(why), `multi: ${errorName(why)}`);
    return zxidOf(r.header.zxid);
  }

  async delete(path: string, version = -1): Promise<void> {
    await this.request({ op: 'delete', path, version });
  }

  /** The node's stat, or undefined when it does not exist. */
  async exists(path: string, watch = false): Promise<Stat | undefined> {
    try {
      const r = await this.request({ op: 'exists', path, watch });
      return (r.body as { stat: Stat }).stat;
    } catch (err) {
      if (err instanceof ZkError && err.code === 'NONODE') return undefined;
      throw err;
    }
  }

  async getData(path: string, watch = false): Promise<{ data: Buffer; stat: Stat }> {
    const r = await this.request({ op: 'getData', path, watch });
    const b = r.body as { data: Buffer; stat: Stat };
    return { data: b.data, stat: b.stat };
  }

  /** The zxid of the write is the reply header's. */
  async setData(path: string, data: Uint8Array, version = -1): Promise<ZkReply<Stat>> {
    const r = await this.request({ op: 'setData', path, data, version });
    return { zxid: zxidOf(r.header.zxid), value: (r.body as { stat: Stat }).stat };
  }

  async getChildren(path: string, watch = false): Promise<string[]> {
    const r = await this.request({ op: 'getChildren', path, watch });
    return (r.body as { children: string[] }).children;
  }

  /** Brings the server this session talks to up to date with the leader (for a following read). */
  async sync(path: string): Promise<void> {
    await this.request({ op: 'sync', path });
  }

  /** Ends the session (its ephemeral nodes go at once) and the connection. Ends a pause first. */
  async close(): Promise<void> {
    if (this.gone) return;
    if (this.pausedUntil > 0) this.resume();
    if (this.gone) return; // what arrived while paused ended the connection
    const socket = this.socket;
    if (this.writer && socket && !socket.destroyed) {
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const bye = this.request({ op: 'closeSession' }, 2_000).catch(() => undefined);
      await Promise.race([bye, closed]);
    }
    this.lose(new ZkError('CLOSED', 'client closed'));
  }

  /**
   * Ends the connection as a killed process's ends: the socket is destroyed at once without a
   * closeSession, so the server keeps the session (and its ephemeral nodes) until it expires, a
   * session timeout after the server last heard from it. Pending requests reject with CLOSED;
   * onDisconnect is called as for close().
   */
  abandon(): void {
    this.lose(new ZkError('CLOSED', 'client abandoned'));
  }

  /**
   * Stalls the client for `ms` from now (a pause that would end later is kept), as the OS stalls a
   * process: no pings, and nothing that arrives (replies, watches, the connection's end) nor any
   * request timeout is handled until the pause ends; then all of it is, in order, and pinging
   * resumes with a ping at once. Requests can still be sent meanwhile (a stalled caller sends none).
   */
  pause(ms: number): void {
    if (this.gone || !this.writer) return;
    const until = wallMs() + ms;
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    clearInterval(this.pinger);
    this.pinger = undefined;
    clearTimeout(this.resumer);
    this.resumer = setTimeout(() => this.resume(), ms);
  }

  // --- internals -----------------------------------------------------------------------------

  private startPinger(): void {
    // ClientCnxn pings when idle for a third of the timeout; pinging on a fixed period is
    // simpler and costs one small frame per period.
    this.pinger = setInterval(() => this.ping(), Math.max(50, Math.floor(this.sessionTimeoutMs / 3)));
    this.pinger.unref();
  }

  private resume(): void {
    clearTimeout(this.resumer);
    this.resumer = undefined;
    this.pausedUntil = 0;
    // One by one, and stop if what is handled pauses the client again (or ends it).
    while (this.pausedUntil === 0 && this.held.length > 0) (this.held.shift() as () => void)();
    if (this.gone || this.pausedUntil > 0) return;
    this.ping();
    this.startPinger();
  }

  /** Runs `fn` now, or when the pause ends. */
  private whenAwake(fn: () => void): void {
    if (this.pausedUntil > 0) this.held.push(fn);
    else fn();
  }

  private acknowledge(sentAt: number): void {
    if (sentAt <= this.acknowledged) return;
    this.acknowledged = sentAt;
    this.o.onAcknowledged?.(sentAt);
  }

  private ping(): void {
    if (!this.writer || this.gone) return;
    // Forgetting a send time would shift the matching of later replies onto newer pings.
    if (this.pingsSent.length >= MAX_PINGS_UNANSWERED)
      return this.lose(new ZkError('DISCONNECTED', `no reply to ${MAX_PINGS_UNANSWERED} pings`));
    this.pingsSent.push(wallMs());
    this.writer.write(encodeRequest(XID_PING, { op: 'ping' }));
  }

  private request(
    req: Request,
    timeoutMs = this.o.requestTimeoutMs ?? 30_000,
  ): Promise<{ header: { zxid: bigint }; body: ReplyBody }> {
    const writer = this.writer;
    if (this.gone || !writer)
      return Promise.reject(this.gone ?? new ZkError('DISCONNECTED', 'not connected'));
    const xid = this.nextXid;
    this.nextXid = xid >= 0x7fff_ffff ? 1 : xid + 1;
    return new Promise((resolve, reject) => {
      const p: Pending = { op: req.op, resolve, reject, timer: undefined, sentAt: wallMs() };
      if (timeoutMs > 0)
        p.timer = setTimeout(
          () =>
            this.whenAwake(() => {
              if (this.pending.get(xid) !== p) return;
              this.pending.delete(xid);
              reject(new ZkError('TIMEOUT', `no reply to ${req.op} within ${timeoutMs} ms`));
            }),
          timeoutMs,
        );
      this.pending.set(xid, p);
      writer.write(encodeRequest(xid, req));
    });
  }

  private onFrame(frame: Buffer): void {
    if (this.gone) return;
    try {
      const r = new JuteReader(frame);
      const h = decodeReplyHeader(r);
      if (h.xid === XID_PING) {
        // The server answers a session's pings in the order they came. Even if it did not, the
        // k-th reply proves k pings arrived, the newest of which was sent no earlier than the
        // k-th oldest send time: matching in order never overstates what was acknowledged.
        const sentAt = this.pingsSent.shift();
        if (sentAt !== undefined && h.err === 0) this.acknowledge(sentAt);
        return;
      }
      if (h.xid === XID_NOTIFICATION) {
        this.o.onWatch?.(decodeWatcherEvent(r));
        return;
      }
      const p = this.pending.get(h.xid);
      if (!p) return; // timed out earlier
      this.pending.delete(h.xid);
      clearTimeout(p.timer);
      if (h.err !== 0) {
        p.reject(new ZkError(errorName(h.err), `${p.op}: ${errorName(h.err)}`));
        return;
      }
      // Before the caller hears of the reply, so that it sees the session as fresh as the reply.
      this.acknowledge(p.sentAt);
      p.resolve({ header: h, body: decodeReplyBody(p.op, r) });
    } catch (e) {
      this.lose(new ZkError('PROTOCOL', `bad reply: ${(e as Error).message}`, { cause: e }));
    }
  }

  private lose(err: ZkError): void {
    if (this.gone) return;
    this.gone = err;
    clearInterval(this.pinger);
    clearTimeout(this.resumer);
    this.pausedUntil = 0;
    this.held = [];
    this.pingsSent.length = 0;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.writer?.stop();
    this.socket?.destroy();
    this.o.onDisconnect?.(err);
  }
}
