// Round-trip time through a relay route: ping-pong over one TCP connection to an echo server
// (echo-server.ts). The harness runs it for every pair before the load starts, so the report can
// put the measured RTT matrix next to the configured one.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface RttProbeOptions {
  readonly host: string;
  readonly port: number;
  /** Round trips recorded. */
  readonly samples: number;
  /** Pause between a pong and the next ping, ms. */
  readonly intervalMs: number;
  /** Bytes per ping; 64 by default. */
  readonly payloadBytes?: number;
  /** Round trips done first and not recorded (connection set-up, JIT); 2 by default. */
  readonly warmup?: number;
  /** Give up on a single round trip after this long, ms; 10 s by default. */
  readonly timeoutMs?: number;
  /**
   * Goes on past `samples` until this settles: a probe that must cover the same span as others
   * running beside it (the undelayed route measured with the pairs, relay-shaping.ts).
   */
  readonly until?: Promise<unknown>;
}

export interface RttResult {
  readonly samples: number[];
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/** What a probe measured, and how many pings it sent in all (the warm-up ones too). */
export interface ProbeResult extends RttResult {
  readonly pings: number;
}

export async function measureRtt(opts: RttProbeOptions): Promise<ProbeResult> {
  if (!Number.isInteger(opts.samples) || opts.samples < 1)
    throw new RangeError('samples must be an integer >= 1');
  const payload = Buffer.alloc(opts.payloadBytes ?? 64, 0x70);
  if (payload.length < 1) throw new RangeError('payloadBytes must be >= 1');
  const socket = await open(opts.host, opts.port);
  const pinger = new Pinger(socket, opts.timeoutMs ?? 10_000);
  try {
    const warmup = opts.warmup ?? 2;
    for (let i = 0; i < warmup; i++) await pinger.ping(payload);
    let settled = opts.until === undefined;
    void opts.until?.finally(() => (settled = true)).catch(() => undefined);
    const samples: number[] = [];
    while (samples.length < opts.samples || !settled) {
      if (opts.intervalMs > 0) await new Promise((r) => setTimeout(r, opts.intervalMs));
      samples.push(await pinger.ping(payload));
    }
    return { ...summarize(samples), pings: warmup + samples.length };
  } finally {
    socket.destroy();
  }
}

export function summarize(samples: readonly number[]): RttResult {
  if (samples.length === 0) throw new RangeError('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples: [...samples],
    meanMs: sorted.reduce((s, x) => s + x, 0) / sorted.length,
    p50Ms: sorted[Math.floor((sorted.length - 1) / 2)]!,
    minMs: sorted[0]!,
    maxMs: sorted[sorted.length - 1]!,
  };
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port });
    s.once('error', reject);
    s.once('connect', () => {
      s.off('error', reject);
      s.setNoDelay(true);
      resolve(s);
    });
  });
}

/** One ping in flight at a time; the pong is complete when as many bytes came back as were sent. */
class Pinger {
  private awaiting = 0;
  private sentAt = 0;
  private done: ((ms: number) => void) | null = null;
  private failed: ((err: Error) => void) | null = null;

  constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.on('data', (b: Buffer) => {
      // The time is taken before anything else so that the bookkeeping is not measured.
      const now = performance.now();
      this.awaiting -= b.length;
      if (this.awaiting < 0) this.fail(new Error('echo returned more bytes than were sent'));
      else if (this.awaiting === 0 && this.done !== null) {
        const done = this.done;
        this.done = null;
        this.failed = null;
        done(now - this.sentAt);
      }
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('probe connection closed')));
  }

  ping(payload: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new Error(`no pong within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      this.done = (ms) => {
        clearTimeout(timer);
        resolve(ms);
      };
      this.failed = (err) => {
        clearTimeout(timer);
        reject(err);
      };
      this.awaiting = payload.length;
      this.sentAt = performance.now();
      this.socket.write(payload);
    });
  }

  private fail(err: Error): void {
    const failed = this.failed;
    this.done = null;
    this.failed = null;
    failed?.(err);
  }
}
