// src/node/trace/: the node's part of the latency anatomy: the monotonic instants of a sampled write's
// steps on this node, emitted as `trace` events.
//
// Latency anatomy, the node's part: for a sample of writes, the moment each step happened on this
// node, on CLOCK_MONOTONIC (process.hrtime), which every process of a run shares because they run
// on one kernel (containers too). The harness joins the stamps of all nodes and of the load agent
// into one timeline per write (report/latency-anatomy.ts).
//
// Which writes: those whose requestId is a multiple of the run's `every` (TRACE_EVERY unless the
// node's config says otherwise: the harness traces more of a slow load, traceEveryFor). Every node decides alone from
// the (clientId, requestId) that travels with the write (in REQUEST and in the PROPOSAL's txn), so
// nothing is added to any message. The tracer only looks at what the server already handles, and
// only does map work for a traced write; for the rest a modulo per message.
//
// One `trace` event per traced write and node, when the node's part is over: the contact server
// at its reply, the leader at its first commit point out, a follower at the first it receives (in
// a COMMIT, a PROPOSAL or a PING). The steps and the event's fields are shared with the report
// (vocabulary/node-events.ts).
import type { PersistOp } from '../core/core-types.js';
import type { NodeId, Txn } from '../core/types.js';
import type { PeerMessage } from '../core/zab-messages.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import type { TraceEventFields, TraceStep } from '../../vocabulary/node-events.js';

/** One write in this many is traced (by requestId) by default: ~16 a second at 1,000 writes/s. */
export const TRACE_EVERY = 64;

export function isTraced(requestId: number, every = TRACE_EVERY): boolean {
  return requestId % every === 0;
}

/**
 * How many writes per traced one a run of `writesPerSecond` (all agents together) asks for: 14-28
 * traced a second, one in 64 at the most. The self-check holds a window's traced floor to every
 * write of the window only with 20 traced writes in it (report/self-check.ts), so a slow load's
 * short windows need more of their writes traced; at 1,000 writes/s and over one in 64 is enough,
 * and more would cost the nodes CPU on every write (each traced write is stamped and logged by
 * every member it touches). A power of two, so the traced writes of a slower run include a faster
 * one's.
 */
export function traceEveryFor(writesPerSecond: number): number {
  let every = 1;
  while (every * 2 <= Math.min(TRACE_EVERY, writesPerSecond / 14)) every *= 2;
  return every;
}

/** ms on CLOCK_MONOTONIC, the same clock in every process on the machine. */
export function monoMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

interface TraceRecord {
  readonly client: string;
  readonly req: number;
  epoch: number;
  counter: number;
  readonly s: Partial<Record<TraceStep, number>>;
  acks: Record<NodeId, number> | undefined;
  /** A client of this node asked for it: the node's part ends with the reply. */
  contact: boolean;
  handle: number | undefined;
  readonly born: number;
}

/** A record older than this is dropped unfinished (a leader that died, a write given up). */
const MAX_AGE_MS = 30_000;

export class WriteTracer {
  private readonly byWrite = new Map<string, TraceRecord>();
  /** Records whose txn this node has seen, for the cumulative ACK and COMMIT. */
  private readonly withZxid = new Set<TraceRecord>();
  private readonly byHandle = new Map<number, TraceRecord>();

  constructor(
    private readonly emit: (fields: TraceEventFields) => void,
    private readonly now: () => number = monoMs,
    private readonly every = TRACE_EVERY,
  ) {}

  private traced(requestId: number): boolean {
    return requestId % this.every === 0;
  }

  /** Contact server: a client's write arrived (handle: the server's id for its reply). */
  clientWrite(handle: number, clientId: string, requestId: number): void {
    if (!this.traced(requestId)) return;
    const r = this.record(clientId, requestId);
    r.contact = true;
    r.handle = handle;
    this.byHandle.set(handle, r);
    this.stamp(r, 'clientRecv');
  }

  peerIn(from: NodeId, msg: PeerMessage): void {
    switch (msg.type) {
      case 'REQUEST':
        if (this.traced(msg.requestId)) this.stamp(this.record(msg.clientId, msg.requestId), 'leaderRecv');
        return;
      case 'PROPOSAL':
        for (const t of msg.txns) if (this.traced(t.requestId)) this.stamp(this.linked(t), 'proposalRecv');
        return this.committed(msg.commitZxid, 'commitRecv');
      case 'ACK':
        this.covered(msg.zxid, (r) => {
          r.acks ??= {};
          if (r.acks[from] === undefined) r.acks[from] = round(this.now());
        });
        return;
      case 'COMMIT':
        return this.committed(msg.zxid, 'commitRecv');
      case 'PING':
        return this.committed(msg.commitZxid, 'commitRecv');
      default:
    }
  }

