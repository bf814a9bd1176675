// Probing another process's wall clock: a burst of round trips, one at a time (probes in parallel
// would queue behind each other and widen every RTT), to a POLE node's GET /clock
// (node/status-server.ts) or a load agent's `clock` message (load/agent-process.ts). What the
// answers mean is clock-offset.ts's.
//
// ZooKeeper members answer no such question. Their log stamps (log4j: System.currentTimeMillis,
// the host's real-time clock now, to the ms, truncated) are corrected by their host's offset as
// measured through a process on the same host that does answer (its load agent, or a small helper
// started there), with 1 ms more of ± for the truncation (a stamp t means [t, t + 1)). That proxy
// holds unless the host's clock is stepped after the answering process started: its wall clock
// (start time + monotonic time) does not follow a step, ZooKeeper's does.
import { Agent, request } from 'node:http';
import { estimateOffset, type ClockEstimates, type ClockProbe } from './clock-offset.js';
import { wallNowMs } from '../util/wall-clock.js';

/** The harness's wall clock: the one its own stamps (fault marks, wallNowMs) are read from. */
export function harnessWallMs(): number {
  return wallNowMs();
}

/** A remote's two clocks, read together: wall (its events') and monotonic (its traces'), ms. */
export interface ClockReading {
  readonly wallMs: number;
  readonly monoMs: number;
}

/** Asks the remote for its clocks; gives up when `signal` aborts. */
export type RemoteClockReader = (signal: AbortSignal) => Promise<ClockReading>;

export interface ProbeBurstOptions {
  /** Round trips in the burst (default 8); the one with the smallest RTT is kept. */
  readonly count?: number;
  /** How long one answer may take (default 2000 ms). */
  readonly timeoutMs?: number;
}

/**
 * Probes `count` times in a row and returns the estimates of both clocks, each against the
 * harness's wall clock; rejects, saying so, on a late answer.
 */
export async function probeClock(
  read: RemoteClockReader,
  o: ProbeBurstOptions = {},
): Promise<ClockEstimates> {
  const count = o.count ?? 8;
  const timeoutMs = o.timeoutMs ?? 2000;
  const wall: ClockProbe[] = [];
  const mono: ClockProbe[] = [];
  for (let i = 0; i < count; i++) {
    const signal = AbortSignal.timeout(timeoutMs);
    const sentMs = harnessWallMs();
    const r = await read(signal).catch((err: Error) => {
      throw signal.aborted ? new Error(`clock probe: no answer within ${timeoutMs} ms`) : err;
    });
    const receivedMs = harnessWallMs();
    wall.push({ sentMs, remoteMs: r.wallMs, receivedMs });
    mono.push({ sentMs, remoteMs: r.monoMs, receivedMs });
  }
  // The same round trips: both keep the same (the smallest) one.
  return { wall: estimateOffset(wall), mono: estimateOffset(mono) };
}

/**
 * A reader of GET http://host:port/clock over one kept-alive connection (the first probe pays
 * for the connection; the smallest RTT is a later one's). close() ends the connection.
 */
export function httpClockReader(host: string, port: number): { read: RemoteClockReader; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const read: RemoteClockReader = (signal) =>
    new Promise((resolve, reject) => {
      const req = request({ host, port, path: '/clock', agent, signal }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('error', reject);
        res.on('end', () => {
          const r = (() => {
            try {
              return JSON.parse(body) as Partial<Record<keyof ClockReading, unknown>>;
            } catch {
              return {};
            }
          })();
          const { wallMs, monoMs } = r;
          if (res.statusCode === 200 && typeof wallMs === 'number' && typeof monoMs === 'number') {
            resolve({ wallMs, monoMs });
          } else
            reject(new Error(`GET http://${host}:${port}/clock: ${res.statusCode} ${body.slice(0, 200)}`));
        });
      });
      req.on('error', reject);
      req.end();
    });
  return { read, close: () => agent.destroy() };
}
