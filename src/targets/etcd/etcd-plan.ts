// etcd's members, wherever they run: one etcd 3.4 per topology node, its flags and hosts lines
// from etcd-members.ts, its zap log lines read into events, and, once all have started,
// leadership handed as the topology and --etcd-prefer ask (etcd-leadership.ts). Its data is its
// own data directory, so a restart rejoins as itself with its log.
//
// Peers in other data centers are reached through the delay relay on their own port numbers (the
// peer URLs name the members: etcd-members.ts says why):
// - per-pair routes (processes, docker): the URLs name pb-e<sid>, and every member's /etc/hosts
//   says where each name is for it (the relay's address of that ordered pair for a peer abroad);
// - by-source routes (the swarm, one relay address): every member has a peer port of its own (the
//   runtime's), the URLs name the members by their names on the run's network, and a member's
//   /etc/hosts points only its peers abroad at the relay; the network's DNS finds the rest.
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import { allAtOnce, type MemberPlan, type Placement } from '../member-plan.js';
import { findEtcd } from './etcd-install.js';
import { leadAsAsked, watchLeaders } from './etcd-leadership.js';
import { etcdLogTranslator } from './etcd-log-events.js';
import { clusterToken, extraEtcdArgs, planEtcdMembers, type EtcdSlot } from './etcd-members.js';

/** A relay route keeps a dialling member waiting this long while its peer is not listening yet. */
const RELAY_CONNECT_RETRY_MS = 1_000;

export async function planEtcd(p: Placement): Promise<MemberPlan> {
  if (!p.fsync)
    throw new Error('etcd 3.4 always syncs its log to disk: it has no setting to run without fsync');
  const t = p.topology;
  const bySource = p.routes === 'by-source';
  const slots: EtcdSlot[] = t.nodes.map((n) => {
    const ports = p.portsOf(n.id);
    return { id: n.id, sid: n.sid, clientPort: ports.client!, peerPort: ports.peer! };
  });
  const dial = await p.shape(
    slots.map((s) => ({ id: s.id, sid: s.sid, peer: { host: p.hostOf(s.id), port: s.peerPort } })),
    { direction: 'both', keepPorts: true, retryConnectMs: RELAY_CONNECT_RETRY_MS },
  );
  const plan = planEtcdMembers(t, slots, {
    dial,
    dirOf: (id) => p.dataDir(id),
    token: clusterToken(t, p.seed),
    hostOf: (id) => p.hostOf(id),
    bindHost: p.bindHost,
    ...(bySource ? { nameOf: (s: EtcdSlot) => p.hostOf(s.id) } : {}),
  });
  const etcd = p.onThisMachine ? (await findEtcd()).etcd : 'etcd';
  const byEtcdId = new Map(plan.map((m) => [m.memberId, m.id]));
  const etcdIdOf = new Map(plan.map((m) => [m.id, m.memberId]));
  // A new leader's line may ask for a transfer (--etcd-prefer), once the members exist.
  const hook = { onLeader: (_e: ClusterEvent): void => undefined };
  return {
    files: [],
    members: plan.map((m) => {
      const home = t.node(m.id).datacenter;
      const abroad = new Set(t.nodes.filter((n) => n.datacenter !== home).map((n) => n.id));
      return {
        id: m.id,
        program: etcd,
        args: [...m.args, ...extraEtcdArgs()],
        etcHosts: bySource ? m.etcHosts.filter((_, i) => abroad.has(slots[i]!.id)) : m.etcHosts,
        translate: watchLeaders(
          etcdLogTranslator({ memberId: m.id, nodeOf: (id) => byEtcdId.get(id) }),
          hook,
        ),
      };
    }),
    // A new cluster comes up only with a quorum of its members: all start together.
    startOrder: allAtOnce(t),
    afterStart: (members) =>
      leadAsAsked(members, {
        topology: t,
        ...(p.targetOption !== undefined ? { prefer: p.targetOption } : {}),
        etcdIdOf,
        hook,
      }),
  };
}