  peerOut(msg: PeerMessage): void {
    switch (msg.type) {
      case 'REQUEST':
        if (this.traced(msg.requestId)) this.stamp(this.record(msg.clientId, msg.requestId), 'forwardSent');
        return;
      case 'PROPOSAL':
        for (const t of msg.txns) if (this.traced(t.requestId)) this.stamp(this.linked(t), 'proposalSent');
        return this.committed(msg.commitZxid, 'commitSent');
      case 'ACK':
        this.covered(msg.zxid, (r) => this.stamp(r, 'ackSent'));
        return;
      case 'COMMIT':
        return this.committed(msg.zxid, 'commitSent');
      case 'PING':
        return this.committed(msg.commitZxid, 'commitSent');
      default:
    }
  }

  /**
   * The first commit point covering a write, in (a follower) or out (the leader), whichever message
   * carries it (a COMMIT, or a PROPOSAL's or PING's commit point): the end of this node's part
   * unless a client of its own asked for the write (then the reply ends it).
   */
  private committed(zxid: Zxid, step: 'commitRecv' | 'commitSent'): void {
    const done: TraceRecord[] = [];
    this.covered(zxid, (r) => {
      if (this.stamp(r, step) && !r.contact) done.push(r);
    });
    for (const r of done) this.finish(r);
  }

  /** Leader: the core decided commits up to `zxid` in the turn just taken. */
  decided(zxid: Zxid): void {
    this.covered(zxid, (r) => this.stamp(r, 'decided'));
  }

  /** The ops of a persist round were handed to the log. */
  persisting(ops: readonly PersistOp[]): readonly TraceRecord[] {
    let out: TraceRecord[] | undefined;
    for (const op of ops) {
      if (op.op !== 'append') continue;
      for (const t of op.txns) {
        if (!this.traced(t.requestId)) continue;
        const r = this.linked(t);
        this.stamp(r, 'persistStart');
        (out ??= []).push(r);
      }
    }
    return out ?? NONE;
  }

  /** The round that held these records is durable. */
  durable(records: readonly TraceRecord[]): void {
    for (const r of records) this.stamp(r, 'durable');
  }

  /** Contact server: the reply for `handle` went out. */
  replied(handle: number): void {
    const r = this.byHandle.get(handle);
    if (!r) return;
    this.stamp(r, 'replySent');
    this.finish(r);
  }

  /** Records not finished yet (tests check that nothing is left behind). */
  get open(): number {
    return this.byWrite.size;
  }

  private record(client: string, req: number): TraceRecord {
    const key = `${client}/${req}`;
    let r = this.byWrite.get(key);
    if (!r) {
      const born = this.now();
      this.sweep(born);
      r = {
        client,
        req,
        epoch: -1,
        counter: -1,
        s: {},
        acks: undefined,
        contact: false,
        handle: undefined,
        born,
      };
      this.byWrite.set(key, r);
    }
    return r;
  }

  private linked(t: Txn): TraceRecord {
    const r = this.record(t.clientId, t.requestId);
    if (r.epoch < 0) {
      r.epoch = t.zxid.epoch;
      r.counter = t.zxid.counter;
      this.withZxid.add(r);
    }
    return r;
  }

  /** Calls `fn` for every record whose txn is at or below `zxid` (cumulative ACK and COMMIT). */
  private covered(zxid: Zxid, fn: (r: TraceRecord) => void): void {
    if (this.withZxid.size === 0) return;
    for (const r of this.withZxid)
      if (r.epoch < zxid.epoch || (r.epoch === zxid.epoch && r.counter <= zxid.counter)) fn(r);
  }

  /** Stamps a step the first time only; true if this was the first time. */
  private stamp(r: TraceRecord, step: TraceStep): boolean {
    if (r.s[step] !== undefined) return false;
    r.s[step] = round(this.now());
    return true;
  }

  private finish(r: TraceRecord): void {
    this.drop(r);
    this.emit({
      client: r.client,
      req: r.req,
      zxid: r.epoch < 0 ? null : `${r.epoch}:${r.counter}`,
      s: r.s,
      ...(r.acks ? { acks: r.acks } : {}),
    });
  }

  private drop(r: TraceRecord): void {
    this.byWrite.delete(`${r.client}/${r.req}`);
    this.withZxid.delete(r);
    if (r.handle !== undefined) this.byHandle.delete(r.handle);
  }

  /** Drops records too old to finish; the Map iterates oldest first. */
  private sweep(now: number): void {
    for (const r of this.byWrite.values()) {
      if (now - r.born < MAX_AGE_MS) break;
      this.drop(r);
    }
  }
}

const NONE: readonly TraceRecord[] = [];

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
