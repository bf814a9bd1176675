// Requests and replies over a task's dial-back connection (swarm-rendezvous.ts), for the tasks the
// harness drives (the relay, the fault helpers): `{id, op, args}` one way, `{id, ok, value|error}`
// the other, JSON lines. Every call is bounded, and a connection that closes fails what it owed.
import type { Socket } from 'node:net';
import { jsonLines } from './swarm-rendezvous.js';

interface Request {
  readonly id: number;
  readonly op: string;
  readonly args: unknown;
}
type Reply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

const DEFAULT_CALL_TIMEOUT_MS = 15_000;

/** The harness's end: calls ops of the task. */
export class TaskRpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private failure: Error | null = null;
  private readonly lines: { send: (m: unknown) => void };
  /** Resolves when the task's connection closes. */
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly what: string,
  ) {
    this.lines = jsonLines(socket, (m) => this.onReply(m as Reply));
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.fail(new Error(`${what}: its connection to the harness closed`));
        resolve();
      }),
    );
    socket.resume();
  }

  call<T>(op: string, args: unknown = {}, timeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.what} did not answer '${op}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      const req: Request = { id, op, args };
      this.lines.send(req);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onReply(r: Reply): void {
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (r.ok) p.resolve(r.value);
    else p.reject(new Error(`${this.what}: ${r.error}`));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

export type Handlers = Record<string, (args: never) => Promise<unknown>>;

/** The task's end: answers each request with its handler; resolves when the harness hangs up. */
export function serveRpc(socket: Socket, handlers: Handlers): Promise<void> {
  const lines = jsonLines(socket, (m) => {
    const req = m as Request;
    const handler = handlers[req.op];
    const reply = (r: Reply): void => lines.send(r);
    if (!handler) return reply({ id: req.id, ok: false, error: `no op ${req.op}` });
    handler(req.args as never).then(
      (value) => reply({ id: req.id, ok: true, value: value ?? null }),
      (err: Error) => reply({ id: req.id, ok: false, error: err.message }),
    );
  });
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.on('error', () => undefined);
  });
}
