// An etcd cluster as containers of the docker runtime: Debian's etcd-server in the pole-bench-etcd
// image, one container per member in its holder's network namespace, so a killed member keeps its
// address, and its data in the container's own /data, so a restart (the same container started
// again) rejoins as itself with its log. Every member uses etcd's usual ports on its own address.
// Across data centers a member reaches a peer at an address of the harness that only the relay
// route of that ordered pair listens on, with the peer's own port number: the peer URLs name the
// members (etcd-members.ts says why) and each member's /etc/hosts, written from its hosts file
// before etcd starts, says where each name is for it. With netem the names resolve to the peers'
// own addresses and the holders' qdiscs add the delay.
//
// Not on the swarm yet: there the relay is one task with one address (by-source routes), which
// needs a peer port per member; the runtime refuses etcd on a swarm (choose-runtime.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeId } from '../../vocabulary/names.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import type { ContainerPlan, ContainerStartOptions } from '../target.js';
import { leadAsAsked, watchLeaders } from './etcd-leadership.js';
import { etcdLogTranslator } from './etcd-log-events.js';
import { clusterToken, extraEtcdArgs, planEtcdMembers, type EtcdSlot } from './etcd-members.js';
import { START_TIMEOUT_MS } from './etcd-processes.js';

/** etcd's customary ports, the same in every member's namespace. */
export const ETCD_CONTAINER_PORTS = { client: 2379, peer: 2380 } as const;
/** A relay route keeps a dialling member waiting this long while its peer is not listening yet. */
const RELAY_CONNECT_RETRY_MS = 1_000;

export async function planEtcdContainers(o: ContainerStartOptions): Promise<ContainerPlan> {
  if (!o.fsync)
    throw new Error('etcd 3.4 always syncs its log to disk: it has no setting to run without fsync');
  const routes = o.peerRoutes;
  if (routes.kind !== 'per-pair')
    throw new Error('etcd members need a relay address per ordered pair (the docker runtime), not by source');
  const t = o.topology;
  const addressOf = (id: NodeId): string => {
    const a = o.addresses.get(id);
    if (a === undefined) throw new Error(`no address for ${id}`);
    return a;
  };
  const slots: EtcdSlot[] = t.nodes.map((n) => ({
    id: n.id,
    sid: n.sid,
    clientPort: ETCD_CONTAINER_PORTS.client,
    peerPort: ETCD_CONTAINER_PORTS.peer,
  }));
  const dial = await o.shape(
    slots.map((s) => ({ id: s.id, sid: s.sid, peer: { host: addressOf(s.id), port: s.peerPort } })),
    {
      direction: 'both',
      listenAt: (from, to, _port, target) => ({ host: routes.host(from, to), port: target.port }),
      retryConnectMs: RELAY_CONNECT_RETRY_MS,
    },
  );
  const plan = planEtcdMembers(t, slots, {
    dial,
    dirOf: () => '/data',
    token: clusterToken(t, o.seed),
    addressOf,
  });
  const byEtcdId = new Map(plan.map((m) => [m.memberId, m.id]));
  const etcdIdOf = new Map(plan.map((m) => [m.id, m.memberId]));
  // A new leader's line may ask for a transfer (--etcd-prefer), once the members exist.
  const hook = { onLeader: (_e: ClusterEvent): void => undefined };
  for (const m of plan) await writeFile(join(o.configDir, `${m.id}.hosts`), m.hosts);
  return {
    image: 'etcd',
    members: plan.map((m) => ({
      id: m.id,
      // The container's /etc/hosts is its own file (Docker's, writable): each start writes it anew.
      cmd: [
        'sh',
        '-c',
        `cat /config/${m.id}.hosts > /etc/hosts && exec etcd "$@"`,
        'etcd',
        ...m.args,
        ...extraEtcdArgs(),
      ],
      translate: watchLeaders(etcdLogTranslator({ memberId: m.id, nodeOf: (id) => byEtcdId.get(id) }), hook),
    })),
    clientPort: ETCD_CONTAINER_PORTS.client,
    // A new cluster comes up only with a quorum of its members: all start together.
    startOrder: { first: plan.map((m) => m.id), then: [] },
    startTimeoutMs: START_TIMEOUT_MS,
    afterStart: (members) =>
      leadAsAsked(members, {
        topology: t,
        ...(o.prefer !== undefined ? { prefer: o.prefer } : {}),
        etcdIdOf,
        hook,
      }),
  };
}
