// Writes that survive failover: a request is retried with the SAME (clientId, requestId) until it
// is acknowledged or its deadline passes, so the node's deduplication applies it at most once.
// Errors that mean "try again" (no leader yet, leader lost, connection gone) are retried, on
// another node when the connection itself failed.
import type { Zxid } from '../vocabulary/zxid.js';
import {
  connectPoleWriter,
  failureCode,
  type ConnectWriteClient,
  type Endpoint,
  type WriteClient,
} from './write-client.js';

export type { Endpoint };

export const RETRYABLE = new Set([
  'NOT_LEADER_YET',
  'NO_QUORUM',
  'LEADER_LOST',
  'DISCONNECTED',
  'TIMEOUT',
  'CLOSED',
]);

export interface WriteResult {
  readonly zxid: Zxid;
  readonly attempts: number;
}

/** After a refused connect or a lost connection, an endpoint gets no new writes for this long... */
const DOWN_FIRST_MS = 100;
/** ...doubling while it stays down, up to this. The first write after the pause is the probe. */
const DOWN_MAX_MS = 2_000;

/**
 * One connection per endpoint, reopened lazily after a failure. An endpoint whose connection was
 * refused or lost is known down for a while: route() sends new writes to the next one instead, so
 * that after a server dies its share of the writes does not each pay a refused connect first.
 */
export class EndpointPool {
  private readonly clients = new Map<number, Promise<WriteClient>>();
  /** Each endpoint's connection now, by the number it was opened with (the pool's count). */
  private readonly connections = new Map<number, number>();
  private opened = 0;
  private readonly downUntil = new Map<number, number>();
  private readonly downFor = new Map<number, number>();

  constructor(
    private readonly endpoints: readonly Endpoint[],
    private readonly requestTimeoutMs = 5_000,
    private readonly now: () => number = () => performance.now(),
    /** How to open a connection: the target's client (the POLE node's unless said). */
    private readonly connect: ConnectWriteClient = connectPoleWriter,
  ) {}

  get size(): number {
    return this.endpoints.length;
  }

  /** The endpoint for a new write meant for `i`: `i` unless it is known down, else the next one up. */
  route(i: number): number {
    if (this.downUntil.size === 0) return i;
    const n = this.endpoints.length;
    const now = this.now();
    for (let k = 0; k < n; k++) {
      const j = (i + k) % n;
      const until = this.downUntil.get(j);
      if (until === undefined || until <= now) return j;
    }
    return i;
  }

  client(i: number): Promise<WriteClient> {
    let c = this.clients.get(i);
    if (!c) {
      const ep = this.endpoints[i % this.endpoints.length]!;
      c = this.connect(ep, { requestTimeoutMs: this.requestTimeoutMs });
      this.connections.set(i, ++this.opened);
      // A failed connect must not stay cached: the next call dials again.
      c.then(
        () => this.markUp(i),
        () => {
          this.clients.delete(i);
          this.markDown(i);
        },
      );
      this.clients.set(i, c);
    }
    return c;
  }

  /**
   * The number of the connection to `i` that client(i) gave last (0: none yet): a new connection,
   * after the last one failed or was dropped, gets a new number.
   */
  connectionOf(i: number): number {
    return this.connections.get(i) ?? 0;
  }

  /** The connection to `i` is dead: close it, and send no new writes there for a while. */
  drop(i: number): void {
    const c = this.clients.get(i);
    this.clients.delete(i);
    this.markDown(i);
    void c?.then((x) => x.close()).catch(() => undefined);
  }

  private markDown(i: number): void {
    const prev = this.downFor.get(i);
    const d = prev === undefined ? DOWN_FIRST_MS : Math.min(DOWN_MAX_MS, prev * 2);
    this.downFor.set(i, d);
    this.downUntil.set(i, this.now() + d);
  }

  private markUp(i: number): void {
    this.downUntil.delete(i);
    this.downFor.delete(i);
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((c) => c.then((x) => x.close()).catch(() => undefined)));
  }
}

export async function writeWithRetry(
  pool: EndpointPool,
  first: number,
  path: string,
  data: Uint8Array,
  ids: { clientId: string; requestId: number },
  deadlineMs: number,
  backoffMs = 5,
): Promise<WriteResult> {
  let target = first;
  for (let attempt = 1; ; attempt++) {
    try {
      const client = await pool.client(target);
      const r = await client.write(path, data, ids);
      return { zxid: r.zxid, attempts: attempt };
    } catch (err) {
      const code = failureCode(err);
      if (code !== 'CONNECT' && !RETRYABLE.has(code)) throw err;
      if (code === 'CONNECT' || code === 'DISCONNECTED' || code === 'CLOSED') {
        pool.drop(target);
        target = (target + 1) % pool.size;
      }
      if (Date.now() >= deadlineMs) throw err;
      await new Promise((r) => setTimeout(r, backoffMs));
    }
  }
}
