// A loopback TCP echo server: the far end of the RTT probe (rtt-probe.ts). Every byte read is
// written back at once; Nagle is off so a small ping is not held back.
//
// `inWorker` runs it on its own thread (this same file, started as a worker). A probe and an
// echo on one thread share one event loop, which makes a direct round trip cheaper than any
// round trip between two processes: with the echo on another thread, a direct probe pays the
// same thread wake-ups as one through the relay, so it is a fair baseline for it.
//
// Its thread's CPU is a floor for anything on this machine that relays messages with Node: per
// message it reads and writes once, as the relay does, and does nothing else (bench relay).
import { createServer, type Socket } from 'node:net';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ownThreadCpuMs } from '../../util/thread-cpu.js';

export interface EchoServer {
  readonly port: number;
  /** What its thread has spent so far, and on how many reads (each written back at once). */
  usage(): Promise<EchoUsage>;
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

export interface EchoServerOptions {
  readonly host?: string;
  /** 0 or absent = ephemeral. */
  readonly port?: number;
  /** Serve from a worker thread instead of this thread's event loop. */
  readonly inWorker?: boolean;
}

export interface EchoUsage {
  /** CPU time of the thread serving it, ms (null where not readable: not Linux). */
  readonly cpuMs: number | null;
  /** Socket reads, each written back as it came. */
  readonly reads: number;
  /** Bytes those reads carried (and so wrote back). */
  readonly bytes: number;
}

interface EchoWorkerInit {
  readonly role: 'echo-server';
  readonly host?: string;
  readonly port?: number;
}

export async function startEchoServer(opts: EchoServerOptions = {}): Promise<EchoServer> {
  return opts.inWorker ? startInWorker(opts) : startHere(opts);
}

async function startHere(opts: EchoServerOptions): Promise<EchoServer> {
  const sockets = new Set<Socket>();
  let reads = 0;
  let bytes = 0;
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('data', (b: Buffer) => {
      reads++;
      bytes += b.length;
      socket.write(b);
    });
    socket.on('end', () => socket.end());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('echo server has no port');
  let closed: Promise<void> | null = null;
  return {
    port: addr.port,
    usage: () => Promise.resolve({ cpuMs: ownThreadCpuMs(), reads, bytes }),
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}

async function startInWorker(opts: EchoServerOptions): Promise<EchoServer> {
  const init: EchoWorkerInit = { role: 'echo-server', host: opts.host, port: opts.port };
  const worker = new Worker(new URL(import.meta.url), { workerData: init });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`echo worker exited (code ${code})`)));
      worker.once('message', (m: { port: number }) => resolve(m.port));
    });
    // Once serving, a failure of the worker shows as probes failing, and again here at close.
    let failure: Error | null = null;
    worker.on('error', (err) => (failure ??= err));
    let closed: Promise<void> | null = null;
    // Replies come back in the order asked. A worker that is gone answers nothing: whoever waits
    // is given nothing measured rather than left waiting.
    const usageWaiters: ((u: EchoUsage) => void)[] = [];
    let exited = false;
    const none: EchoUsage = { cpuMs: null, reads: 0, bytes: 0 };
    worker.on('message', (m: { usage?: EchoUsage }) => {
      if (m.usage !== undefined) usageWaiters.shift()?.(m.usage);
    });
    worker.on('exit', () => {
      exited = true;
      for (const w of usageWaiters.splice(0)) w(none);
    });
    return {
      port,
      usage() {
        if (closed !== null || exited) return Promise.resolve(none);
        return new Promise<EchoUsage>((resolve) => {
          usageWaiters.push(resolve);
          worker.postMessage('usage');
        });
      },
      close() {
        for (const w of usageWaiters.splice(0)) w(none);
        closed ??= worker.terminate().then(() => {
          if (failure !== null) throw failure;
        });
        return closed;
      },
    };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
}

// As a worker: serve, report the port; terminate() ends it (and its sockets with it).
const init = workerData as EchoWorkerInit | undefined;
if (!isMainThread && init?.role === 'echo-server' && parentPort !== null) {
  const port = parentPort;
  void startHere({ host: init.host, port: init.port }).then((s) => {
    port.on('message', () => void s.usage().then((usage) => port.postMessage({ usage })));
    port.postMessage({ port: s.port });
  });
}
