// State before the load (a topology's `scenario.preload`): new znodes of the workload's size
// written to the leader, many in flight, until the state holds the asked-for bytes. This is how
// the paper's recovery experiments get snapshots of up to 250 MB: a server that must catch up by
// SNAP then receives all of it.
import type { ConnectWriteClient, Endpoint } from './write-client.js';

export const PRELOAD_PREFIX = '/pb/preload';

export interface PreloadOptions {
  readonly bytes: number;
  /** Bytes per znode (the workload's write size; at least 1). */
  readonly size: number;
  readonly connect: ConnectWriteClient;
  readonly clientId: string;
  /** Writes in flight at once. */
  readonly inFlight?: number;
  /** Each write's own limit. */
  readonly requestTimeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (written: number, total: number) => void;
}

export interface PreloadResult {
  /** Payload bytes written (writes × size). */
  readonly bytes: number;
  readonly writes: number;
  readonly ms: number;
}

/** Writes ceil(bytes / size) znodes of `size` bytes to `leader`; rejects on the first failed write. */
export async function preload(leader: Endpoint, o: PreloadOptions): Promise<PreloadResult> {
  const size = Math.max(1, o.size);
  const total = Math.ceil(o.bytes / size);
  const data = new Uint8Array(size).fill(0x70);
  const started = performance.now();
  const client = await o.connect(leader, { requestTimeoutMs: o.requestTimeoutMs ?? 10_000 });
  let next = 0;
  let done = 0;
  let failed = false;
  try {
    const worker = async (): Promise<void> => {
      // After the first failure no worker starts another write.
      while (next < total && !failed) {
        if (o.signal?.aborted) throw new Error('preload stopped: the run was aborted');
        const i = next++;
        try {
          await client.write(`${PRELOAD_PREFIX}/${i}`, data, { clientId: o.clientId, requestId: i });
        } catch (err) {
          failed = true;
          throw new Error(`preload write ${i} of ${total} failed: ${(err as Error).message}`, { cause: err });
        }
        done += 1;
        if (done % 10_000 === 0) o.onProgress?.(done, total);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.inFlight ?? 256, total) }, worker));
  } finally {
    await client.close();
  }
  return { bytes: total * size, writes: total, ms: performance.now() - started };
}
