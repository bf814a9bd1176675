// One process of the NewSQL paper's election, driving the pure round (db-round.ts) through real
// transactions on PostgreSQL (db-schema.ts): BEGIN, the lock on VARS, every descriptor, the
// round's writes, COMMIT, then the local state, then sleep Tp (or retry at once).
//
// Many participants share one OS process here (each with its own connection), so a crash has to
// look to the database like a killed process: crash() destroys the participant's socket at once
// (the kernel closes it as it would for a dead process: PostgreSQL sees the connection end, rolls
// its transaction back and frees its locks) and nothing it had in flight acts afterwards. A pause
// stops it at its next step, wherever it is, holding whatever locks it holds, as a process the OS
// stopped would; PostgreSQL ends a transaction left idle past idle_in_transaction_session_timeout.
import { Socket } from 'node:net';
import pg from 'pg';
import { type ElectionEventSink, type Participant } from '../participant.js';
import {
  afterAbort,
  initialState,
  isLeader,
  leaseEnd,
  lockFor,
  runRound,
  type DbState,
  type DbTimers,
} from './db-round.js';
import { applyWrites, readRegisters } from './db-schema.js';
import { wallNowMs } from '../../util/wall-clock.js';

export interface DbEndpoint {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  readonly password?: string;
}

export interface DbParticipantOptions {
  /** Where this participant reaches the database (through the delay relay from another data center). */
  readonly endpoint: DbEndpoint;
  readonly schema: string;
  readonly timers: DbTimers;
  readonly emit: ElectionEventSink;
  /** Bound on every statement, client and server side. */
  readonly statementTimeoutMs?: number;
  /** Added once to the sleep after the first round: where in Tp this process's rounds fall. */
  readonly phaseMs?: number;
}

class Crashed extends Error {}

export class DbParticipant implements Participant {
  private state: DbState;
  private client: pg.Client | undefined;
  private socket: Socket | undefined;
  private crashed = false;
  private stopped = false;
  private pausedUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private joined: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private lastRoundMs: number | undefined;

  constructor(
    readonly name: string,
    private readonly o: DbParticipantOptions,
  ) {
    this.state = initialState(o.timers);
  }

  /** The id the database gave it (null before its first round). */
  get id(): number | null {
    return this.state.id;
  }

  start(): Promise<void> {
    const joined = new Promise<void>((resolve, reject) => (this.joined = { resolve, reject }));
    this.schedule(0);
    return joined;
  }

  isLeader(): boolean {
    return !this.crashed && isLeader(this.state, wallNowMs(), this.o.timers);
  }

  crash(): void {
    if (this.crashed) return;
    this.crashed = true;
    clearTimeout(this.timer);
    this.socket?.destroy();
    this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'crashed' });
    this.joined?.reject(new Crashed(`${this.name} crashed before it joined`));
  }

  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, wallNowMs() + ms);
    this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'paused', ms });
  }

  async stop(): Promise<void> {
    if (this.crashed || this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    await bounded(this.running, 5_000);
    if (this.state.role === 'leader')
      this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'lead-lost', why: 'stopped' });
    const c = this.client;
    this.client = undefined;
    if (c) await bounded(c.end(), 3_000).catch(() => this.socket?.destroy());
    this.socket?.destroy();
  }

  private schedule(ms: number): void {
    if (this.crashed || this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.round();
    }, ms);
  }

  /** One round; never throws (a failed round is an event and a non-leader). */
  private async round(): Promise<void> {
    let c: pg.Client | undefined;
    try {
      await this.step();
      c = this.client ?? (await this.connect());
      const lock = lockFor(this.state);
      await c.query('BEGIN');
      await this.step();
      const { vars, descriptors } = await readRegisters(c, this.o.schema, lock);
      await this.step();
      const out = runRound(this.state, lock, vars, descriptors, wallNowMs(), this.o.timers, this.name);
      await applyWrites(c, this.o.schema, out.writes);
      await this.step();
      await c.query('COMMIT');
      const at = wallNowMs();
      this.live();
      const first = this.state.id === null;
      this.adopt(out.next, at);
      this.schedule(out.sleepMs + (first && out.sleepMs > 0 ? (this.o.phaseMs ?? 0) : 0));
    } catch (err) {
      if (this.crashed || this.stopped) return;
      const was = this.state.role;
      this.state = afterAbort(this.state);
      const at = wallNowMs();
      this.o.emit({ t: at, participant: this.name, ev: 'error', message: (err as Error).message });
      if (was === 'leader')
        this.o.emit({ t: at, participant: this.name, ev: 'lead-lost', why: 'round failed' });
      // A connection in doubt is not reused: the next round opens a fresh one.
      this.drop(c);
      this.schedule(this.state.roundMs);
    }
  }

  private adopt(next: DbState, at: number): void {
    const before = this.state;
    this.state = next;
    if (before.id === null && next.id !== null) {
      this.o.emit({ t: at, participant: this.name, ev: 'joined', id: String(next.id) });
      this.joined?.resolve();
      this.joined = undefined;
    } else if (before.id !== next.id && next.id !== null) {
      // Evicted and back with a new id.
      this.o.emit({ t: at, participant: this.name, ev: 'joined', id: String(next.id) });
    }
    if (next.roundMs !== this.lastRoundMs) {
      this.lastRoundMs = next.roundMs;
      this.o.emit({ t: at, participant: this.name, ev: 'round-time', ms: next.roundMs });
    }
    if (next.role === 'leader')
      this.o.emit({ t: at, participant: this.name, ev: 'lead', until: leaseEnd(next, this.o.timers) });
    else if (before.role === 'leader')
      this.o.emit({ t: at, participant: this.name, ev: 'lead-lost', why: 'a smaller process is alive' });
  }

  /** A pause holds the participant here; a crash or a stop ends the round. */
  private async step(): Promise<void> {
    this.live();
    for (let wait = this.pausedUntil - wallNowMs(); wait > 0; wait = this.pausedUntil - wallNowMs()) {
      await new Promise((r) => setTimeout(r, Math.min(wait, 50)));
      this.live();
    }
  }

  private live(): void {
    if (this.crashed) throw new Crashed(`${this.name} crashed`);
  }

  private async connect(): Promise<pg.Client> {
    const e = this.o.endpoint;
    const timeout = this.o.statementTimeoutMs ?? 10_000;
    const client = new pg.Client({
      host: e.host,
      port: e.port,
      user: e.user,
      database: e.database,
      ...(e.password !== undefined ? { password: e.password } : {}),
      application_name: `pole-bench ${this.name}`,
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      statement_timeout: timeout,
      // Our own socket, so that crash() can destroy it like the kernel does a dead process's.
      stream: () => (this.socket = new Socket()),
    });
    // A server that ends the session (idle in transaction, shut down) must not crash the harness.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      this.socket?.destroy();
      throw err;
    }
    this.live();
    this.client = client;
    return client;
  }

  private drop(c: pg.Client | undefined): void {
    if (c === undefined || c !== this.client) return;
    this.client = undefined;
    this.socket?.destroy();
    void c.end().catch(() => undefined);
  }
}

function bounded<T>(p: Promise<T>, ms: number): Promise<T | void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
