// ZkClient: one ZooKeeper session over one TCP connection, requests pipelined. ZooKeeper answers
// a session's requests in the order they were sent, but replies are still matched by xid, so a
// reply that does not fit is a protocol error instead of a silent mix-up.
//
// No reconnection: a session whose connection ends is over for this client (the load agents open
// a new one on the next write, as they do with the POLE node). Failures reject with ZkError:
//   code = ZooKeeper's own error name (NONODE, NODEEXISTS, BADVERSION, SESSIONEXPIRED, …) for an
//   error reply, or the client's: DISCONNECTED (connection lost or never made), TIMEOUT (no reply
//   within requestTimeoutMs), CLOSED (close() called), PROTOCOL (undecodable bytes).
import { connect as tcpConnect, type Socket } from 'node:net';
import { CoalescingWriter } from '../../../node/net/coalescing-writer.js';
import { FrameDecoder, describeFrameError } from '../../../node/net/frame-decoder.js';
import type { Zxid } from '../../../node/core/zxid.js';
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
  type ReplyBody,
  type Request,
  type Stat,
  type WatcherEvent,
} from './zk-protocol.js';

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
  /** Called once when an established session's connection ends (close() included). */
  onDisconnect?(error: ZkError): void;
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
}

/** Largest reply accepted: ZooKeeper's default jute.maxbuffer (1 MiB) plus headers. */
const MAX_FRAME = 1024 * 1024 + 4096;

export class ZkClient {
  private socket: Socket | undefined;
  private writer: CoalescingWriter | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextXid = 1;
  private gone: ZkError | undefined;
  private pinger: NodeJS.Timeout | undefined;
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
      socket.on('error', (err) => {
        if (handshaking)
          fail(new ZkError('DISCONNECTED', `cannot connect to ${host}:${port}: ${err.message}`));
        else this.lose(new ZkError('DISCONNECTED', err.message, { cause: err }));
      });
      socket.on('close', () => {
        // A server that is not serving (electing, or not synced yet) closes new connections.
        if (handshaking)
          fail(new ZkError('DISCONNECTED', `${host}:${port} closed the connection before a session`));
        else this.lose(new ZkError('DISCONNECTED', 'connection closed'));
      });
      socket.on('data', (chunk: Buffer) => {
        const err = decoder.push(chunk, (frame) => {
          if (!handshaking) return this.onFrame(frame);
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
          // ClientCnxn pings when idle for a third of the timeout; pinging on a fixed period is
          // simpler and costs one small frame per period.
          this.pinger = setInterval(() => this.ping(), Math.max(50, Math.floor(r.timeoutMs / 3)));
          this.pinger.unref();
          resolve();
        });
        if (err) {
          if (handshaking) fail(new ZkError('PROTOCOL', describeFrameError(err)));
          else this.lose(new ZkError('PROTOCOL', describeFrameError(err)));
        }
      });
      socket.once('connect', () =>
        socket.write(
          encodeConnectRequest({
            lastZxidSeen: 0n,
            timeoutMs: this.o.sessionTimeoutMs ?? 10_000,
            sessionId: 0n,
            passwd: new Uint8Array(16),
          }),
        ),
      );
    });
  }

  get connected(): boolean {
    return this.writer !== undefined && this.gone === undefined;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  async create(
    path: string,
    data: Uint8Array,
    mode: CreateModeName = 'persistent',
  ): Promise<ZkReply<string>> {
    const r = await this.request({ op: 'create', path, data, mode });
    return { zxid: zxidOf(r.header.zxid), value: (r.body as { path: string }).path };
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

  /** Ends the session (its ephemeral nodes go at once) and the connection. */
  async close(): Promise<void> {
    if (this.gone) return;
    const socket = this.socket;
    if (this.writer && socket && !socket.destroyed) {
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const bye = this.request({ op: 'closeSession' }, 2_000).catch(() => undefined);
      await Promise.race([bye, closed]);
    }
    this.lose(new ZkError('CLOSED', 'client closed'));
  }

  // --- internals -----------------------------------------------------------------------------

  private ping(): void {
    if (!this.writer || this.gone) return;
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
      const p: Pending = { op: req.op, resolve, reject, timer: undefined };
      if (timeoutMs > 0)
        p.timer = setTimeout(() => {
          if (this.pending.get(xid) !== p) return;
          this.pending.delete(xid);
          reject(new ZkError('TIMEOUT', `no reply to ${req.op} within ${timeoutMs} ms`));
        }, timeoutMs);
      this.pending.set(xid, p);
      writer.write(encodeRequest(xid, req));
    });
  }

  private onFrame(frame: Buffer): void {
    if (this.gone) return;
    try {
      const r = new JuteReader(frame);
      const h = decodeReplyHeader(r);
      if (h.xid === XID_PING) return;
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
      p.resolve({ header: h, body: decodeReplyBody(p.op, r) });
    } catch (e) {
      this.lose(new ZkError('PROTOCOL', `bad reply: ${(e as Error).message}`, { cause: e }));
    }
  }

  private lose(err: ZkError): void {
    if (this.gone) return;
    this.gone = err;
    clearInterval(this.pinger);
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
