// The load's writes on ZooKeeper: `setData` of the write's bytes on znodes created beforehand, as
// an operator's benchmark of ZooKeeper would do, instead of one new znode per write. A logical
// path `${dir}/${n}` (what the agents, the warm-up, the calibration and the benches write) maps to
// the slot `${dir}/s${n mod ZK_SLOTS}`; prepareZkSlots creates the slots before the first write.
//
// Errors come out in the retry logic's vocabulary (load/write-client.ts): a lost connection or
// session is DISCONNECTED (retried on another server), a server-side timeout TIMEOUT, anything
// else ZooKeeper's own name prefixed ZK_ (not retried: a missing slot is a harness bug or a loss).
import {
  WriteFailure,
  type ConnectWriteClient,
  type Endpoint,
  type WriteClient,
} from '../../load/write-client.js';
import { SLOTS as ZK_SLOTS, slotOf } from '../slots.js';
import { ZkClient, ZkError } from './client/zk-client.js';

const AS_DISCONNECTED = new Set([
  'DISCONNECTED',
  'CLOSED',
  'CONNECTIONLOSS',
  'SESSIONEXPIRED',
  'SESSIONMOVED',
]);
const AS_TIMEOUT = new Set(['TIMEOUT', 'OPERATIONTIMEOUT', 'REQUESTTIMEOUT', 'THROTTLEDOP']);

export function asWriteFailure(err: unknown): WriteFailure {
  if (!(err instanceof ZkError)) return new WriteFailure('DISCONNECTED', String(err), { cause: err });
  const code = AS_DISCONNECTED.has(err.code)
    ? err.code === 'CLOSED'
      ? 'CLOSED'
      : 'DISCONNECTED'
    : AS_TIMEOUT.has(err.code)
      ? 'TIMEOUT'
      : err.code === 'PROTOCOL'
        ? 'PROTOCOL'
        : `ZK_${err.code}`;
  return new WriteFailure(code, err.message, { cause: err });
}

/** A session's timeout asked for by the load's clients (the server bounds it by its tickTime). */
const SESSION_TIMEOUT_MS = 10_000;

class ZkWriteClient implements WriteClient {
  constructor(private readonly zk: ZkClient) {}

  /** The ids are the POLE node's deduplication; a setData of the same bytes needs none. */
  async write(path: string, data: Uint8Array): Promise<{ zxid: { epoch: number; counter: number } }> {
    try {
      const r = await this.zk.setData(slotOf(path), data);
      return { zxid: r.zxid };
    } catch (err) {
      throw asWriteFailure(err);
    }
  }

  /** A plain getData, served by the member itself; with mode `sync`, after a sync of the path. */
  async read(path: string, mode = 'default'): Promise<{ data: Uint8Array } | undefined> {
    try {
      if (mode === 'sync') await this.zk.sync(slotOf(path));
      return { data: (await this.zk.getData(slotOf(path))).data };
    } catch (err) {
      if (err instanceof ZkError && err.code === 'NONODE') return undefined;
      throw asWriteFailure(err);
    }
  }

  close(): Promise<void> {
    return this.zk.close();
  }
}

export const connectZkWriter: ConnectWriteClient = async (ep, o) => {
  try {
    const zk = await ZkClient.connect(ep.host, ep.port, {
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      requestTimeoutMs: o.requestTimeoutMs,
    });
    return new ZkWriteClient(zk);
  } catch (err) {
    throw asWriteFailure(err);
  }
};

/** Creates `dir`, its ancestors and its ZK_SLOTS slots (whatever exists already is kept). */
export async function prepareZkSlots(ep: Endpoint, dir: string, timeoutMs = 20_000): Promise<void> {
  const zk = await ZkClient.connect(ep.host, ep.port, {
    requestTimeoutMs: timeoutMs,
    connectTimeoutMs: timeoutMs,
  });
  const exists = (err: unknown): void => {
    if (!(err instanceof ZkError && err.code === 'NODEEXISTS')) throw err;
  };
  try {
    const parts = dir.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++)
      await zk.create(`/${parts.slice(0, i).join('/')}`, new Uint8Array(0)).catch(exists);
    const empty = new Uint8Array(0);
    const slots = Array.from({ length: ZK_SLOTS }, (_, i) => `${dir}/s${i}`);
    // One transaction for all of them: a thousand creates one by one took 1-2.5 s on the 2-core VM
    // (each its own proposal, quorum and log write), and a run prepares three directories. A multi
    // applies nothing when one slot exists already (a directory prepared before): then one by one,
    // keeping what is there.
    const together = await zk
      .createAll(slots.map((path) => ({ path, data: empty, mode: 'persistent' as const })))
      .then(
        () => true,
        (err: unknown) => {
          if (err instanceof ZkError && err.code === 'NODEEXISTS') return false;
          throw err;
        },
      );
    if (!together) await Promise.all(slots.map((path) => zk.create(path, empty).catch(exists)));
  } finally {
    await zk.close();
  }
}
