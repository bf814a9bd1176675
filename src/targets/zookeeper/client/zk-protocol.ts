// The parts of ZooKeeper's client protocol the harness speaks (zookeeper.jute, ZooDefs.OpCode,
// KeeperException.Code in ZooKeeper 3.8): the session handshake, create, delete, exists, getData,
// setData, getChildren, sync, ping and closeSession, a multi of creates, and watch notifications.
// Every message is a frame: an int length, then a header and a record.
//
// Why our own codec: the pure-JS `node-zookeeper-client` has been unmaintained since 2022 and the
// maintained `zookeeper` package builds the C client natively at install time. The harness needs a
// dozen records, pipelined requests, and to know exactly when a request leaves and its reply
// arrives; this file and zk-client.ts are small enough to test completely (unit tests against
// bytes, integration tests against a real ZooKeeper 3.8).
import { JuteReader, JuteWriter } from './jute.js';
import type { Zxid } from '../../../vocabulary/zxid.js';

export const OpCode = {
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getChildren: 8,
  sync: 9,
  ping: 11,
  multi: 14,
  closeSession: -11,
} as const;
export type OpName = keyof typeof OpCode;
/** The type a multi's result carries for an operation that failed or was rolled back. */
const OP_ERROR = -1;

/** Reserved xids of ZooKeeper's ClientCnxn. */
export const XID_NOTIFICATION = -1;
export const XID_PING = -2;

/** KeeperException.Code values the harness can meet, by name. */
export const ErrorCodes: Readonly<Record<number, string>> = {
  0: 'OK',
  [-1]: 'SYSTEMERROR',
  [-2]: 'RUNTIMEINCONSISTENCY',
  [-3]: 'DATAINCONSISTENCY',
  [-4]: 'CONNECTIONLOSS',
  [-5]: 'MARSHALLINGERROR',
  [-6]: 'UNIMPLEMENTED',
  [-7]: 'OPERATIONTIMEOUT',
  [-8]: 'BADARGUMENTS',
  [-12]: 'UNKNOWNSESSION',
  [-100]: 'APIERROR',
  [-101]: 'NONODE',
  [-102]: 'NOAUTH',
  [-103]: 'BADVERSION',
  [-108]: 'NOCHILDRENFOREPHEMERALS',
  [-110]: 'NODEEXISTS',
  [-111]: 'NOTEMPTY',
  [-112]: 'SESSIONEXPIRED',
  [-113]: 'INVALIDCALLBACK',
  [-114]: 'INVALIDACL',
  [-115]: 'AUTHFAILED',
  [-118]: 'SESSIONMOVED',
  [-119]: 'NOTREADONLY',
  [-122]: 'REQUESTTIMEOUT',
  [-127]: 'THROTTLEDOP',
};

export function errorName(code: number): string {
  return ErrorCodes[code] ?? `ERROR${code}`;
}

export const CreateMode = {
  persistent: 0,
  ephemeral: 1,
  persistentSequential: 2,
  ephemeralSequential: 3,
} as const;
export type CreateModeName = keyof typeof CreateMode;

/** ZooDefs.Perms.ALL for world:anyone (ZooDefs.Ids.OPEN_ACL_UNSAFE). */
const PERMS_ALL = 31;

export interface Stat {
  readonly czxid: Zxid;
  readonly mzxid: Zxid;
  readonly ctime: bigint;
  readonly mtime: bigint;
  readonly version: number;
  readonly cversion: number;
  readonly aversion: number;
  readonly ephemeralOwner: bigint;
  readonly dataLength: number;
  readonly numChildren: number;
  readonly pzxid: Zxid;
}

/** A 64-bit zxid as (epoch, counter): epoch in the high 32 bits. */
export function zxidOf(v: bigint): Zxid {
  const u = BigInt.asUintN(64, v);
  return { epoch: Number(u >> 32n), counter: Number(u & 0xffff_ffffn) };
}

export function zxidToLong(z: Zxid): bigint {
  return (BigInt(z.epoch) << 32n) | BigInt(z.counter);
}

// --- session handshake -------------------------------------------------------------------------

export interface ConnectRequest {
  readonly lastZxidSeen: bigint;
  readonly timeoutMs: number;
  readonly sessionId: bigint;
  readonly passwd: Uint8Array;
}

export function encodeConnectRequest(r: ConnectRequest): Buffer {
  return new JuteWriter(48)
    .int(0) // protocolVersion
    .long(r.lastZxidSeen)
    .int(r.timeoutMs)
    .long(r.sessionId)
    .buffer(r.passwd)
    .bool(false) // readOnly: this client never accepts a read-only server
    .frame();
}

export interface ConnectResponse {
  /** Negotiated session timeout; 0 when the server refused the session (expired). */
  readonly timeoutMs: number;
  readonly sessionId: bigint;
  readonly passwd: Buffer;
}

export function decodeConnectResponse(body: Buffer): ConnectResponse {
  const r = new JuteReader(body);
  r.int(); // protocolVersion
  const timeoutMs = r.int();
  const sessionId = r.long();
  const passwd = r.buffer() ?? Buffer.alloc(0);
  // A trailing readOnly flag follows from servers of 3.4 on; it is not needed here.
  return { timeoutMs, sessionId, passwd: Buffer.from(passwd) };
}

// --- requests ----------------------------------------------------------------------------------

export interface CreateOp {
  readonly path: string;
  readonly data: Uint8Array;
  readonly mode: CreateModeName;
}

