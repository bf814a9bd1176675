// The client wire format. Every message is one frame ([u32 BE length][payload]).
//
// Request payload:  u8 op, u32 tag, then by op
//   WRITE (1):  str clientId, f64 requestId (a safe integer), str path, bytes data
//   READ (2):   str path
//   STATUS (3): nothing
// Reply payload:    u32 tag (echoed), u8 status, then when status is OK
//   WRITE:  u32 epoch, u32 counter (the txn's zxid)
//   READ:   u32 epoch, u32 counter, u32 version, bytes data
//   STATUS: UTF-8 JSON up to the end of the frame
// str and bytes are a u32 length then the bytes. A client picks tags (never 0) and may have
// many requests in flight; replies can come back in any order. Tag 0 in a BAD_FRAME reply
// means the server could not tell which request was bad; it closes the connection after it.
import type { WriteErrorCode } from '../core/core-types.js';
import type { Zxid } from '../../vocabulary/zxid.js';
import { BinaryReader, BinaryWriter, DecodeError } from '../../util/wire/binary-io.js';

export { DecodeError };

export const ClientOp = { WRITE: 1, READ: 2, STATUS: 3 } as const;
export type ClientOpCode = (typeof ClientOp)[keyof typeof ClientOp];

/**
 * Reply status codes: WriteErrorCode's names plus OK, NOT_FOUND, and NOT_SERVING (a READ to a
 * member not synced with a leader). Part of the wire protocol.
 */
export const ClientStatus = {
  OK: 0,
  NOT_LEADER_YET: 1,
  NO_QUORUM: 2,
  TOO_LARGE: 3,
  BAD_FRAME: 4,
  LEADER_LOST: 5,
  NOT_FOUND: 6,
  NOT_SERVING: 7,
} as const satisfies Record<WriteErrorCode | 'OK' | 'NOT_FOUND' | 'NOT_SERVING', number>;

export type ClientStatusName = keyof typeof ClientStatus;
export type ClientErrorName = Exclude<ClientStatusName, 'OK'>;

const STATUS_NAMES = new Map<number, ClientStatusName>(
  Object.entries(ClientStatus).map(([name, code]) => [code, name as ClientStatusName]),
);

export function statusName(code: number): ClientStatusName | undefined {
  return STATUS_NAMES.get(code);
}

export interface WriteRequest {
  readonly op: typeof ClientOp.WRITE;
  readonly tag: number;
  readonly clientId: string;
  readonly requestId: number;
  readonly path: string;
  readonly data: Uint8Array;
}
export interface ReadRequest {
  readonly op: typeof ClientOp.READ;
  readonly tag: number;
  readonly path: string;
}
export interface StatusRequest {
  readonly op: typeof ClientOp.STATUS;
  readonly tag: number;
}
export type ClientRequest = WriteRequest | ReadRequest | StatusRequest;

/** A key's committed value as a read returns it. */
export interface ReadResult {
  /** The zxid of the txn that wrote this value. */
  readonly zxid: Zxid;
  readonly version: number;
  readonly data: Uint8Array;
}

// --- requests ------------------------------------------------------------------------------

/** The whole request frame, length prefix included. */
export function encodeRequest(req: ClientRequest): Buffer {
  switch (req.op) {
    case ClientOp.WRITE:
      return new BinaryWriter(32 + req.data.length + 3 * (req.clientId.length + req.path.length), true)
        .u8(req.op)
        .u32(req.tag)
        .str(req.clientId)
        .f64(req.requestId)
        .str(req.path)
        .bytes(req.data)
        .finishFrame();
    case ClientOp.READ:
      return new BinaryWriter(16 + 3 * req.path.length, true)
        .u8(req.op)
        .u32(req.tag)
        .str(req.path)
        .finishFrame();
    case ClientOp.STATUS:
      return new BinaryWriter(5, true).u8(req.op).u32(req.tag).finishFrame();
  }
}

export type RequestDecodeResult =
  | { readonly ok: true; readonly req: ClientRequest }
  /** `tag` is 0 when the frame was too short to carry one. TOO_LARGE leaves the stream usable. */
  | {
      readonly ok: false;
      readonly tag: number;
      readonly code: 'BAD_FRAME' | 'TOO_LARGE';
      readonly reason: string;
    };

