// What a load agent, the warm-up, the floor calibration and the checker need from a target's
// client: a connection that takes pipelined 1 kB writes and says which zxid each got. The POLE
// node's client does this natively; ZooKeeper's is adapted (targets/zookeeper/zk-write-client.ts).
import type { Zxid } from '../vocabulary/zxid.js';
import type { TargetName } from '../vocabulary/names.js';
import { PoleClient, PoleError } from '../node/net/client.js';

/** Each target speaks a protocol of its own, named as the target is. */
export type ClientProtocol = TargetName;

export interface WriteIds {
  readonly clientId: string;
  readonly requestId: number;
}

export interface WriteClient {
  /** One write of `data` for the logical path `path` (`${prefix}/${requestId}`). */
  write(path: string, data: Uint8Array, ids: WriteIds): Promise<{ zxid: Zxid }>;
  /**
   * The value of the logical path `path` on the server this client speaks to, by the target's
   * read path `mode` (Target.readModes; default: what its clients get without asking for more);
   * undefined where nothing was written there.
   */
  read(path: string, mode?: string): Promise<{ readonly data: Uint8Array } | undefined>;
  close(): Promise<void>;
}

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/**
 * A failed write in the vocabulary the retry logic speaks (retrying-writer.ts), whichever client
 * failed: DISCONNECTED, TIMEOUT, CLOSED, PROTOCOL, or the server's own reason.
 */
export class WriteFailure extends Error {
  override readonly name = 'WriteFailure';
  constructor(
    readonly code: string,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? code, options);
  }
}

/** The code of a failed write; 'CONNECT' for anything that is not a client's own failure. */
export function failureCode(err: unknown): string {
  return err instanceof PoleError || err instanceof WriteFailure ? err.code : 'CONNECT';
}

export type ConnectWriteClient = (ep: Endpoint, o: { requestTimeoutMs: number }) => Promise<WriteClient>;

/** The POLE node's own client. */
export const connectPoleWriter: ConnectWriteClient = (ep, o) =>
  PoleClient.connect(ep.host, ep.port, { requestTimeoutMs: o.requestTimeoutMs });
