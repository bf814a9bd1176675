// src/node/net/: the node's wire: length-prefixed frames, one TCP connection per pair of nodes (handshake,
// codec), and the client API (protocol, server, and PoleClient, the client library).
//
// The links between a node and its peers: exactly one TCP connection per pair of nodes.
//
// ZooKeeper's rule removes the connect race: the node with the higher sid dials the lower one,
// the lower one only accepts. The dialer redials every `reconnectMs` while the link is down. A
// dial goes to the host:port configured for that peer, which may be a delay relay rather than
// the peer itself; so the link counts as up only after the peer's WELCOME (see
// peer-handshake.ts), never on TCP connect.
//
// Callbacks: onConnected once the handshake is done; onDisconnected exactly once for each link
// that was up, however it ended (close, error, reset, replaced by a newer connection from the
// same peer). After close() no callback fires: the owner is shutting down.
import { createServer, connect as tcpConnect } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { Member, NodeId } from '../core/types.js';
import type { PeerMessage } from '../core/zab-messages.js';
import type { Handshake } from './peer-handshake.js';
import { CoalescingWriter } from '../../util/wire/coalescing-writer.js';
import { FrameDecoder, describeFrameError } from '../../util/wire/frame-decoder.js';
import { PeerFrameReader, encodePeerFrame, encodeSnapshotFrames, snapshotOf } from './peer-codec.js';
import {
  HANDSHAKE_MAX_FRAME,
  HANDSHAKE_VERSION,
  decodeHandshake,
  encodeHandshake,
  helloProblem,
  membershipOf,
} from './peer-handshake.js';

export interface PeerAddress {
  readonly member: Member;
  readonly host: string;
  readonly port: number;
}

export interface PeerNetworkOptions {
  readonly self: Member;
  readonly listenHost: string;
  /** 0 picks an ephemeral port (read it from `port` after start). */
  readonly listenPort: number;
  /** Where to dial each peer (only peers with a lower sid are ever dialed). */
  readonly peers: ReadonlyArray<PeerAddress>;
  /** Pause between dial attempts while a link is down. Default 50. */
  readonly reconnectMs?: number;
  /** Largest frame accepted from a peer once it is known. Default 512 MiB (a DIFF carries a whole log). */
  readonly maxFrameBytes?: number;
  /** Time allowed for connect + handshake before the attempt is dropped. Default 5000. */
  readonly handshakeTimeoutMs?: number;
  /** A link whose unsent bytes exceed this is cut (the peer is not reading). Default 512 MiB. */
  readonly maxPendingBytes?: number;
  onMessage(from: NodeId, msg: PeerMessage): void;
  onConnected(peer: NodeId): void;
  onDisconnected(peer: NodeId): void;
  /** Part of a message from `peer` arrived (a snapshot chunk): it is alive. */
  onProgress?(peer: NodeId): void;
  /** Diagnostics: refused handshakes, undecodable frames, slow peers. */
  onLinkError?(info: { readonly peer?: NodeId; readonly reason: string }): void;
}

export interface PeerNetworkStats {
  bytesOut: number;
  bytesIn: number;
  framesOut: number;
  framesIn: number;
  /** TCP connections this node accepted / dialed (successful connects), handshake or not. */
  connectionsAccepted: number;
  connectionsDialed: number;
}

/** One TCP connection, from accept/dial to close. */
interface Conn {
  readonly socket: Socket;
  readonly writer: CoalescingWriter;
  readonly decoder: FrameDecoder;
  readonly reader: PeerFrameReader;
  /**
   * Messages waiting for a snapshot being streamed ahead of them (ZAB needs them in order);
   * undefined when nothing streams.
   */
  backlog: PeerMessage[] | undefined;
  /** The peer: known from the start when dialing, after HELLO when accepting. */
  peer: Member | undefined;
  state: 'handshake' | 'up' | 'done';
  readonly dialed: boolean;
  handshakeTimer: NodeJS.Timeout | undefined;
}