export type Request =
  | ({ readonly op: 'create' } & CreateOp)
  | { readonly op: 'multi'; readonly creates: readonly CreateOp[] }
  | { readonly op: 'delete'; readonly path: string; readonly version: number }
  | { readonly op: 'exists'; readonly path: string; readonly watch: boolean }
  | { readonly op: 'getData'; readonly path: string; readonly watch: boolean }
  | { readonly op: 'setData'; readonly path: string; readonly data: Uint8Array; readonly version: number }
  | { readonly op: 'getChildren'; readonly path: string; readonly watch: boolean }
  | { readonly op: 'sync'; readonly path: string }
  | { readonly op: 'ping' }
  | { readonly op: 'closeSession' };

export function encodeRequest(xid: number, r: Request): Buffer {
  const w = new JuteWriter('data' in r ? r.data.length + 64 : 64).int(xid).int(OpCode[r.op]);
  switch (r.op) {
    case 'create':
      encodeCreate(w, r);
      break;
    case 'multi':
      // MultiOperationRecord: each operation behind a MultiHeader (type, done = false, err = -1),
      // then a closing header (-1, true, -1).
      for (const c of r.creates) encodeCreate(w.int(OpCode.create).bool(false).int(-1), c);
      w.int(-1).bool(true).int(-1);
      break;
    case 'delete':
      w.ustring(r.path).int(r.version);
      break;
    case 'exists':
    case 'getData':
    case 'getChildren':
      w.ustring(r.path).bool(r.watch);
      break;
    case 'setData':
      w.ustring(r.path).buffer(r.data).int(r.version);
      break;
    case 'sync':
      w.ustring(r.path);
      break;
    case 'ping':
    case 'closeSession':
      break;
  }
  return w.frame();
}

/** A CreateRequest: path, data, one ACL (world:anyone, all permissions), flags. */
function encodeCreate(w: JuteWriter, c: CreateOp): void {
  w.ustring(c.path).buffer(c.data);
  w.int(1).int(PERMS_ALL).ustring('world').ustring('anyone');
  w.int(CreateMode[c.mode]);
}

// --- replies -----------------------------------------------------------------------------------

export interface ReplyHeader {
  readonly xid: number;
  readonly zxid: bigint;
  readonly err: number;
}

export function decodeReplyHeader(r: JuteReader): ReplyHeader {
  return { xid: r.int(), zxid: r.long(), err: r.int() };
}

export function decodeStat(r: JuteReader): Stat {
  return {
    czxid: zxidOf(r.long()),
    mzxid: zxidOf(r.long()),
    ctime: r.long(),
    mtime: r.long(),
    version: r.int(),
    cversion: r.int(),
    aversion: r.int(),
    ephemeralOwner: r.long(),
    dataLength: r.int(),
    numChildren: r.int(),
    pzxid: zxidOf(r.long()),
  };
}

export type ReplyBody =
  | { readonly op: 'create'; readonly path: string }
  | { readonly op: 'delete' | 'ping' | 'closeSession' }
  | { readonly op: 'exists' | 'setData'; readonly stat: Stat }
  | { readonly op: 'getData'; readonly data: Buffer; readonly stat: Stat }
  | { readonly op: 'getChildren'; readonly children: string[] }
  | { readonly op: 'sync'; readonly path: string }
  | { readonly op: 'multi'; readonly results: readonly MultiResult[] };

/** Per create of a multi, in order: its path, or the code it failed (or was rolled back) with. */
export type MultiResult = { readonly path: string } | { readonly err: number };

/** The body of a successful reply to a request of `op` (the header already read). */
export function decodeReplyBody(op: OpName, r: JuteReader): ReplyBody {
  switch (op) {
    case 'create':
      return { op, path: r.ustring() ?? '' };
    case 'sync':
      return { op, path: r.ustring() ?? '' };
    case 'exists':
    case 'setData':
      return { op, stat: decodeStat(r) };
    case 'getData': {
      const data = r.buffer() ?? Buffer.alloc(0);
      return { op, data: Buffer.from(data), stat: decodeStat(r) };
    }
    case 'getChildren': {
      const n = r.int();
      const children: string[] = [];
      for (let i = 0; i < n; i++) children.push(r.ustring() ?? '');
      return { op, children };
    }
    case 'multi':
      return { op, results: decodeMultiResults(r) };
    case 'delete':
    case 'ping':
    case 'closeSession':
      return { op };
  }
}

/**
 * A MultiResponse of creates: per operation a MultiHeader (type, done, err) and its result (a
 * CreateResponse's path, or an ErrorResult's code), until the header that says done. A failed
 * multi applies nothing: the operation that failed carries its code, the others OK (0) before it
 * and RUNTIMEINCONSISTENCY after it.
 */
function decodeMultiResults(r: JuteReader): MultiResult[] {
  const results: MultiResult[] = [];
  for (;;) {
    const type = r.int();
    const done = r.bool();
    r.int(); // the header's err, repeated in an ErrorResult's body
    if (done) return results;
    if (type === OpCode.create) results.push({ path: r.ustring() ?? '' });
    else if (type === OP_ERROR) results.push({ err: r.int() });
    else throw new Error(`a multi result of type ${type}, where only creates were sent`);
  }
}

/** A watch notification (xid -1): Watcher.Event.EventType and KeeperState numbers, and the path. */
export interface WatcherEvent {
  readonly type: number;
  readonly state: number;
  readonly path: string;
}

export function decodeWatcherEvent(r: JuteReader): WatcherEvent {
  return { type: r.int(), state: r.int(), path: r.ustring() ?? '' };
}
