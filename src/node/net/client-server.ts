// The client API's server side: accepts connections, decodes request frames (see
// client-protocol.ts) and hands them to a handler; write replies may come any time later.
//
// Bad input costs the offending connection only: a frame over maxFrameBytes, an unknown op, a
// malformed body, or a frame cut short by the client ending its side → a BAD_FRAME reply (with
// the request's tag when it could be read, else 0), then the connection is closed. A WRITE
// whose data exceeds maxWriteBytes → TOO_LARGE for that request only; the connection stays.
//
// Sockets are half-open capable so that a client may send its requests, end its side and still
// receive every reply (and the BAD_FRAME for a truncated last frame).
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { WriteErrorCode } from '../core/core-types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import { CoalescingWriter } from '../../util/wire/coalescing-writer.js';
import { FrameDecoder, describeFrameError } from '../../util/wire/frame-decoder.js';
import {
  ClientOp,
  decodeRequest,
  encodeErrorReply,
  encodeReadOk,
  encodeStatusOk,
  encodeWriteOk,
} from './client-protocol.js';
import type { ReadResult } from './client-protocol.js';

export interface ClientWrite {
  readonly clientId: string;
  readonly requestId: number;
  readonly path: string;
  /** A view into the received frame (not copied). */
  readonly data: Uint8Array;
}

export type WriteOutcome =
  { readonly ok: true; readonly zxid: Zxid } | { readonly ok: false; readonly code: WriteErrorCode };

export interface ClientApiHandler {
  /** `reply` may be called later (after the write commits); calls after the first are ignored. */
  write(req: ClientWrite, reply: (outcome: WriteOutcome) => void): void;
  /** The value at `path`, undefined where there is none, NOT_SERVING where this member answers no reads now. */
  read(path: string): ReadResult | undefined | 'NOT_SERVING';
  /** Must be JSON-serialisable. */
  status(): unknown;
}

export interface ClientApiServerOptions {
  readonly host: string;
  /** 0 picks an ephemeral port (read it from `port` after start). */
  readonly port: number;
  readonly handler: ClientApiHandler;
  /** Largest data part of a WRITE. Default 1 MiB. */
  readonly maxWriteBytes?: number;
  /** Largest request frame; a bigger one closes the connection. Default maxWriteBytes + 1 MiB. */
  readonly maxFrameBytes?: number;
  /** A client's connection closed (a load's end, a client gone). */
  onClientClosed?(): void;
  /** Diagnostics for rejected input. */
  onBadInput?(info: {
    readonly remote: string;
    readonly code: 'BAD_FRAME' | 'TOO_LARGE';
    readonly reason: string;
  }): void;
}

export interface ClientApiServerStats {
  connections: number;
  requests: number;
  badFrames: number;
  tooLarge: number;
}

/** Unsent reply bytes above which we stop reading a client's requests until it reads. */
const PAUSE_ABOVE_BYTES = 8 * 1024 * 1024;
/** How long a connection closed for bad input may linger for the client to read the reply. */
const LINGER_MS = 1000;

class ClientConnection {
  readonly writer: CoalescingWriter;
  readonly decoder: FrameDecoder;
  readonly remote: string;
  inFlight = 0;
  /** A bad frame was seen: input is discarded, our side is ended. */
  failed = false;
  /** The client ended its side; we end ours once every reply is out. */
  clientEnded = false;
  closed = false;
  paused = false;

  constructor(
    readonly socket: Socket,
    maxFrameBytes: number,
  ) {
    this.writer = new CoalescingWriter(socket);
    this.decoder = new FrameDecoder(maxFrameBytes);
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
  }
}

export class ClientApiServer {
  private readonly handler: ClientApiHandler;
  private readonly maxWriteBytes: number;
  private readonly maxFrameBytes: number;
  private readonly conns = new Set<ClientConnection>();
  private server: Server | undefined;
  private listenPort = 0;
  private readonly counters: ClientApiServerStats = {
    connections: 0,
    requests: 0,
    badFrames: 0,
    tooLarge: 0,
  };

  constructor(private readonly o: ClientApiServerOptions) {
    this.handler = o.handler;
    this.maxWriteBytes = o.maxWriteBytes ?? 1024 * 1024;
    this.maxFrameBytes = o.maxFrameBytes ?? this.maxWriteBytes + 1024 * 1024;
  }