// A snapshot travels as chunk frames of about 1 MiB (peer-codec.ts), streamed: the next chunk is
// encoded once the socket has taken the previous ones, so at most STREAM_HIGH_WATER of it waits in
// memory, and the event loop runs between chunks. A DIFF still goes as one frame, and may hold a
// whole log since the last snapshot (100 MB and more at 1 kB a txn), so a frame may hold 512 MiB,
// and a peer may have twice that waiting before it counts as not reading.
const DEFAULTS = { reconnectMs: 50, maxFrameBytes: 512 * 1024 * 1024, handshakeTimeoutMs: 5000 };
const DEFAULT_MAX_PENDING = 1024 * 1024 * 1024;
const STREAM_HIGH_WATER = 4 * 1024 * 1024;
/** Messages that may wait behind a snapshot being streamed before the peer counts as not reading. */
const MAX_BACKLOG = 1_000_000;

export class PeerNetwork {
  private readonly o: PeerNetworkOptions;
  private readonly peersById = new Map<NodeId, PeerAddress>();
  private readonly membership: Array<[NodeId, number]>;
  private readonly reconnectMs: number;
  private readonly maxFrameBytes: number;
  private readonly handshakeTimeoutMs: number;
  private readonly maxPendingBytes: number;
  /** Links that are up, by peer. */
  private readonly links = new Map<NodeId, Conn>();
  /**
   * The message last encoded and its frame. A leader sends one PROPOSAL object to each follower in
   * a row (and an election one vote to each peer), so the batch's bytes are copied into a frame
   * once, not once per follower; the sockets only read the frame. A message is never changed once
   * handed to send(), so the same object means the same bytes.
   */
  private lastEncoded: { readonly msg: PeerMessage; readonly frame: Buffer } | undefined;
  private readonly conns = new Set<Conn>();
  private readonly redialTimers = new Map<NodeId, NodeJS.Timeout>();
  private server: Server | undefined;
  private listenPort = 0;
  private closed = false;
  private readonly counters: PeerNetworkStats = {
    bytesOut: 0,
    bytesIn: 0,
    framesOut: 0,
    framesIn: 0,
    connectionsAccepted: 0,
    connectionsDialed: 0,
  };

  constructor(o: PeerNetworkOptions) {
    this.o = o;
    for (const p of o.peers) {
      if (p.member.id === o.self.id) throw new Error(`peer list contains self (${o.self.id})`);
      if (p.member.sid === o.self.sid)
        throw new Error(`${p.member.id} has the same sid as self (${o.self.sid})`);
      if (this.peersById.has(p.member.id)) throw new Error(`peer ${p.member.id} listed twice`);
      this.peersById.set(p.member.id, p);
    }
    this.membership = membershipOf([o.self, ...o.peers.map((p) => p.member)]);
    this.reconnectMs = o.reconnectMs ?? DEFAULTS.reconnectMs;
    this.maxFrameBytes = o.maxFrameBytes ?? DEFAULTS.maxFrameBytes;
    this.handshakeTimeoutMs = o.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs;
    this.maxPendingBytes = o.maxPendingBytes ?? DEFAULT_MAX_PENDING;
  }

