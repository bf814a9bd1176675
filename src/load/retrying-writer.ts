// Writes that survive failover: a request is retried with the SAME (clientId, requestId) until it
// is acknowledged or its deadline passes, so the node's deduplication applies it at most once.
// Errors that mean "try again" (no leader yet, leader lost, connection gone) are retried, on
// another node when the connection itself failed.
import { PoleClient, PoleError } from '../node/net/client.js';
import type { Zxid } from '../node/core/zxid.js';

export const RETRYABLE = new Set([
  'NOT_LEADER_YET',
  'NO_QUORUM',
  'LEADER_LOST',
  'DISCONNECTED',
  'TIMEOUT',
  'CLOSED',
]);

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface WriteResult {
  readonly zxid: Zxid;
  readonly attempts: number;
}

/**
 * How long an endpoint that refused a connection is passed over by new writes: then one write
 * tries it again. A killed node is probed five times a second instead of taking half its data
 * center's writes first (each one refused, then retried elsewhere after a back-off).
 */
export const DOWN_FOR_MS = 200;

/** One connection per endpoint, reopened lazily after a failure. */
export class EndpointPool {
  private readonly clients = new Map<number, Promise<PoleClient>>();
  /** Endpoint → until when (monotonic ms) new writes pass it over. */
  private readonly downUntil = new Map<number, number>();

  constructor(
    private readonly endpoints: readonly Endpoint[],
    private readonly requestTimeoutMs = 5_000,
  ) {}

  get size(): number {
    return this.endpoints.length;
  }

  /** A connection to endpoint `i` could not be made: pass it over until `now + DOWN_FOR_MS`. */
  markDown(i: number, now: number): void {
    this.downUntil.set(i, now + DOWN_FOR_MS);
  }

  private up(i: number, now: number): boolean {
    const until = this.downUntil.get(i);
    if (until === undefined) return true;
    if (until > now) return false;
    this.downUntil.delete(i);
    return true;
  }

  /**
   * The endpoint for a uniform draw `u` in [0, 1) among those not passed over at `now` (among all
   * of them when every one is): one draw per write either way, so a seeded run stays repeatable.
   */
  pick(u: number, now: number): number {
    const n = this.endpoints.length;
    if (this.downUntil.size === 0) return Math.floor(u * n);
    const up: number[] = [];
    for (let i = 0; i < n; i++) if (this.up(i, now)) up.push(i);
    return up.length === 0 ? Math.floor(u * n) : up[Math.floor(u * up.length)]!;
  }

  /** The next endpoint after `i` not passed over at `now` (`i + 1` when every one is). */
  next(i: number, now: number): number {
    const n = this.endpoints.length;
    for (let k = 1; k <= n; k++) {
      const j = (i + k) % n;
      if (j !== i && this.up(j, now)) return j;
    }
    return (i + 1) % n;
  }

  client(i: number): Promise<PoleClient> {
    let c = this.clients.get(i);
    if (!c) {
      const ep = this.endpoints[i % this.endpoints.length]!;
      c = PoleClient.connect(ep.host, ep.port, { requestTimeoutMs: this.requestTimeoutMs });
      // A failed connect must not stay cached: the next call dials again.
      c.catch(() => this.clients.delete(i));
      this.clients.set(i, c);
    }
    return c;
  }

  drop(i: number): void {
    const c = this.clients.get(i);
    this.clients.delete(i);
    void c?.then((x) => x.close()).catch(() => undefined);
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
      const code = err instanceof PoleError ? err.code : 'CONNECT';
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
