import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER = new URL('test/fixtures/abort-socket-worker.mjs', pathToFileURL(ROOT));
const MODULE = new URL('dist/src/shaping/relay/abort-socket.js', pathToFileURL(ROOT)).href;

/** Runs the worker against a server that ends its side when the client does; resolves with what it said and whether it could be terminated within `ms`. */
async function abortInWorker(
  reset: boolean,
  ms: number,
): Promise<{ said: string[]; terminated: boolean; worker: Worker }> {
  const server: Server = createServer({ allowHalfOpen: true }, (s) => {
    s.resume();
    s.on('end', () => s.end());
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const worker = new Worker(WORKER, { workerData: { port, module: MODULE, reset } });
  const said: string[] = [];
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: string) => {
      said.push(m);
      if (m === 'aborted') resolve();
    });
    worker.on('error', reject);
  });
  const terminated = await Promise.race([
    worker.terminate().then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
  ]);
  server.close();
  return { said, terminated, worker };
}

describe('aborting a relayed socket', () => {
  it('lets its thread exit even when the socket had just been ended (no reset refused with EINVAL)', async () => {
    const { said, terminated } = await abortInWorker(false, 2_000);
    assert.deepEqual(said, ['aborted']);
    assert.equal(terminated, true, 'the worker terminated within 2 s');
  });
});