  async start(): Promise<void> {
    if (this.server) throw new Error('ClientApiServer already started');
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (s) => this.accept(s));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    this.listenPort = typeof addr === 'object' && addr ? addr.port : this.o.port;
  }

  get port(): number {
    return this.listenPort;
  }

  stats(): ClientApiServerStats {
    return { ...this.counters, connections: this.conns.size };
  }

  /** Stops listening and closes every connection (pending replies are dropped). */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const c of this.conns) {
      c.writer.end();
      setTimeout(() => c.socket.destroy(), 200).unref();
    }
    await closed;
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    const c = new ClientConnection(socket, this.maxFrameBytes);
    this.conns.add(c);
    socket.on('data', (chunk: Buffer) => {
      if (c.failed) return; // discard: the reply is on its way and the connection is closing
      const err = c.decoder.push(chunk, (frame) => this.onFrame(c, frame));
      if (err) this.badFrame(c, 0, describeFrameError(err));
    });
    socket.on('end', () => {
      if (c.failed) return;
      const err = c.decoder.finish();
      if (err) {
        this.badFrame(c, 0, describeFrameError(err));
        return;
      }
      c.clientEnded = true;
      if (c.inFlight === 0) c.writer.end();
    });
    socket.on('drain', () => {
      if (c.paused) {
        c.paused = false;
        socket.resume();
      }
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => {
      c.closed = true;
      c.writer.stop();
      this.conns.delete(c);
      this.o.onClientClosed?.();
    });
  }

  private onFrame(c: ClientConnection, frame: Buffer): void {
    if (c.failed || c.closed) return;
    this.counters.requests++;
    const d = decodeRequest(frame, this.maxWriteBytes);
    if (!d.ok) {
      if (d.code === 'TOO_LARGE') {
        this.counters.tooLarge++;
        this.o.onBadInput?.({ remote: c.remote, code: d.code, reason: d.reason });
        this.send(c, encodeErrorReply(d.tag, 'TOO_LARGE'));
      } else {
        this.badFrame(c, d.tag, d.reason);
      }
      return;
    }
    const req = d.req;
    switch (req.op) {
      case ClientOp.WRITE: {
        const tag = req.tag;
        let answered = false;
        c.inFlight++;
        this.handler.write(
          { clientId: req.clientId, requestId: req.requestId, path: req.path, data: req.data },
          (outcome) => {
            if (answered) return;
            answered = true;
            c.inFlight--;
            this.send(c, outcome.ok ? encodeWriteOk(tag, outcome.zxid) : encodeErrorReply(tag, outcome.code));
            if (c.clientEnded && c.inFlight === 0 && !c.failed) c.writer.end();
          },
        );
        break;
      }
      case ClientOp.READ: {
        const result = this.handler.read(req.path);
        this.send(
          c,
          result === 'NOT_SERVING'
            ? encodeErrorReply(req.tag, 'NOT_SERVING')
            : result
              ? encodeReadOk(req.tag, result)
              : encodeErrorReply(req.tag, 'NOT_FOUND'),
        );
        break;
      }
      case ClientOp.STATUS:
        this.send(c, encodeStatusOk(req.tag, this.handler.status()));
        break;
    }
  }

  /** Queues a reply; dropped silently if the connection is gone. */
  private send(c: ClientConnection, frame: Buffer): void {
    if (c.closed) return;
    c.writer.write(frame);
    if (!c.paused && c.writer.pendingBytes > PAUSE_ABOVE_BYTES) {
      c.paused = true;
      c.socket.pause();
    }
  }

  private badFrame(c: ClientConnection, tag: number, reason: string): void {
    if (c.failed) return;
    this.counters.badFrames++;
    this.o.onBadInput?.({ remote: c.remote, code: 'BAD_FRAME', reason });
    this.send(c, encodeErrorReply(tag, 'BAD_FRAME'));
    c.failed = true;
    c.writer.end();
    // Keep reading (and discarding) so the client gets our reply rather than a reset; a client
    // that neither reads nor closes is cut off after a moment.
    if (c.paused) c.socket.resume();
    setTimeout(() => c.socket.destroy(), LINGER_MS).unref();
  }
}
