// The node's small HTTP side door: GET /status (JSON) for the harness and people, GET /metrics
// (Prometheus text) for scrapers, GET /clock (the node's wall clock, for the harness's clock-offset
// probes: measure/clock-probe.ts). Read-only; everything else is 404.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NodeId } from './core/types.js';
import { wallClockMs } from './event-log.js';
import { monoMs as traceClockMs } from './trace/write-tracer.js';
import { PROMETHEUS_CONTENT_TYPE } from './metrics.js';
import type { MetricsRegistry } from './metrics.js';

export type NodeRole = 'looking' | 'leading' | 'following';
export type NodePhase = 'election' | 'discovery' | 'sync' | 'serving';

/** What GET /status returns. The server may extend it (`interface X extends NodeStatus`). */
export interface NodeStatus {
  readonly id: NodeId;
  readonly sid: number;
  readonly datacenter: string;
  readonly role: NodeRole;
  readonly phase: NodePhase;
  readonly epoch: number;
  readonly leader?: NodeId;
  /** "epoch:counter" (formatZxid). */
  readonly lastZxid: string;
  readonly commitZxid: string;
  /** The configured oracle spec. */
  readonly oracle: string;
  /**
   * This node's score for the next election (current leader excluded) under every oracle it can
   * compute, by oracle name (the configured spec among them), as score vectors.
   */
  readonly scores: Readonly<Record<string, readonly number[]>>;
  /** RTT_i: mean RTT to every live node, ms (self = 0). Absent when heartbeats are off. */
  readonly rttMs?: Readonly<Record<string, number>>;
  /** F_i: θr of every live node, requests/s (self included). */
  readonly requestRates?: Readonly<Record<string, number>>;
  /** Client requests per second this node received (θr). */
  readonly requestRate?: number;
  /** Per peer: samples in the RTT window, liveness and the score its heartbeats last carried. */
  readonly peers?: Readonly<
    Record<
      string,
      { rttMs?: number; samples: number; rate?: number; score?: readonly number[]; live: boolean }
    >
  >;
}

export interface StatusServerOptions<S extends NodeStatus> {
  readonly host: string;
  /** 0 = ephemeral. */
  readonly port: number;
  readonly status: () => S;
  readonly metrics: MetricsRegistry;
}

export interface StatusServer {
  readonly host: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  close(): Promise<void>;
}

/** Start listening; resolves once the port is bound. */
export async function startStatusServer<S extends NodeStatus>(
  opts: StatusServerOptions<S>,
): Promise<StatusServer> {
  const server = createServer((req, res) => handle(req, res, opts));
  // Scrapers keep connections alive; do not let one idle socket hold the process open.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: opts.host,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function handle<S extends NodeStatus>(
  req: IncomingMessage,
  res: ServerResponse,
  opts: StatusServerOptions<S>,
): void {
  // Read first, before anything else the request costs: the closer to the question's arrival,
  // the closer to the middle of the harness's round trip.
  const wallMs = wallClockMs();
  const monoMs = traceClockMs();
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const known = path === '/status' || path === '/metrics' || path === '/clock';
  if (!known)
    return reply(res, 404, 'text/plain; charset=utf-8', 'not found: try /status, /metrics or /clock\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return reply(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  // The clocks the node's events (event-log.ts) and write traces (trace/write-tracer.ts) are
  // stamped with, so offsets measured here correct them.
  if (path === '/clock')
    return reply(
      res,
      200,
      'application/json',
      `{"wallMs":${wallMs},"monoMs":${monoMs}}\n`,
      req.method === 'HEAD',
    );
  let body: string;
  try {
    body = path === '/status' ? JSON.stringify(opts.status()) + '\n' : opts.metrics.render();
  } catch (err) {
    return reply(res, 500, 'text/plain; charset=utf-8', `${(err as Error).message}\n`);
  }
  reply(
    res,
    200,
    path === '/status' ? 'application/json' : PROMETHEUS_CONTENT_TYPE,
    body,
    req.method === 'HEAD',
  );
}

function reply(res: ServerResponse, code: number, type: string, body: string, headOnly = false): void {
  res.writeHead(code, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(headOnly ? undefined : body);
}
