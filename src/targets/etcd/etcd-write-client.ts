// The load's writes on etcd: a put of the write's bytes on the slot of its logical path
// (targets/slots.ts), acknowledged with the put's revision and the Raft term it committed in,
// carried as the write's zxid {epoch: term, counter: revision}: both only grow, so the order of
// zxids is the order of the puts, and a write's term tells the first commit of a new leader.
import type { ConnectWriteClient, WriteClient } from '../../load/write-client.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import { slotOf } from '../slots.js';
import { EtcdGateway } from './etcd-gateway.js';

class EtcdWriteClient implements WriteClient {
  constructor(private readonly gw: EtcdGateway) {}

  /** A put of the same bytes twice is harmless: the retries need no deduplication ids. */
  async write(path: string, data: Uint8Array): Promise<{ zxid: Zxid }> {
    const h = await this.gw.put(slotOf(path), data);
    return { zxid: { epoch: h.raftTerm, counter: h.revision } };
  }

  /** A range of the slot: linearizable (etcd's default), or serializable with that mode. */
  async read(path: string, mode = 'default'): Promise<{ data: Uint8Array } | undefined> {
    const value = await this.gw.get(slotOf(path), mode === 'serializable');
    return value === undefined ? undefined : { data: value };
  }

  close(): Promise<void> {
    this.gw.close();
    return Promise.resolve();
  }
}

/** Connections open with the first request (HTTP keep-alive): nothing to wait for here. */
export const connectEtcdWriter: ConnectWriteClient = (ep, o) =>
  Promise.resolve(new EtcdWriteClient(new EtcdGateway(ep, o.requestTimeoutMs)));
