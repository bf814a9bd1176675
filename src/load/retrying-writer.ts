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

/** One connection per endpoint, reopened lazily after a failure. */
export class EndpointPool {
  private readonly clients = new Map<number, Promise<PoleClient>>();

  constructor(
    private readonly endpoints: readonly Endpoint[],
    private readonly requestTimeoutMs = 5_000,
  ) {}

  get size(): number {
    return this.endpoints.length;
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
