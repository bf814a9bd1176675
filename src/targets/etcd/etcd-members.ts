// What each etcd member is told: its flags, its hosts file, and its member id, from the topology,
// the ports and the shaping's dial table. Pure, so the exact flags are tested without an etcd.
//
// Why host names, and a hosts file per member (as ZooKeeper's members have, for another reason):
// every member must be given the same --initial-cluster (etcd derives the member ids, and so the
// cluster id, from the peer URLs in it), yet a member in another data center must be reached
// through the delay relay, at an address of that ordered pair. So each peer URL names its member
// (pb-e<sid>) on the member's real peer port, and each member resolves those names from a hosts
// file of its own (its /etc/hosts: the runtime gives each member one of its own): itself and its
// data center where they are, a member of another data center at the relay's address for that
// pair, where the relay listens on the member's own port number. Raft's streams are opened by
// both sides, and both go through the relay.
import { createHash } from 'node:crypto';
import type { NodeId } from '../../vocabulary/names.js';
import type { Dial } from '../../shaping/shaper.js';
import type { Topology } from '../../topology/topology.js';

export interface EtcdSlot {
  readonly id: NodeId;
  readonly sid: number;
  readonly clientPort: number;
  readonly peerPort: number;
}

export interface EtcdMemberPlan {
  readonly id: NodeId;
  /** etcd's member id, in hex as its logs print it. */
  readonly memberId: string;
  readonly dataDir: string;
  /** etcd's flags, after the binary. */
  readonly args: readonly string[];
  /** The lines of its /etc/hosts that name its peers ("address name"). */
  readonly etcHosts: readonly string[];
}

/** The name a member goes by in every peer URL. */
export function etcdHostName(sid: number): string {
  return `pb-e${sid}`;
}

export function peerUrl(s: EtcdSlot, name = etcdHostName(s.sid)): string {
  return `http://${name}:${s.peerPort}`;
}

/**
 * etcd's id of a member of a new cluster: the first 8 bytes of SHA-1 over its sorted peer URLs
 * and the cluster token (etcdserver/api/membership NewMember, no timestamp for an initial member).
 */
export function etcdMemberId(peerUrls: readonly string[], token: string): string {
  const h = createHash('sha1')
    .update([...peerUrls].sort().join('') + token)
    .digest();
  return h.readBigUInt64BE(0).toString(16);
}

/**
 * The topology's timers in etcd's terms. A follower of POLE or ZooKeeper gives up on a silent
 * leader after syncLimit ticks: etcd's election timeout (each follower waits a random time between
 * it and twice it). The leader pings every half tick: etcd's heartbeat interval, at most a fifth of
 * the election timeout (etcd refuses less).
 */
export function etcdTimers(t: Topology): { heartbeatMs: number; electionMs: number } {
  const tm = t.cluster.timers;
  const electionMs = Math.max(1, Math.round(tm.syncLimit * tm.tickMs));
  const heartbeatMs = Math.max(1, Math.min(Math.round(tm.tickMs / 2), Math.floor(electionMs / 5)));
  return { heartbeatMs, electionMs };
}

/** The cluster token: a run's members never join another run's cluster by mistake. */
export function clusterToken(t: Topology, seed: number): string {
  return `pole-bench-${t.name}-${seed}`;
}

export function planEtcdMembers(
  t: Topology,
  slots: readonly EtcdSlot[],
  o: {
    readonly dial: Dial;
    readonly dirOf: (id: NodeId) => string;
    readonly token: string;
    /** Where a member is reached in its data center, and tells clients it is. */
    readonly hostOf: (id: NodeId) => string;
    /** The address its listeners bind. */
    readonly bindHost: string;
    /**
     * The name a member goes by in the peer URLs: pb-e<sid> (default, resolved by its hosts
     * lines), or its name on the run's network (the swarm's, whose DNS finds it).
     */
    readonly nameOf?: (s: EtcdSlot) => string;
  },
): EtcdMemberPlan[] {
  const nameOf = o.nameOf ?? ((p: EtcdSlot) => etcdHostName(p.sid));
  const urlOf = (p: EtcdSlot): string => peerUrl(p, nameOf(p));
  const cluster = slots.map((p) => `${p.id}=${urlOf(p)}`).join(',');
  const { heartbeatMs, electionMs } = etcdTimers(t);
  return slots.map((s) => {
    // Where this member reaches each member: itself directly, the others where the shaping says.
    const self = o.hostOf(s.id);
    const ipOf = (p: EtcdSlot): string => {
      if (p.id === s.id) return self;
      const d = o.dial(s.id, p.id, 'peer');
      if (d.port !== p.peerPort)
        throw new Error(
          `the shaping moved ${s.id}'s way to ${p.id} to a port of its own (${d.host}:${d.port})`,
        );
      return d.host;
    };
    const dataDir = o.dirOf(s.id);
    const listen = o.bindHost;
    const client = `http://${self}:${s.clientPort}`;
    return {
      id: s.id,
      memberId: etcdMemberId([urlOf(s)], o.token),
      dataDir,
      args: [
        `--name=${s.id}`,
        `--data-dir=${dataDir}`,
        `--listen-peer-urls=http://${listen}:${s.peerPort}`,
        `--initial-advertise-peer-urls=${urlOf(s)}`,
        `--listen-client-urls=http://${listen}:${s.clientPort}`,
        `--advertise-client-urls=${client}`,
        `--initial-cluster=${cluster}`,
        `--initial-cluster-token=${o.token}`,
        // Ignored once the data dir holds a member: a restart rejoins as itself.
        '--initial-cluster-state=new',
        `--heartbeat-interval=${heartbeatMs}`,
        `--election-timeout=${electionMs}`,
        // JSON lines on stdout, read into events (etcd-log-events.ts).
        '--logger=zap',
        '--log-outputs=stdout',
        '--log-level=info',
      ],
      etcHosts: slots.map((p) => `${ipOf(p)} ${nameOf(p)}`),
    };
  });
}

/** POLE_BENCH_ETCD_ARGS: further etcd flags, space-separated, after ours (etcd takes the last). */
export function extraEtcdArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return env.POLE_BENCH_ETCD_ARGS?.split(/\s+/).filter(Boolean) ?? [];
}
