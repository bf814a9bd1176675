// The first frames on a peer connection. The dialer (always the higher sid) sends HELLO naming
// itself, the peer it means to reach and the membership it was configured with; the acceptor
// answers WELCOME (naming itself, so a dialer that went through a relay knows it reached the
// right node) or REJECT with a reason, then closes. Only after this exchange is the link up.
// JSON is fine here: it is one small frame per connection.
import type { Member, NodeId } from '../core/types.js';
import { BinaryWriter, DecodeError } from '../../util/wire/binary-io.js';

export const HANDSHAKE_VERSION = 1;
/** Frame limit until the handshake is done: a stranger must not make us allocate much. */
export const HANDSHAKE_MAX_FRAME = 64 * 1024;

export type Handshake =
  | {
      readonly t: 'HELLO';
      readonly v: number;
      readonly id: NodeId;
      readonly sid: number;
      /** The node the dialer means to reach. */
      readonly to: NodeId;
      /** The dialer's whole membership, sorted by sid, as [id, sid]. */
      readonly members: ReadonlyArray<readonly [NodeId, number]>;
    }
  | { readonly t: 'WELCOME'; readonly v: number; readonly id: NodeId; readonly sid: number }
  | { readonly t: 'REJECT'; readonly v: number; readonly reason: string };

export function encodeHandshake(h: Handshake): Buffer {
  const json = JSON.stringify(h);
  return new BinaryWriter(json.length * 3, true).raw(Buffer.from(json, 'utf8')).finishFrame();
}

export function decodeHandshake(payload: Buffer): Handshake {
  let h: unknown;
  try {
    h = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new DecodeError('handshake is not JSON');
  }
  if (typeof h !== 'object' || h === null) throw new DecodeError('handshake is not an object');
  const o = h as Record<string, unknown>;
  if (o.v !== HANDSHAKE_VERSION) throw new DecodeError(`unsupported handshake version ${String(o.v)}`);
  switch (o.t) {
    case 'HELLO':
      if (
        typeof o.id === 'string' &&
        typeof o.sid === 'number' &&
        typeof o.to === 'string' &&
        Array.isArray(o.members) &&
        o.members.every(
          (m) => Array.isArray(m) && m.length === 2 && typeof m[0] === 'string' && typeof m[1] === 'number',
        )
      ) {
        return h as Handshake;
      }
      break;
    case 'WELCOME':
      if (typeof o.id === 'string' && typeof o.sid === 'number') return h as Handshake;
      break;
    case 'REJECT':
      if (typeof o.reason === 'string') return h as Handshake;
      break;
  }
  throw new DecodeError(`malformed handshake ${JSON.stringify(o.t)}`);
}

/** The membership in the canonical form HELLO carries. */
export function membershipOf(members: Iterable<Member>): Array<[NodeId, number]> {
  return [...members].map((m): [NodeId, number] => [m.id, m.sid]).sort((a, b) => a[1] - b[1]);
}

/**
 * Why the acceptor `self` must refuse this HELLO, or undefined to accept it.
 * `members` is the acceptor's own membership (itself included) in canonical form.
 */
export function helloProblem(
  hello: Extract<Handshake, { t: 'HELLO' }>,
  self: Member,
  members: ReadonlyArray<readonly [NodeId, number]>,
): string | undefined {
  if (hello.to !== self.id) return `dialed ${hello.to} but reached ${self.id}`;
  const known = members.find(([id]) => id === hello.id);
  if (!known) return `unknown node ${hello.id}`;
  if (known[1] !== hello.sid) return `${hello.id} claims sid ${hello.sid}, configured ${known[1]}`;
  if (hello.sid <= self.sid)
    return `${hello.id} (sid ${hello.sid}) must not dial ${self.id} (sid ${self.sid})`;
  if (JSON.stringify(hello.members) !== JSON.stringify(members)) return 'membership differs';
  return undefined;
}
