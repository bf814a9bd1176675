import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { Member, NodeId } from '../../src/node/core/types.js';
import type { PeerMessage } from '../../src/node/core/zab-messages.js';
import { PeerNetwork } from '../../src/node/net/peer-network.js';
import type { PeerAddress } from '../../src/node/net/peer-network.js';
import { FrameDecoder } from '../../src/util/wire/frame-decoder.js';
import { decodeHandshake, encodeHandshake } from '../../src/node/net/peer-handshake.js';

const HOST = '127.0.0.1';
const members: Member[] = [
  { id: 'p1', sid: 1 },
  { id: 'p2', sid: 2 },
  { id: 'p3', sid: 3 },
];

async function waitFor(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

interface Node {
  net: PeerNetwork;
  connected: NodeId[];
  disconnected: NodeId[];
  received: Map<NodeId, PeerMessage[]>;
  linkErrors: string[];
}

/** Starts node `self`; `addr` says where it must dial each peer (only lower sids are dialed). */
async function startNode(
  self: Member,
  addr: (peer: Member) => { host: string; port: number },
  port = 0,
): Promise<Node> {
  const node: Node = {
    net: undefined as unknown as PeerNetwork,
    connected: [],
    disconnected: [],
    received: new Map(),
    linkErrors: [],
  };
  const peers: PeerAddress[] = members
    .filter((m) => m.id !== self.id)
    .map((m) => ({ member: m, ...addr(m) }));
  node.net = new PeerNetwork({
    self,
    listenHost: HOST,
    listenPort: port,
    peers,
    reconnectMs: 20,
    onMessage: (from, msg) => {
      const list = node.received.get(from) ?? [];
      list.push(msg);
      node.received.set(from, list);
    },
    onConnected: (p) => node.connected.push(p),
    onDisconnected: (p) => node.disconnected.push(p),
    onLinkError: (e) => node.linkErrors.push(e.reason),
  });
  await node.net.start();
  return node;
}

/** A dumb TCP forwarder: proves dials go to the configured address, not the listen address. */
async function forwarder(
  targetPort: number,
): Promise<{ port: number; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(targetPort, HOST);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        inbound.destroy();
        outbound.destroy();
        sockets.delete(s);
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(0, HOST, r));
  const a = server.address();
  return { port: typeof a === 'object' && a ? a.port : 0, server, sockets };
}

const count = (list: readonly string[], x: string) => list.filter((v) => v === x).length;

/** Starts p1, p2, p3 in sid order: each dials only lower sids, whose ports are known by then. p3 reaches p1 through a forwarder. */
async function startMesh() {
  const ports = new Map<NodeId, number>();
  const fwd: { port: number; server: Server; sockets: Set<Socket> }[] = [];
  const nodes: Node[] = [];
  for (const m of members) {
    const node = await startNode(m, (peer) => {
      if (m.id === 'p3' && peer.id === 'p1') return { host: HOST, port: (fwd[0] as { port: number }).port };
      return { host: HOST, port: ports.get(peer.id) ?? 0 };
    });
    ports.set(m.id, node.net.port);
    if (m.id === 'p1') fwd.push(await forwarder(node.net.port));
    nodes.push(node);
  }
  const [n1, n2, n3] = nodes as [Node, Node, Node];
  await waitFor('full mesh', () => nodes.every((n) => n.net.connectedPeers().length === 2));
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.net.close()));
    for (const f of fwd) {
      for (const s of f.sockets) s.destroy();
      await new Promise((r) => f.server.close(r));
    }
  };
  return { n1, n2, n3, nodes, ports, stop };
}

