// etcd's v3 API through its JSON gateway (the member's client port serves gRPC and, on the same
// port, the same calls as JSON over HTTP/1.1): put, range and leadership transfer,
// with Node's own http and a keep-alive agent per member. Chosen over a gRPC client (the `etcd3`
// package over @grpc/grpc-js) for the harness's own cost: docs/etcd.md has the figures.
//
// Errors come out in the retry logic's vocabulary (load/write-client.ts): a refused or broken
// connection is DISCONNECTED (retried on another member), etcd's "no leader" NO_QUORUM, "leader
// changed" and "raft proposal dropped" (raft refuses proposals while leadership moves: nothing
// was logged) LEADER_LOST (retried on the same member), "request timed out" and a request
// that outlives its timeout TIMEOUT, anything else ETCD_<gRPC code>.
import { Agent, request } from 'node:http';
import { WriteFailure, type Endpoint } from '../../load/write-client.js';

/** gRPC status codes the gateway puts in its error bodies. */
const GRPC_UNAVAILABLE = 14;

export interface ResponseHeader {
  readonly revision: number;
  readonly raftTerm: number;
}

export interface KeyStat {
  readonly key: string;
  readonly modRevision: number;
  readonly version: number;
}

interface RawHeader {
  revision?: string;
  raft_term?: string;
}

const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');

function header(h: RawHeader | undefined): ResponseHeader {
  return {
    revision: Number(h?.revision ?? 0),
    raftTerm: Number(h?.raft_term ?? 0),
  };
}

/** The failure code of an error body ({error, code, message}) from the gateway. */
export function gatewayFailure(status: number, body: string): WriteFailure {
  let parsed: { error?: string; message?: string; code?: number } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return new WriteFailure('PROTOCOL', `HTTP ${status}: ${body.slice(0, 200)}`);
  }
  const text = parsed.message ?? parsed.error ?? body;
  const code = /no leader/.test(text)
    ? 'NO_QUORUM'
    : /leader changed|proposal dropped/.test(text)
      ? 'LEADER_LOST'
      : /request timed out|timed out/.test(text)
        ? 'TIMEOUT'
        : parsed.code === GRPC_UNAVAILABLE
          ? 'DISCONNECTED'
          : // What etcd said goes with the code: counted by it in result.json, it says what failed.
            `ETCD_${parsed.code ?? status}: ${text.slice(0, 80)}`;
  return new WriteFailure(code, `etcd: ${text}`);
}

export class EtcdGateway {
  private readonly agent: Agent;
  private closed = false;

  constructor(
    private readonly ep: Endpoint,
    private readonly requestTimeoutMs: number,
  ) {
    // One socket per request in flight (HTTP/1.1 has no multiplexing): the open loop may have
    // hundreds in flight during a failover, each kept for the next write once answered.
    this.agent = new Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 512 });
  }

  /** POSTs `body` as JSON to `path` and resolves with the parsed answer. */
  call<T>(path: string, body: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new WriteFailure('CLOSED', 'the client is closed'));
    const payload = JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      const req = request(
        {
          host: this.ep.host,
          port: this.ep.port,
          path,
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err) => reject(new WriteFailure('DISCONNECTED', err.message, { cause: err })));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) return reject(gatewayFailure(res.statusCode ?? 0, text));
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new WriteFailure('PROTOCOL', `not JSON: ${text.slice(0, 200)}`));
            }
          });
        },
      );
      req.setTimeout(this.requestTimeoutMs, () => {
        req.destroy(
          new WriteFailure(
            'TIMEOUT',
            `no answer from ${this.ep.host}:${this.ep.port} in ${this.requestTimeoutMs} ms`,
          ),
        );
      });
      req.on('error', (err) =>
        reject(
          err instanceof WriteFailure ? err : new WriteFailure('DISCONNECTED', err.message, { cause: err }),
        ),
      );
      req.end(payload);
    });
  }

  async put(key: string, value: Uint8Array): Promise<ResponseHeader> {
    const r = await this.call<{ header?: RawHeader }>('/v3/kv/put', { key: b64(key), value: b64(value) });
    return header(r.header);
  }

  /**
   * The value of `key`, undefined where none: linearizable (through the leader's read index), or
   * serializable (the member's own state, no round to the leader).
   */
  async get(key: string, serializable = false): Promise<Uint8Array | undefined> {
    const r = await this.call<{ kvs?: Array<{ value?: string }> }>('/v3/kv/range', {
      key: b64(key),
      ...(serializable ? { serializable: true } : {}),
    });
    const kv = r.kvs?.[0];
    return kv === undefined ? undefined : Buffer.from(kv.value ?? '', 'base64');
  }

  /** Every key under `prefix` (linearizable: through the leader's read index), without values. */
  async rangePrefix(prefix: string): Promise<{ header: ResponseHeader; keys: KeyStat[] }> {
    const end = Buffer.from(prefix);
    end[end.length - 1]!++;
    const r = await this.call<{
      header?: RawHeader;
      kvs?: Array<{ key: string; mod_revision?: string; version?: string }>;
    }>('/v3/kv/range', { key: b64(prefix), range_end: end.toString('base64'), keys_only: true });
    return {
      header: header(r.header),
      keys: (r.kvs ?? []).map((kv) => ({
        key: unb64(kv.key),
        modRevision: Number(kv.mod_revision ?? 0),
        version: Number(kv.version ?? 0),
      })),
    };
  }

  /** Hands leadership to `targetId` (hex); only the leader takes it. */
  async moveLeader(targetId: string): Promise<void> {
    await this.call('/v3/maintenance/transfer-leadership', { targetID: BigInt(`0x${targetId}`).toString() });
  }

  close(): void {
    this.closed = true;
    this.agent.destroy();
  }
}
