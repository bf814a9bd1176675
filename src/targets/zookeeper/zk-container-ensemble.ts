// A ZooKeeper ensemble as containers of the docker runtime: Debian's ZooKeeper in the
// pole-bench-zookeeper image, one container per member in its holder's network namespace, so a
// killed member keeps its address. Every member binds ZooKeeper's usual ports on its own address;
// the files (zoo.cfg, myid, hosts file, log4j.properties) are the process ensemble's
// (zk-process-ensemble.ts), written to the mounted config dir. Across data centers each member
// reaches a peer at an address of the harness that only the relay route of that ordered pair
// listens on, with the peer's own port numbers: ZooKeeper's election dials back the address a
// peer announces, so the port numbers cannot differ (the process ensemble explains why). With
// netem the members reach each other directly and the holders' qdiscs add the delay.
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

/** ZooKeeper's customary ports, the same in every member's namespace. */
export const ZK_CONTAINER_PORTS = { client: 2181, quorum: 2888, election: 3888 } as const;

export async function planZkContainers(o: ContainerStartOptions): Promise<ContainerPlan> {
  const t = o.topology;
  const ports = ZK_CONTAINER_PORTS;
  const slots: ZkSlot[] = t.nodes.map((n) => ({
    id: n.id,
    sid: n.sid,
    clientPort: ports.client,
    quorumPort: ports.quorum,
    electionPort: ports.election,
  }));
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
      listenAt: (from, to, _port, target) => ({ host: o.pairHost(from, to), port: target.port }),
      retryConnectMs: RELAY_CONNECT_RETRY_MS,
    },
  );
  const plan = planZkMembers(t, slots, {
    dial,
    dirOf: () => '/data',
    fsync: o.fsync,
    extra: extraConfigLines(),
    selfHost: addressOf,
  });
  await writeFile(join(o.configDir, 'log4j.properties'), LOG4J_PROPERTIES);
  for (const m of plan) {
    await writeFile(join(o.configDir, `${m.id}.cfg`), m.zooCfg);
    await writeFile(join(o.configDir, `${m.id}.hosts`), m.hosts);
    await writeFile(join(o.configDir, `${m.id}.myid`), `${m.sid}\n`);
  }
  const order = startOrder(t.nodes, t.cluster.initialLeader);
  return {
    image: 'zookeeper',
    members: plan.map((m) => {
      const java = zkJvmArgs(
        DEBIAN_ZK_JARS.join(':'),
        '/config/log4j.properties',
        `/config/${m.id}.cfg`,
        `/config/${m.id}.hosts`,
      );
      // myid lives in the data dir, which is the container's own (it survives a kill and restart
      // of the container, as a crashed machine's disk does); the config dir is read-only.
      const script = `mkdir -p /data && cp /config/${m.id}.myid /data/myid && exec java "$@"`;
      return {
        id: m.id,
        cmd: ['sh', '-c', script, 'zookeeper', ...java],
        translate: zkLogTranslator({
          memberId: m.id,
          memberAtQuorumAddress: (a) => m.quorumAddresses.get(a),
        }),
      };
    }),
    clientPort: ports.client,
    startOrder: {
      first: order.first,
      then: order.then,
      ...(order.then.length > 0 ? { after: t.cluster.initialLeader as string } : {}),
    },
    startTimeoutMs: START_TIMEOUT_MS,
  };
}
