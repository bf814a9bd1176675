// PoleClient: the client library of the client API (client-protocol.ts), used by the tests,
// the bench and the load agents. One TCP connection; requests are pipelined (any number in
// flight, each with its own tag) and replies matched by tag in whatever order they come.
//
// Every failure rejects with a PoleError whose `code` is either the server's status name
// (NOT_LEADER_YET, NO_QUORUM, TOO_LARGE, BAD_FRAME, LEADER_LOST) or one of the client's own:
//   DISCONNECTED  the connection was lost (or never made): every pending request gets it
//   CLOSED        close() was called while the request was pending
//   TIMEOUT       no reply within requestTimeoutMs (a later reply is ignored)
//   PROTOCOL      the server sent something undecodable (the connection is dropped)
import { connect as tcpConnect } from 'node:net';
import type { Socket } from 'node:net';
import type { Zxid } from '../../vocabulary/zxid.js';
import { CoalescingWriter } from '../../util/wire/coalescing-writer.js';
import { FrameDecoder, describeFrameError } from '../../util/wire/frame-decoder.js';
import { ClientOp, decodeReply, encodeRequest, replyTag } from './client-protocol.js';
import type {
  ClientErrorName,
  ClientOpCode,
  ClientReply,
  ClientRequest,
  ReadResult,
} from './client-protocol.js';

export type PoleErrorCode = ClientErrorName | 'DISCONNECTED' | 'CLOSED' | 'TIMEOUT' | 'PROTOCOL';

export class PoleError extends Error {
  override readonly name = 'PoleError';
  constructor(
    readonly code: PoleErrorCode,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? code, options);
  }
}

export interface PoleClientOptions {
  /** Per-request deadline; 0 disables it. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Deadline of connect(). Default 5000. */
  readonly connectTimeoutMs?: number;
  /** Largest reply frame accepted. Default 64 MiB. */
  readonly maxFrameBytes?: number;
  /** Called once when an established connection ends (for any reason, close() included). */
  onDisconnect?(error: PoleError): void;
}

export interface WriteOptions {
  readonly clientId: string;
  readonly requestId: number;
}

interface Pending {
  readonly op: ClientOpCode;
  readonly resolve: (reply: ClientReply) => void;
  readonly reject: (err: PoleError) => void;
  timer: NodeJS.Timeout | undefined;
}

const TAG_MAX = 0xffff_ffff;

export class PoleClient {
  private readonly requestTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private socket: Socket | undefined;
  private writer: CoalescingWriter | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextTag = 1;
  /** Set once the connection is gone: the error every later request gets. */
  private gone: PoleError | undefined;

  constructor(private readonly o: PoleClientOptions = {}) {
    this.requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
    this.connectTimeoutMs = o.connectTimeoutMs ?? 5_000;
    this.maxFrameBytes = o.maxFrameBytes ?? 64 * 1024 * 1024;
  }

  /** Creates a client and connects it. */
  static async connect(host: string, port: number, o: PoleClientOptions = {}): Promise<PoleClient> {
    const c = new PoleClient(o);
    await c.connect(host, port);
    return c;
  }

