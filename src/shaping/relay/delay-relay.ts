// Main-thread handle on the userspace delay relay (architecture.md, "Shaping": the fallback where
// the kernel has no netem). Every route of a run lives in one worker thread (relay-worker.ts), so
// the harness's own event loop never delays a release; this class only sends it requests.
import { Worker } from 'node:worker_threads';
import { terminateThread } from '../../util/terminate-thread.js';
import { validateLinkDelay } from './delay-distribution.js';
import type {
  DirectionStats,
  RelayReply,
  RelayRequest,
  RelayRoute,
  RelayStats,
  RelayWorkerInit,
  RouteDelayChange,
  RouteDirection,
  RouteStats,
} from './relay-protocol.js';

export type { DirectionStats, RelayRoute, RelayStats, RouteDelayChange, RouteStats };

export interface DelayRelayOptions {
  readonly routes: readonly RelayRoute[];
  /** Seeds every sampler (per route, connection and direction), so runs repeat. */
  readonly seed: number;
  /** Address the route listeners bind; 127.0.0.1 by default. */
  readonly host?: string;
  /**
   * Nice value of the relay's two threads, DEFAULT_RELAY_NICE unless given; null leaves them at
   * the process's. Where the system refuses (no CAP_SYS_NICE) the relay runs anyway and
   * stats().worker.niceSet says so.
   */
  readonly nice?: number | null;
}

/** The relay stands in for the network: it should not wait behind the nodes for a CPU. */
export const DEFAULT_RELAY_NICE = -10;

/** How long close() waits for the worker to shut its sockets before terminating it anyway. */
const CLOSE_GRACE_MS = 2000;
/** The longest a request to the worker may take (adding routes listens on ports: well under it). */
const REQUEST_TIMEOUT_MS = 10_000;

export class DelayRelay {
  private readonly ports = new Map<string, number>();
  private readonly pending = new Map<
    number,
    { resolve: (r: RelayReply) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: RelayReply) => {
      const p = this.pending.get(reply.id);
      if (p === undefined) return;
      this.pending.delete(reply.id);
      p.resolve(reply);
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`relay worker exited (code ${code})`)));
  }

  static async start(opts: DelayRelayOptions): Promise<DelayRelay> {
    if (!Number.isFinite(opts.seed)) throw new RangeError(`relay seed must be a number, got ${opts.seed}`);
    const nice = opts.nice === undefined ? DEFAULT_RELAY_NICE : opts.nice;
    if (nice !== null && (!Number.isInteger(nice) || nice < -20 || nice > 19)) {
      throw new RangeError(`relay nice must be an integer in [-20, 19], got ${nice}`);
    }
    for (const r of opts.routes) validateRoute(r);
    const init: RelayWorkerInit = {
      role: 'relay',
      seed: opts.seed >>> 0,
      host: opts.host ?? '127.0.0.1',
      nice,
    };
    // Resolved next to this file, so it works from dist/src and from any other output directory.
    const worker = new Worker(new URL('./relay-worker.js', import.meta.url), { workerData: init });
    const relay = new DelayRelay(worker);
    try {
      await relay.addRoutes(opts.routes);
    } catch (err) {
      await relay.close();
      throw err;
    }
    return relay;
  }

  /** The local port of a route (connect here to reach its target through the delays). */
  port(name: string): number {
    const p = this.ports.get(name);
    if (p === undefined) throw new Error(`no relay route named '${name}'`);
    return p;
  }

  async addRoutes(routes: readonly RelayRoute[]): Promise<void> {
    for (const r of routes) validateRoute(r);
    const reply = await this.request({ op: 'add', routes });
    for (const [name, port] of Object.entries(reply.ports ?? {})) this.ports.set(name, port);
  }

  /**
   * New delays for named routes, in force for every byte that arrives from now on (bytes already
   * queued keep their release times, and each direction stays FIFO). Used to calibrate a run's
   * node floor with no delay, and to change a link's delay mid-run.
   */
  async change(changes: readonly RouteDelayChange[]): Promise<void> {
    for (const c of changes) {
      validateLinkDelay(c.forward);
      validateLinkDelay(c.backward);
    }
    await this.request({ op: 'change', changes });
  }

  /**
   * Cuts the named routes in `direction` (`blocked`: a partition; connections stall, nothing is
   * reset) or restores them (what they held goes on in order).
   */
  async block(names: readonly string[], blocked: boolean, direction: RouteDirection = 'both'): Promise<void> {
    await this.request({ op: 'block', names, blocked, direction });
  }

  /**
   * Fault injection for tests: keeps the relay thread busy for `ms`, answering nothing, as a stuck
   * thread would. Resolves when (if) it answers.
   */
  async stall(ms: number): Promise<void> {
    await this.request({ op: 'stall', ms });
  }

  async stats(): Promise<RelayStats> {
    const reply = await this.request({ op: 'stats' });
    if (reply.stats === undefined) throw new Error('relay worker sent no stats');
    return reply.stats;
  }

  /** Closes the listeners, destroys every relayed connection and ends the worker. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    if (this.failure === null) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_GRACE_MS);
      });
      // A failing close is no reason not to terminate: the worker goes either way.
      await Promise.race([this.request({ op: 'close' }).catch(() => undefined), grace]);
      clearTimeout(timer);
    }
    this.failure ??= new Error('relay closed');
    await terminateThread(this.worker, 'the relay thread');
    this.ports.clear();
  }

  private request(
    req:
      | { op: 'add'; routes: readonly RelayRoute[] }
      | { op: 'change'; changes: readonly RouteDelayChange[] }
      | { op: 'stats' }
      | { op: 'block'; names: readonly string[]; blocked: boolean; direction: RouteDirection }
      | { op: 'stall'; ms: number }
      | { op: 'close' },
  ) {
    if (this.failure !== null) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<RelayReply & { ok: true }>((resolve, reject) => {
      // Every wait is bounded: a worker that does not answer (a thread stuck in a loop, seen once
      // as a relay thread spinning at 100 % for minutes, issue 12) fails the relay instead of
      // hanging the run, and close() then terminates the worker.
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const err = new Error(`the relay worker did not answer '${req.op}' within ${REQUEST_TIMEOUT_MS} ms`);
        this.failure ??= err;
        reject(err);
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          if (reply.ok) resolve(reply);
          else reject(new Error(reply.error));
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this.worker.postMessage({ ...req, id } as RelayRequest);
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

function validateRoute(r: RelayRoute): void {
  if (typeof r.name !== 'string' || r.name.length === 0) throw new RangeError('a relay route needs a name');
  const { host, port } = r.target;
  if (typeof host !== 'string' || host.length === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`relay route '${r.name}': bad target ${host}:${port}`);
  }
  if (
    r.listenPort !== undefined &&
    (!Number.isInteger(r.listenPort) || r.listenPort < 0 || r.listenPort > 65535)
  ) {
    throw new RangeError(`relay route '${r.name}': bad listen port ${r.listenPort}`);
  }
  validateLinkDelay(r.forward);
  validateLinkDelay(r.backward);
}