/** Decodes a request payload. Never throws: a bad frame is a result the server answers. */
export function decodeRequest(payload: Buffer, maxWriteBytes: number): RequestDecodeResult {
  const r = new BinaryReader(payload);
  let tag = 0;
  try {
    const op = r.u8();
    tag = r.u32();
    let req: ClientRequest;
    switch (op) {
      case ClientOp.WRITE: {
        const clientId = r.str();
        const requestId = r.f64();
        if (!Number.isSafeInteger(requestId))
          throw new DecodeError(`requestId ${requestId} is not a safe integer`);
        const path = r.str();
        const length = r.u32();
        if (length > r.remaining) throw new DecodeError(`data length ${length} exceeds the frame`);
        if (length > maxWriteBytes) {
          return {
            ok: false,
            tag,
            code: 'TOO_LARGE',
            reason: `${length} bytes of data, limit ${maxWriteBytes}`,
          };
        }
        req = { op, tag, clientId, requestId, path, data: r.raw(length) };
        break;
      }
      case ClientOp.READ:
        req = { op, tag, path: r.str() };
        break;
      case ClientOp.STATUS:
        req = { op, tag };
        break;
      default:
        throw new DecodeError(`unknown op ${op}`);
    }
    r.end();
    return { ok: true, req };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return { ok: false, tag, code: 'BAD_FRAME', reason: e.message };
  }
}

// --- replies -------------------------------------------------------------------------------

export function encodeWriteOk(tag: number, zxid: Zxid): Buffer {
  return new BinaryWriter(13, true)
    .u32(tag)
    .u8(ClientStatus.OK)
    .u32(zxid.epoch)
    .u32(zxid.counter)
    .finishFrame();
}

export function encodeReadOk(tag: number, result: ReadResult): Buffer {
  return new BinaryWriter(21 + result.data.length, true)
    .u32(tag)
    .u8(ClientStatus.OK)
    .u32(result.zxid.epoch)
    .u32(result.zxid.counter)
    .u32(result.version)
    .bytes(result.data)
    .finishFrame();
}

export function encodeStatusOk(tag: number, status: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(status) ?? 'null', 'utf8');
  return new BinaryWriter(5 + json.length, true).u32(tag).u8(ClientStatus.OK).raw(json).finishFrame();
}

export function encodeErrorReply(tag: number, code: ClientErrorName): Buffer {
  return new BinaryWriter(5, true).u32(tag).u8(ClientStatus[code]).finishFrame();
}

export type ClientReply =
  | { readonly tag: number; readonly ok: true; readonly op: typeof ClientOp.WRITE; readonly zxid: Zxid }
  | {
      readonly tag: number;
      readonly ok: true;
      readonly op: typeof ClientOp.READ;
      readonly result: ReadResult;
    }
  | { readonly tag: number; readonly ok: true; readonly op: typeof ClientOp.STATUS; readonly status: unknown }
  | { readonly tag: number; readonly ok: false; readonly code: ClientErrorName };

/** The tag of a reply payload (to find which request, hence which op, it answers). */
export function replyTag(payload: Buffer): number {
  if (payload.length < 5) throw new DecodeError(`reply of ${payload.length} bytes is too short`);
  return payload.readUInt32BE(0);
}

/** Decodes a reply to a request of kind `op`; throws DecodeError when malformed. */
export function decodeReply(payload: Buffer, op: ClientOpCode): ClientReply {
  const r = new BinaryReader(payload);
  const tag = r.u32();
  const code = r.u8();
  const name = statusName(code);
  if (name === undefined) throw new DecodeError(`unknown status code ${code}`);
  if (name !== 'OK') {
    r.end();
    return { tag, ok: false, code: name };
  }
  let reply: ClientReply;
  switch (op) {
    case ClientOp.WRITE:
      reply = { tag, ok: true, op, zxid: { epoch: r.u32(), counter: r.u32() } };
      break;
    case ClientOp.READ: {
      const zxid = { epoch: r.u32(), counter: r.u32() };
      const version = r.u32();
      reply = { tag, ok: true, op, result: { zxid, version, data: r.bytes() } };
      break;
    }
    case ClientOp.STATUS: {
      const text = r.rest().toString('utf8');
      try {
        reply = { tag, ok: true, op, status: JSON.parse(text) as unknown };
      } catch {
        throw new DecodeError('status reply is not JSON');
      }
      break;
    }
  }
  r.end();
  return reply;
}