  /** Connects; rejects with DISCONNECTED when the server cannot be reached. Once per client. */
  connect(host: string, port: number): Promise<void> {
    if (this.socket) return Promise.reject(new Error('PoleClient.connect called twice'));
    const socket = tcpConnect({ host, port, noDelay: true });
    this.socket = socket;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => socket.destroy(new Error(`connect to ${host}:${port} timed out`)),
        this.connectTimeoutMs,
      );
      const onError = (err: Error): void => {
        clearTimeout(timer);
        if (this.gone) return reject(this.gone);
        this.gone = new PoleError('DISCONNECTED', `cannot connect to ${host}:${port}: ${err.message}`, {
          cause: err,
        });
        reject(this.gone);
      };
      const onClose = (): void => onError(new Error('closed before connecting'));
      socket.once('error', onError);
      socket.once('close', onClose);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        socket.off('close', onClose);
        this.attach(socket);
        resolve();
      });
    });
  }

  get connected(): boolean {
    return this.writer !== undefined && this.gone === undefined;
  }

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  async write(path: string, data: Uint8Array, ids: WriteOptions): Promise<{ zxid: Zxid }> {
    if (!Number.isSafeInteger(ids.requestId))
      throw new TypeError(`requestId must be a safe integer, got ${ids.requestId}`);
    const reply = await this.request({
      op: ClientOp.WRITE,
      tag: 0,
      clientId: ids.clientId,
      requestId: ids.requestId,
      path,
      data,
    });
    if (reply.ok && reply.op === ClientOp.WRITE) return { zxid: reply.zxid };
    throw this.replyError(reply);
  }

  /**
   * The committed value at `path` on the server this client talks to, or undefined if none. Throws
   * NOT_SERVING where that member answers no reads now (not synced with a leader).
   */
  async read(path: string): Promise<ReadResult | undefined> {
    const reply = await this.request({ op: ClientOp.READ, tag: 0, path });
    if (reply.ok && reply.op === ClientOp.READ) return reply.result;
    if (!reply.ok && reply.code === 'NOT_FOUND') return undefined;
    throw this.replyError(reply);
  }

  async status(): Promise<unknown> {
    const reply = await this.request({ op: ClientOp.STATUS, tag: 0 });
    if (reply.ok && reply.op === ClientOp.STATUS) return reply.status;
    throw this.replyError(reply);
  }

  /** Closes the connection; pending requests reject with CLOSED. */
  async close(): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.destroyed) {
      this.gone ??= new PoleError('CLOSED', 'client closed');
      return;
    }
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    this.lose(new PoleError('CLOSED', 'client closed'));
    await closed;
  }

  // --- internals -----------------------------------------------------------------------------

  private attach(socket: Socket): void {
    const writer = new CoalescingWriter(socket);
    this.writer = writer;
    const decoder = new FrameDecoder(this.maxFrameBytes);
    socket.on('data', (chunk: Buffer) => {
      const err = decoder.push(chunk, (frame) => this.onReply(frame));
      if (err) this.lose(new PoleError('PROTOCOL', describeFrameError(err)));
    });
    socket.on('error', (err) => this.lose(new PoleError('DISCONNECTED', err.message, { cause: err })));
    socket.on('close', () => this.lose(new PoleError('DISCONNECTED', 'connection closed')));
  }

  private request(req: ClientRequest): Promise<ClientReply> {
    const writer = this.writer;
    if (this.gone || !writer) {
      return Promise.reject(this.gone ?? new PoleError('DISCONNECTED', 'not connected'));
    }
    const tag = this.allocateTag();
    return new Promise<ClientReply>((resolve, reject) => {
      const p: Pending = { op: req.op, resolve, reject, timer: undefined };
      if (this.requestTimeoutMs > 0) {
        p.timer = setTimeout(() => {
          if (this.pending.get(tag) !== p) return;
          this.pending.delete(tag);
          reject(new PoleError('TIMEOUT', `no reply within ${this.requestTimeoutMs} ms`));
        }, this.requestTimeoutMs);
      }
      this.pending.set(tag, p);
      writer.write(encodeRequest({ ...req, tag }));
    });
  }

  /** The next tag not in flight; 0 is never used (the server's "unknown request"). */
  private allocateTag(): number {
    for (;;) {
      const tag = this.nextTag;
      this.nextTag = tag >= TAG_MAX ? 1 : tag + 1;
      if (!this.pending.has(tag)) return tag;
    }
  }

  private onReply(frame: Buffer): void {
    if (this.gone) return;
    let reply: ClientReply;
    try {
      const tag = replyTag(frame);
      const p = this.pending.get(tag);
      if (tag === 0) {
        // The server could not parse one of our requests and is closing the connection.
        const r = decodeReply(frame, ClientOp.STATUS);
        this.lose(new PoleError(r.ok ? 'PROTOCOL' : r.code, 'the server rejected a request frame'));
        return;
      }
      if (!p) return; // timed out earlier
      reply = decodeReply(frame, p.op);
      this.pending.delete(tag);
      clearTimeout(p.timer);
      p.resolve(reply);
    } catch (e) {
      this.lose(new PoleError('PROTOCOL', `bad reply: ${(e as Error).message}`, { cause: e }));
    }
  }

  private replyError(reply: ClientReply): PoleError {
    return reply.ok ? new PoleError('PROTOCOL', 'reply of the wrong kind') : new PoleError(reply.code);
  }

  /** Fails every pending request with `err` and drops the connection. Only the first call counts. */
  private lose(err: PoleError): void {
    if (this.gone) return;
    this.gone = err;
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