  /** Listens, then starts dialing every peer with a lower sid. */
  async start(): Promise<void> {
    if (this.server) throw new Error('PeerNetwork already started');
    const server = createServer({ noDelay: true }, (socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.listenPort, this.o.listenHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    this.listenPort = typeof addr === 'object' && addr ? addr.port : this.o.listenPort;
    for (const p of this.peersById.values()) if (p.member.sid < this.o.self.sid) this.dial(p);
  }

  /** The port actually listened on (after start). */
  get port(): number {
    return this.listenPort;
  }

  /** Queues `msg` for `to`; false (and nothing sent) when there is no link to it. */
  send(to: NodeId, msg: PeerMessage): boolean {
    const conn = this.links.get(to);
    if (!conn) return false;
    // Heartbeats measure the link and depend on no order: they need not wait behind a snapshot.
    if (conn.backlog && msg.type !== 'HEARTBEAT') {
      conn.backlog.push(msg);
      if (conn.backlog.length > MAX_BACKLOG)
        this.fail(conn, `${to} is not reading: ${MAX_BACKLOG} messages waiting`);
      return true;
    }
    if (snapshotOf(msg)) {
      conn.backlog = [msg];
      void this.stream(conn);
      return true;
    }
    conn.writer.write(this.frameOf(msg));
    if (conn.writer.pendingBytes > this.maxPendingBytes) {
      this.fail(conn, `${to} is not reading: over ${this.maxPendingBytes} bytes pending`);
    }
    return true;
  }

  private frameOf(msg: PeerMessage): Buffer {
    const last = this.lastEncoded;
    if (last?.msg === msg) return last.frame;
    const frame = encodePeerFrame(msg);
    this.lastEncoded = { msg, frame };
    return frame;
  }

  /**
   * Sends the backlog in order, each snapshot in chunks as the socket takes them, until nothing is
   * left or the connection ends.
   */
  private async stream(conn: Conn): Promise<void> {
    const live = (): boolean => conn.state === 'up' && !this.closed;
    while (live() && conn.backlog && conn.backlog.length > 0) {
      const msg = conn.backlog.shift() as PeerMessage;
      const snapshot = snapshotOf(msg);
      if (snapshot) {
        for (const frame of encodeSnapshotFrames(snapshot)) {
          if (!live()) return;
          conn.writer.write(frame);
          await this.socketTakes(conn);
        }
        if (!live()) return;
      }
      conn.writer.write(encodePeerFrame(msg));
    }
    conn.backlog = undefined;
  }

  /** Resolves after a turn of the event loop, and once no more than STREAM_HIGH_WATER waits to be sent. */
  private async socketTakes(conn: Conn): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (conn.state === 'up' && !this.closed && conn.writer.pendingBytes > STREAM_HIGH_WATER) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          conn.socket.off('drain', done);
          conn.socket.off('close', done);
          resolve();
        };
        conn.socket.on('drain', done);
        conn.socket.on('close', done);
      });
    }
  }

  isConnected(peer: NodeId): boolean {
    return this.links.has(peer);
  }

  /** Peers whose link is up. */
  connectedPeers(): NodeId[] {
    return [...this.links.keys()];
  }

  stats(): PeerNetworkStats {
    let bytesOut = this.counters.bytesOut;
    let framesOut = this.counters.framesOut;
    for (const c of this.conns) {
      bytesOut += c.writer.bytesOut;
      framesOut += c.writer.framesOut;
    }
    return { ...this.counters, bytesOut, framesOut };
  }

  /** Stops listening and dialing, flushes and closes every connection. No callbacks afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.redialTimers.values()) clearTimeout(t);
    this.redialTimers.clear();
    const server = this.server;
    const serverClosed = server
      ? new Promise<void>((resolve) => server.close(() => resolve()))
      : Promise.resolve();
    const socketsClosed = [...this.conns].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.socket.destroyed) return resolve();
          c.socket.once('close', () => resolve());
          c.writer.end();
          // A peer that does not answer our FIN must not hold close() up.
          setTimeout(() => c.socket.destroy(), 500).unref();
        }),
    );
    this.links.clear();
    await Promise.all([serverClosed, ...socketsClosed]);
  }

  // --- connection life cycle ---------------------------------------------------------------

  private track(socket: Socket, dialed: boolean, peer: Member | undefined): Conn {
    socket.setNoDelay(true);
    const conn: Conn = {
      socket,
      writer: new CoalescingWriter(socket),
      decoder: new FrameDecoder(HANDSHAKE_MAX_FRAME),
      reader: new PeerFrameReader(),
      backlog: undefined,
      peer,
      state: 'handshake',
      dialed,
      handshakeTimer: undefined,
    };
    this.conns.add(conn);
    conn.handshakeTimer = setTimeout(() => {
      if (conn.state === 'handshake') this.fail(conn, 'handshake timed out');
    }, this.handshakeTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.onData(conn, chunk));
    // 'error' is always followed by 'close'; the handler only keeps it from being thrown.
    socket.on('error', () => undefined);
    socket.on('close', () => this.onClose(conn));
    return conn;
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.counters.connectionsAccepted++;
    this.track(socket, false, undefined);
  }

  private dial(p: PeerAddress): void {
    this.redialTimers.delete(p.member.id);
    if (this.closed) return;
    const socket = tcpConnect({ host: p.host, port: p.port });
    const conn = this.track(socket, true, p.member);
    socket.once('connect', () => {
      this.counters.connectionsDialed++;
      conn.writer.write(
        encodeHandshake({
          t: 'HELLO',
          v: HANDSHAKE_VERSION,
          id: this.o.self.id,
          sid: this.o.self.sid,
          to: p.member.id,
          members: this.membership,
        }),
      );
    });
  }

  private onData(conn: Conn, chunk: Buffer): void {
    this.counters.bytesIn += chunk.length;
    const err = conn.decoder.push(chunk, (frame) => this.onFrame(conn, frame));
    if (err && conn.state !== 'done') this.fail(conn, describeFrameError(err));
  }

  private onFrame(conn: Conn, frame: Buffer): void {
    if (conn.state === 'done' || this.closed) return;
    this.counters.framesIn++;
    if (conn.state === 'handshake') {
      this.onHandshake(conn, frame);
      return;
    }
    let msg: PeerMessage | undefined;
    try {
      msg = conn.reader.read(frame);
    } catch (e) {
      this.fail(conn, `undecodable message: ${(e as Error).message}`);
      return;
    }
    if (!msg) {
      // A snapshot chunk, kept for the message after it.
      this.o.onProgress?.((conn.peer as Member).id);
      return;
    }
    // Outside the try: an exception of the owner's handler is the owner's bug, not a bad frame.
    this.o.onMessage((conn.peer as Member).id, msg);
  }

  private onHandshake(conn: Conn, frame: Buffer): void {
    let h: Handshake;
    try {
      h = decodeHandshake(frame);
    } catch (e) {
      this.fail(conn, (e as Error).message);
      return;
    }
    if (conn.dialed) {
      const want = conn.peer as Member;
      if (h.t === 'WELCOME' && h.id === want.id && h.sid === want.sid) this.up(conn, want);
      else if (h.t === 'REJECT') this.fail(conn, `rejected by ${want.id}: ${h.reason}`);
      else this.fail(conn, `expected WELCOME from ${want.id}, got ${JSON.stringify(h)}`);
      return;
    }
    if (h.t !== 'HELLO') {
      this.fail(conn, `expected HELLO, got ${h.t}`);
      return;
    }
    const problem = helloProblem(h, this.o.self, this.membership);
    const member = this.peersById.get(h.id)?.member;
    if (problem || !member) {
      this.report(h.id, `refused ${h.id}: ${problem ?? 'unknown'}`);
      conn.state = 'done';
      clearTimeout(conn.handshakeTimer);
      conn.writer.write(encodeHandshake({ t: 'REJECT', v: HANDSHAKE_VERSION, reason: problem ?? 'unknown' }));
      conn.writer.end();
      // The dialer closes on REJECT; one that does not is cut off shortly after.
      setTimeout(() => conn.socket.destroy(), 1000).unref();
      return;
    }
    conn.peer = member;
    // The dialer only dials again when it thinks the old link is gone: trust it over our view.
    const old = this.links.get(member.id);
    if (old) this.fail(old, `${member.id} reconnected`);
    conn.writer.write(
      encodeHandshake({ t: 'WELCOME', v: HANDSHAKE_VERSION, id: this.o.self.id, sid: this.o.self.sid }),
    );
    this.up(conn, member);
  }

  private up(conn: Conn, peer: Member): void {
    clearTimeout(conn.handshakeTimer);
    conn.state = 'up';
    conn.decoder.maxFrameBytes = this.maxFrameBytes;
    this.links.set(peer.id, conn);
    this.o.onConnected(peer.id);
  }

  /** Ends a connection now because of `reason`; the link (if up) is reported down at once. */
  private fail(conn: Conn, reason: string): void {
    if (conn.state === 'done') return;
    this.report(conn.peer?.id, reason);
    this.down(conn);
    conn.writer.stop();
    conn.socket.destroy();
  }

  private report(peer: NodeId | undefined, reason: string): void {
    if (!this.closed) this.o.onLinkError?.(peer === undefined ? { reason } : { peer, reason });
  }

  /** Marks the connection finished; reports its link down if it was up. Idempotent. */
  private down(conn: Conn): void {
    const wasUp = conn.state === 'up';
    conn.state = 'done';
    clearTimeout(conn.handshakeTimer);
    if (!wasUp || !conn.peer) return;
    if (this.links.get(conn.peer.id) === conn) this.links.delete(conn.peer.id);
    if (!this.closed) this.o.onDisconnected(conn.peer.id);
  }

  private onClose(conn: Conn): void {
    this.down(conn);
    this.conns.delete(conn);
    // Fold the dead writer's counters into the totals.
    this.counters.bytesOut += conn.writer.bytesOut;
    this.counters.framesOut += conn.writer.framesOut;
    if (conn.dialed && conn.peer && !this.closed) {
      const target = this.peersById.get(conn.peer.id);
      if (target && !this.redialTimers.has(target.member.id)) {
        this.redialTimers.set(
          target.member.id,
          setTimeout(() => this.dial(target), this.reconnectMs),
        );
      }
    }
  }
}
