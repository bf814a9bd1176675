// How the swarm's tasks and the harness find each other: every task this runtime starts (a load
// agent, the relay, a node's fault helper, a member at its start gate) dials one TCP listener of the harness and says who it
// is in its first line; the harness then talks to it over that connection in JSON lines.
//
// Why the task dials and not the harness: a task on the run's overlay has no address the harness
// can reach (the overlay lives in namespaces of the swarm's nodes), but every task reaches the
// machine the harness runs on through its node's own network (docker_gwbridge, or the bridge a
// node is a container on). One listener serves every task of a run, no port is published for any
// of them, and nothing about the harness has to be known before the task starts but an address
// and a port, given in its environment. The run's token (random, in the same environment) keeps
// a stray connection from passing for a task.
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { TASK_ENV } from './swarm-plan.js';

export type TaskRole = 'agent' | 'relay' | 'faults' | 'gate';

/**
 * A task's first line. `key`: an agent's data center, a fault helper's node id, a member's id at
 * its start gate (swarm-plan.ts gatedCommand), '' for the relay.
 */
export interface TaskHello {
  readonly token: string;
  readonly role: TaskRole;
  readonly key: string;
}

/** A task that dialled in, its hello read; the rest of the connection is the role's own protocol. */
export interface TaskConnection {
  readonly hello: TaskHello;
  readonly socket: Socket;
}

/** How long a dialled connection may take to say hello before it is dropped. */
const HELLO_TIMEOUT_MS = 10_000;

export class Rendezvous {
  readonly token = randomBytes(16).toString('hex');
  private readonly arrived = new Map<string, TaskConnection>();
  private readonly waiting = new Map<string, (c: TaskConnection) => void>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Listens on `host` (an address of this machine the swarm's nodes reach), on a free port. */
  static async listen(host: string): Promise<Rendezvous> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('the rendezvous listener has no port');
    const r = new Rendezvous(server, host, addr.port);
    server.on('connection', (socket) => r.accept(socket));
    return r;
  }

  /** The task of `role` and `key`, once it has dialled in; rejects after `timeoutMs`. */
  waitFor(role: TaskRole, key: string, timeoutMs: number, what: () => string): Promise<TaskConnection> {
    const id = `${role}/${key}`;
    const there = this.arrived.get(id);
    if (there) {
      this.arrived.delete(id);
      return Promise.resolve(there);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(
          new Error(
            `the ${role} task${key ? ` ${key}` : ''} did not dial the harness within ${timeoutMs} ms at ${this.host}:${this.port}; ${what()}`,
          ),
        );
      }, timeoutMs);
      this.waiting.set(id, (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
    // The hello is the first line; read it byte-wise-safe: whatever followed it stays in the socket.
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const nl = buffered.indexOf(10);
      if (nl < 0) {
        if (buffered.length > 4096) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      clearTimeout(timer);
      const rest = buffered.subarray(nl + 1);
      if (rest.length > 0) socket.unshift(rest);
      let hello: TaskHello;
      try {
        hello = JSON.parse(buffered.subarray(0, nl).toString('utf8')) as TaskHello;
      } catch {
        socket.destroy();
        return;
      }
      if (hello.token !== this.token || !['agent', 'relay', 'faults', 'gate'].includes(hello.role)) {
        socket.destroy();
        return;
      }
      const id = `${hello.role}/${hello.key}`;
      const c = { hello, socket };
      const waiter = this.waiting.get(id);
      if (waiter) {
        this.waiting.delete(id);
        waiter(c);
      } else this.arrived.set(id, c);
    };
    socket.on('data', onData);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The task's side: dials the harness its environment names and says hello; resolves with the socket. */
export async function dialHarness(role: TaskRole, key: string, env = process.env): Promise<Socket> {
  const at = env[TASK_ENV.harness];
  const token = env[TASK_ENV.token];
  if (!at || !token) throw new Error(`${TASK_ENV.harness} and ${TASK_ENV.token} must be set`);
  const colon = at.lastIndexOf(':');
  const host = at.slice(0, colon);
  const port = Number(at.slice(colon + 1));
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host, port }, () => resolve(s));
    s.once('error', reject);
    s.setTimeout(HELLO_TIMEOUT_MS, () => s.destroy(new Error(`no connection to the harness at ${at}`)));
  });
  socket.setTimeout(0);
  socket.setNoDelay(true);
  const hello: TaskHello = { token, role, key };
  socket.write(`${JSON.stringify(hello)}\n`);
  return socket;
}

/** JSON lines on a socket: each parsed line to `onMessage`; `send` writes one. */
export function jsonLines(socket: Socket, onMessage: (m: unknown) => void): { send: (m: unknown) => void } {
  createInterface({ input: socket }).on('line', (line) => {
    if (line.trim() === '') return;
    try {
      onMessage(JSON.parse(line));
    } catch {
      // not JSON: not this protocol; ignored
    }
  });
  return {
    send: (m) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(m)}\n`);
    },
  };
}
