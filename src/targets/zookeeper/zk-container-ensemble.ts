// A ZooKeeper ensemble as containers of the docker runtime: Debian's ZooKeeper in the
// pole-bench-zookeeper image, one container per member in its holder's network namespace, so a
// killed member keeps its address. Every member binds ZooKeeper's usual ports on its own address;
// the files (zoo.cfg, myid, hosts file, log4j.properties) are the process ensemble's
// (zk-process-ensemble.ts), written to the mounted config dir. Across data centers each member
// reaches a peer at an address of the harness that only the relay route of that ordered pair
// listens on, with the peer's own port numbers: ZooKeeper's election dials back the address a
// peer announces, so the port numbers cannot differ (the process ensemble explains why). With
// netem the members reach each other directly and the holders' qdiscs add the delay.
//
// On the swarm (peerRoutes by-source) the relay is one task with one address: every member keeps
// ports of its own (zkPortsByIndex), the server lines name the members by their names on the
// run's overlay, and each container's /etc/hosts points the names of its peers abroad at the
// relay, which tells the members apart by their addresses. Inside a data center, the overlay's
// DNS finds a peer, also after a restart at a new address.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerPlan, ContainerStartOptions } from '../target.js';
import { DEBIAN_ZK_JARS } from './zk-install.js';
import { zkLogTranslator } from './zk-log-events.js';
import {
  RELAY_CONNECT_RETRY_MS,
  START_TIMEOUT_MS,
  planZkMembers,
  startOrder,
  zkJvmArgs,
  type ZkSlot,
} from './zk-process-ensemble.js';
import { LOG4J_PROPERTIES, extraConfigLines } from './zoo-cfg.js';

/** ZooKeeper's customary ports, the same in every member's namespace (per-pair routes). */
export const ZK_CONTAINER_PORTS = { client: 2181, quorum: 2888, election: 3888 } as const;

/**
 * A member's ports where the relay tells sources apart by address (by-source routes): its
 * listener for a peer's port then stands for that peer alone, so no two members share a number;
 * ZooKeeper's own, moved up by the member's place in the topology.
 */
export function zkPortsByIndex(i: number): { client: number; quorum: number; election: number } {
  if (!Number.isInteger(i) || i < 0 || i > 999) throw new Error(`no ZooKeeper ports for member #${i}`);
  return {
    client: ZK_CONTAINER_PORTS.client,
    quorum: ZK_CONTAINER_PORTS.quorum + i,
    election: ZK_CONTAINER_PORTS.election + i,
  };
}

export async function planZkContainers(o: ContainerStartOptions): Promise<ContainerPlan> {
  const t = o.topology;
  const routes = o.peerRoutes;
  const bySource = routes.kind === 'by-source';
  const slots: ZkSlot[] = t.nodes.map((n, i) => {
    const ports = bySource ? zkPortsByIndex(i) : ZK_CONTAINER_PORTS;
    return {
      id: n.id,
      sid: n.sid,
      clientPort: ports.client,
      quorumPort: ports.quorum,
      electionPort: ports.election,
    };
  });
  const addressOf = (id: string): string => {
    const a = o.addresses.get(id);
    if (a === undefined) throw new Error(`no address for ${id}`);
    return a;
  };
  const dial = await o.shape(
    slots.map((s) => ({
      id: s.id,
      sid: s.sid,
      peer: { host: addressOf(s.id), port: s.quorumPort },
      more: { election: { host: addressOf(s.id), port: s.electionPort } },
    })),
    {
      direction: 'both',
      listenAt: (from, to, _port, target) =>
        routes.kind === 'per-pair'
          ? { host: routes.host(from, to), port: target.port }
          : { port: target.port, acceptFrom: addressOf(from) },
      retryConnectMs: RELAY_CONNECT_RETRY_MS,
    },
  );
  const plan = planZkMembers(t, slots, {
    dial,
    dirOf: () => '/data',
    fsync: o.fsync,
    // By source: every port on every address of the member's container (its name resolves
    // to the relay for its peers abroad, and the harness reaches its client port through the
    // node's published port, not the run's network).
    extra: [...(bySource ? ['quorumListenOnAllIPs=true'] : []), ...extraConfigLines()],
    selfHost: bySource ? () => '0.0.0.0' : addressOf,
    ...(bySource ? { nameOf: (p: ZkSlot) => addressOf(p.id) } : {}),
  });
  await writeFile(join(o.configDir, 'log4j.properties'), LOG4J_PROPERTIES);
  for (const m of plan) {
    await writeFile(join(o.configDir, `${m.id}.cfg`), m.zooCfg);
    if (!bySource) await writeFile(join(o.configDir, `${m.id}.hosts`), m.hosts);
    await writeFile(join(o.configDir, `${m.id}.myid`), `${m.sid}\n`);
  }
  const memberAtPort = new Map(slots.map((s) => [s.quorumPort, s.id]));
  const order = startOrder(t.nodes, t.cluster.initialLeader);
  return {
    image: 'zookeeper',
    members: plan.map((m) => {
      const java = zkJvmArgs(
        DEBIAN_ZK_JARS.join(':'),
        '/config/log4j.properties',
        `/config/${m.id}.cfg`,
        bySource ? null : `/config/${m.id}.hosts`,
      );
      // myid lives in the data dir, which is the container's own (it survives a kill and restart
      // of the container, as a crashed machine's disk does); the config dir is read-only.
      const script = `mkdir -p /data && cp /config/${m.id}.myid /data/myid && exec java "$@"`;
      // A peer abroad by name at the relay; inside the data center, the network's DNS.
      const abroad = t.nodes.filter((n) => n.datacenter !== t.node(m.id).datacenter);
      return {
        id: m.id,
        cmd: ['sh', '-c', script, 'zookeeper', ...java],
        translate: zkLogTranslator({
          memberId: m.id,
          memberOfSid: (sid) => plan.find((p) => p.sid === sid)?.id,
          // By source, a member's quorum port is its own (zkPortsByIndex); the address before it
          // is a task's, unknown here, or the relay's.
          memberAtQuorumAddress: bySource
            ? (a) => memberAtPort.get(Number(a.slice(a.lastIndexOf(':') + 1)))
            : (a) => m.quorumAddresses.get(a),
        }),
        ...(bySource ? { etcHosts: abroad.map((n) => `${m.reach.get(n.id)!} ${addressOf(n.id)}`) } : {}),
      };
    }),
    clientPort: ZK_CONTAINER_PORTS.client,
    startOrder: {
      first: order.first,
      then: order.then,
      ...(order.then.length > 0 ? { after: t.cluster.initialLeader as string } : {}),
    },
    startTimeoutMs: START_TIMEOUT_MS,
  };
}
