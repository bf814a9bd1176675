// Shared vocabulary of the protocol core. Everything here is plain data so it can cross the
// in-memory simulator, the TCP transport (as JSON or binary) and the event stream unchanged.
import type { NodeId } from '../../vocabulary/names.js';
import type { Zxid } from '../../vocabulary/zxid.js';

/** A server's name, e.g. "p3" (the name is shared: vocabulary/names.ts). */
export type { NodeId };

/** A cluster member as every node knows it: its name and its numeric server id (tie-breaks: higher wins). */
export interface Member {
  readonly id: NodeId;
  readonly sid: number;
}

/**
 * An oracle's score. Always a vector so that combined oracles (a priority list of scores) and
 * single oracles share one shape; each oracle says how two scores compare.
 */
export type Score = readonly number[];

/** One committed (or proposed) state change: a write of `data` at `path` on behalf of a client request. */
export interface Txn {
  readonly zxid: Zxid;
  readonly path: string;
  readonly data: Uint8Array;
  /** Who asked: (clientId, requestId) makes a retried request apply once. */
  readonly clientId: string;
  readonly requestId: number;
}

/** Microsecond-resolution wall-clock milliseconds (e.g. 1732170000123.456). */
export type WallMs = number;