test('three nodes form a full mesh with one connection per pair and deliver in order', async () => {
  const { n1, n2, n3, nodes, stop } = await startMesh();
  try {
    // Exactly one TCP connection per pair: the higher sid dials, the lower accepts.
    assert.equal(n1.net.stats().connectionsAccepted, 2);
    assert.equal(n1.net.stats().connectionsDialed, 0);
    assert.equal(n2.net.stats().connectionsAccepted, 1);
    assert.equal(n2.net.stats().connectionsDialed, 1);
    assert.equal(n3.net.stats().connectionsAccepted, 0);
    assert.equal(n3.net.stats().connectionsDialed, 2);
    for (const n of nodes) {
      assert.equal(n.connected.length, 2, 'onConnected once per peer');
      assert.deepEqual(n.disconnected, []);
    }

    const N = 3000;
    const data = new Uint8Array(1024).fill(5);
    for (let i = 1; i <= N; i++) {
      for (const [k, from] of nodes.entries()) {
        for (const to of members) {
          if (to.id === members[k]?.id) continue;
          const msg: PeerMessage =
            i % 10 === 0
              ? {
                  type: 'PROPOSAL',
                  epoch: 1,
                  commitZxid: { epoch: 1, counter: i - 1 },
                  txns: [{ zxid: { epoch: 1, counter: i }, path: '/x', data, clientId: 'c', requestId: i }],
                }
              : { type: 'COMMIT', epoch: 1, zxid: { epoch: 1, counter: i } };
          assert.equal(from.net.send(to.id, msg), true);
        }
      }
      // Spread the sends over several loop turns so that coalescing and reading interleave.
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor('all messages', () =>
      nodes.every((n) => [...n.received.values()].reduce((s, l) => s + l.length, 0) === 2 * N),
    );
    for (const n of nodes) {
      assert.equal(n.received.size, 2);
      for (const [from, list] of n.received) {
        const counters = list.map((m) =>
          m.type === 'COMMIT' ? m.zxid.counter : m.type === 'PROPOSAL' ? m.txns[0]?.zxid.counter : -1,
        );
        assert.deepEqual(
          counters,
          Array.from({ length: N }, (_, i) => i + 1),
          `order from ${from}`,
        );
        const p = list[9];
        assert.ok(p?.type === 'PROPOSAL' && p.txns[0]?.data.length === 1024);
      }
      const s = n.net.stats();
      assert.equal(s.framesIn, 2 * N + 2, 'messages plus one handshake frame per link');
      assert.ok(s.bytesIn > 2 * (N / 10) * 1024);
      assert.ok(s.bytesOut > 2 * (N / 10) * 1024);
      assert.equal(s.framesOut, 2 * N + 2);
    }
    assert.equal(n1.net.send('p1', { type: 'PONG', epoch: 1 }), false, 'no link to self');
    assert.equal(n1.net.send('nobody', { type: 'PONG', epoch: 1 }), false);
  } finally {
    await stop();
  }
});

test('a closed peer is reported down exactly once and comes back after a restart', async () => {
  const { n1, n2, n3, ports, stop } = await startMesh();
  let n2b: Node | undefined;
  try {
    await n2.net.close();
    await waitFor('p2 down at p1 and p3', () => !n1.net.isConnected('p2') && !n3.net.isConnected('p2'));
    assert.equal(count(n1.disconnected, 'p2'), 1);
    assert.equal(count(n3.disconnected, 'p2'), 1);
    assert.equal(n3.net.send('p2', { type: 'PONG', epoch: 1 }), false);
    assert.deepEqual(n2.disconnected, [], 'no callbacks after close()');
    // p1 and p3 stay linked to each other.
    assert.equal(n1.net.isConnected('p3'), true);

    // Restart p2 on its old port (p3 keeps redialing it there; p2 dials p1 again).
    n2b = await startNode(
      members[1] as Member,
      (peer) => ({ host: HOST, port: ports.get(peer.id) ?? 0 }),
      ports.get('p2'),
    );
    const restarted = n2b;
    await waitFor(
      'p2 back',
      () =>
        n1.net.isConnected('p2') && n3.net.isConnected('p2') && restarted.net.connectedPeers().length === 2,
    );
    assert.equal(count(n1.connected, 'p2'), 2);
    assert.equal(count(n3.connected, 'p2'), 2);
    assert.equal(count(n1.disconnected, 'p2'), 1);
    assert.equal(count(n3.disconnected, 'p2'), 1);

    // The new links carry messages both ways.
    n3.net.send('p2', { type: 'PING', epoch: 2, commitZxid: { epoch: 2, counter: 0 } });
    restarted.net.send('p1', { type: 'PONG', epoch: 2 });
    await waitFor(
      'messages on the new links',
      () => restarted.received.has('p3') && (n1.received.get('p2')?.length ?? 0) > 0,
    );
    assert.deepEqual(n1.received.get('p2'), [{ type: 'PONG', epoch: 2 }]);
  } finally {
    await n2b?.net.close();
    await stop();
  }
});

/** Sends one handshake frame on a raw connection; resolves with the reply (if any) once closed. */
async function rawHandshake(port: number, hello: Buffer): Promise<{ reply: unknown; closed: boolean }> {
  const s = connect(port, HOST);
  const d = new FrameDecoder(1 << 16);
  let reply: unknown;
  s.on('data', (c: Buffer) => d.push(c, (f) => (reply ??= decodeHandshake(f))));
  s.on('error', () => undefined);
  s.write(hello);
  await new Promise<void>((r) => s.on('close', () => r()));
  return { reply, closed: true };
}

test('handshakes from unknown, misconfigured or wrong-direction dialers are refused', async () => {
  const n1 = await startNode(members[0] as Member, () => ({ host: HOST, port: 0 }));
  try {
    const membership: Array<[string, number]> = members.map((m) => [m.id, m.sid]);
    const cases: Array<[string, Buffer]> = [
      ['unknown', encodeHandshake({ t: 'HELLO', v: 1, id: 'p9', sid: 9, to: 'p1', members: membership })],
      ['wrong sid', encodeHandshake({ t: 'HELLO', v: 1, id: 'p2', sid: 7, to: 'p1', members: membership })],
      [
        'wrong target',
        encodeHandshake({ t: 'HELLO', v: 1, id: 'p2', sid: 2, to: 'p3', members: membership }),
      ],
      [
        'membership',
        encodeHandshake({ t: 'HELLO', v: 1, id: 'p2', sid: 2, to: 'p1', members: membership.slice(0, 2) }),
      ],
    ];
    for (const [what, hello] of cases) {
      const { reply } = await rawHandshake(n1.net.port, hello);
      assert.equal((reply as { t?: string } | undefined)?.t, 'REJECT', what);
    }
    // Garbage instead of a handshake: closed without a reply.
    const garbage = await rawHandshake(n1.net.port, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    assert.equal(garbage.reply, undefined);
    assert.deepEqual(n1.connected, []);
    assert.equal(n1.linkErrors.length, cases.length + 1);
  } finally {
    await n1.net.close();
  }
});

test('a dialer that reconnects replaces its old link: down once, then up', async () => {
  const n1 = await startNode(members[0] as Member, () => ({ host: HOST, port: 0 }));
  const membership: Array<[string, number]> = members.map((m) => [m.id, m.sid]);
  const hello = encodeHandshake({ t: 'HELLO', v: 1, id: 'p3', sid: 3, to: 'p1', members: membership });
  const open = async () => {
    const s = connect(n1.net.port, HOST);
    s.on('error', () => undefined);
    s.resume(); // read (and drop) the WELCOME, so the end of the stream is seen
    s.write(hello);
    return s;
  };
  const first = await open();
  try {
    await waitFor('first link', () => n1.connected.length === 1);
    // The old socket stays open (a half-open link the acceptor has not noticed yet).
    const second = await open();
    await waitFor('second link', () => n1.connected.length === 2);
    assert.deepEqual(n1.disconnected, ['p3']);
    assert.equal(n1.net.isConnected('p3'), true);
    await new Promise<void>((r) => (first.destroyed ? r() : first.on('close', () => r())));
    second.destroy();
    await waitFor('second link down', () => n1.disconnected.length === 2);
    assert.equal(n1.net.isConnected('p3'), false);
  } finally {
    first.destroy();
    await n1.net.close();
  }
});
