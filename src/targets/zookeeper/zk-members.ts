// ZooKeeper's members, wherever they run: one QuorumPeerMain JVM per topology node, myid = the
// node's sid, its zoo.cfg, log4j.properties and (where it needs one) hosts file among the plan's
// files. Peers in other data centers are reached through the delay relay, on both the quorum and
// the election port, in both directions: any member may lead, and either side of a pair may dial
// the election port.
//
// Why host names, and where each member resolves them: when a member of lower sid opens the
// election connection, the higher one closes it and dials back the address the lower one
// announced, which is the lower one's own server line (QuorumCnxManager.handleConnection in 3.8).
// With relay ports in the server lines, that dial-back would go straight to the peer and skip the
// delay. So every server line names its member with the member's real ports, and the relay
// listens on those port numbers:
// - per-pair routes (processes, docker): the lines name pb-m<sid>, and each JVM resolves the
//   names from a hosts file of its own (-Djdk.net.hosts.file): itself and its data center where
//   they are, a member of another data center at the relay's address for that ordered pair;
// - by-source routes (the swarm, one relay address): every member has port numbers of its own
//   (the runtime's), the lines name the members by their names on the run's network, and each
//   member's /etc/hosts points its peers abroad at the relay, which tells the members apart by
//   their addresses; inside a data center the network's DNS finds a peer, also after a restart at
//   a new address.
// Whoever dials whom, by configuration or by announcement, goes through the relay.
//
// The initial leader: FLE elects, among members with equal (empty) histories, the highest sid.
// So the topology's initialLeader starts first with just enough members of lower sid for a
// quorum; the rest start once it serves, and join it as followers (a member that joins an
// ensemble with a leader follows it without a new election).
import type { NodeId } from '../../vocabulary/names.js';
import type { Dial } from '../../shaping/shaper.js';
import type { MemberPlan, Placement } from '../member-plan.js';
import { DEBIAN_ZK_JARS, findZookeeper } from './zk-install.js';
import { zkLogTranslator } from './zk-log-events.js';
import { LOG4J_PROPERTIES, extraConfigLines, zooCfg, type ZkServerLine } from './zoo-cfg.js';
import type { Topology } from '../../topology/topology.js';
import { majorityOf } from '../../util/majority.js';

/**
 * How long a relay route keeps a connecting member waiting while the target refuses (a leader
 * that has not bound its learner port yet): ZooKeeper's own LeaderConnector retries a refused
 * connect 5 times 100 ms apart, which a relay that already accepted cannot give it.
 */
export const RELAY_CONNECT_RETRY_MS = 1_000;
/** Heap per member: the load's state is a few thousand 1 kB znodes. */
const JVM_HEAP = ['-Xms64m', '-Xmx512m'];

/** The order members start in: the initial leader and a quorum of lower sids, then the rest. */
export function startOrder(
  members: ReadonlyArray<{ id: NodeId; sid: number }>,
  initialLeader: NodeId | undefined,
): { first: NodeId[]; then: NodeId[] } {
  if (initialLeader === undefined) return { first: members.map((m) => m.id), then: [] };
  const leader = members.find((m) => m.id === initialLeader);
  if (!leader) throw new Error(`initialLeader ${initialLeader} is not a member`);
  const quorum = majorityOf(members.length);
  const lower = members.filter((m) => m.sid < leader.sid).sort((a, b) => a.sid - b.sid);
  if (lower.length < quorum - 1)
    throw new Error(
      `ZooKeeper elects the highest sid among equal histories: ${initialLeader} (sid ${leader.sid}) needs ` +
        `${quorum - 1} members of lower sid to be elected first, and has ${lower.length}; ` +
        `give it a higher sid or leave initialLeader out`,
    );
  const first = [leader.id, ...lower.slice(0, quorum - 1).map((m) => m.id)];
  return { first, then: members.map((m) => m.id).filter((id) => !first.includes(id)) };
}

export async function planZkMembers(p: Placement): Promise<MemberPlan> {
  const t = p.topology;
  const bySource = p.routes === 'by-source';
  const slots: ZkSlot[] = t.nodes.map((n) => {
    const ports = p.portsOf(n.id);
    return {
      id: n.id,
      sid: n.sid,
      clientPort: ports.client!,
      quorumPort: ports.quorum!,
      electionPort: ports.election!,
    };
  });
  const dial = await p.shape(
    slots.map((s) => ({
      id: s.id,
      sid: s.sid,
      peer: { host: p.hostOf(s.id), port: s.quorumPort },
      more: { election: { host: p.hostOf(s.id), port: s.electionPort } },
    })),
    { direction: 'both', keepPorts: true, retryConnectMs: RELAY_CONNECT_RETRY_MS },
  );
  const plan = zkMemberFiles(t, slots, {
    dial,
    dirOf: (id) => p.dataDir(id),
    fsync: p.fsync,
    // By source: every port on every address of the member (its name resolves to the relay for
    // its peers abroad, and the harness may reach its client port through a published port).
    extra: [...(bySource ? ['quorumListenOnAllIPs=true'] : []), ...extraConfigLines()],
    selfHost: bySource ? () => p.bindHost : (id) => p.hostOf(id),
    ...(bySource ? { nameOf: (s: ZkSlot) => p.hostOf(s.id) } : {}),
  });
  const install = p.onThisMachine
    ? await findZookeeper()
    : { java: 'java', classpath: DEBIAN_ZK_JARS.join(':') };
  const memberAtPort = new Map(slots.map((s) => [s.quorumPort, s.id]));
  const order = startOrder(t.nodes, t.cluster.initialLeader);
  return {
    files: [
      { name: 'log4j.properties', text: LOG4J_PROPERTIES },
      ...plan.flatMap((m) => [
        { name: `${m.id}.cfg`, text: m.zooCfg },
        ...(bySource ? [] : [{ name: `${m.id}.hosts`, text: m.hosts }]),
      ]),
    ],
    members: plan.map((m) => {
      const abroad = t.nodes.filter((n) => n.datacenter !== t.node(m.id).datacenter);
      return {
        id: m.id,
        program: install.java,
        args: zkJvmArgs(
          install.classpath,
          p.configPath('log4j.properties'),
          p.configPath(`${m.id}.cfg`),
          bySource ? null : p.configPath(`${m.id}.hosts`),
        ),
        // Its peers abroad by name at the relay; inside its data center, the network's DNS.
        ...(bySource ? { etcHosts: abroad.map((n) => `${m.reach.get(n.id)!} ${p.hostOf(n.id)}`) } : {}),
        dataFiles: [{ name: 'myid', text: `${m.sid}\n` }],
        translate: zkLogTranslator({
          memberId: m.id,
          memberOfSid: (sid) => plan.find((q) => q.sid === sid)?.id,
          // By source, a member's quorum port is its own; the address before it is a task's,
          // unknown here, or the relay's.
          memberAtQuorumAddress: bySource
            ? (a) => memberAtPort.get(Number(a.slice(a.lastIndexOf(':') + 1)))
            : (a) => m.quorumAddresses.get(a),
        }),
      };
    }),
    startOrder: {
      first: order.first,
      then: order.then,
      ...(order.then.length > 0 ? { after: t.cluster.initialLeader as string } : {}),
    },
  };
}

export interface ZkSlot {
  readonly id: NodeId;
  readonly sid: number;
  readonly clientPort: number;
  readonly quorumPort: number;
  readonly electionPort: number;
}

/** Everything one member's files say: zoo.cfg, its hosts file, and its peers by quorum address. */
export interface ZkMemberPlan {
  readonly id: NodeId;
  readonly sid: number;
  readonly dataDir: string;
  readonly zooCfg: string;
  readonly hosts: string;
  /** Where this member reaches each member (itself: where it binds), by id. */
  readonly reach: ReadonlyMap<NodeId, string>;
  /** "ip:port" of each member's quorum port as this member reaches it → the member. */
  readonly quorumAddresses: ReadonlyMap<string, NodeId>;
}

/**
 * Every member's files, from the topology, the ports and the shaping's dial table (which must
 * keep each peer's port numbers: the server lines name them, the hosts file only the address).
 */
export function zkMemberFiles(
  t: Topology,
  slots: readonly ZkSlot[],
  o: {
    dial: Dial;
    dirOf: (id: NodeId) => string;
    fsync: boolean;
    extra?: readonly string[];
    /** The address a member binds its client port to (default 127.0.0.1: every port on loopback). */
    selfHost?: (id: NodeId) => string;
    /** The name a member goes by in the server lines (default pb-m<sid>, resolved by the hosts file). */
    nameOf?: (slot: ZkSlot) => string;
  },
): ZkMemberPlan[] {
  const nameOf = o.nameOf ?? ((p: ZkSlot) => memberHostName(p.sid));
  return slots.map((s) => {
    const self = o.selfHost?.(s.id) ?? '127.0.0.1';
    // Where this member reaches each member: itself where it binds, the others where the shaping says.
    const ipOf = (p: ZkSlot): string => {
      if (p.id === s.id) return self;
      const q = o.dial(s.id, p.id, 'peer');
      const e = o.dial(s.id, p.id, 'election');
      if (q.port !== p.quorumPort || e.port !== p.electionPort || q.host !== e.host)
        throw new Error(
          `the shaping moved ${s.id}'s way to ${p.id} to ports of its own (${q.host}:${q.port})`,
        );
      return q.host;
    };
    const lines: ZkServerLine[] = slots.map((p) => ({
      sid: p.sid,
      host: nameOf(p),
      quorumPort: p.quorumPort,
      electionPort: p.electionPort,
    }));
    const dataDir = o.dirOf(s.id);
    const reach = new Map(slots.map((p) => [p.id, ipOf(p)]));
    return {
      id: s.id,
      sid: s.sid,
      dataDir,
      zooCfg: zooCfgOf(t, s, self, dataDir, lines, o.fsync, o.extra ?? []),
      hosts: hostsFileText(slots.map((p) => ({ ip: reach.get(p.id)!, name: nameOf(p) }))),
      reach,
      quorumAddresses: new Map(slots.map((p) => [`${reach.get(p.id)!}:${p.quorumPort}`, p.id])),
    };
  });
}

/** The name a member goes by in every server line. */
export function memberHostName(sid: number): string {
  return `pb-m${sid}`;
}

/** A hosts file for -Djdk.net.hosts.file: the JVM resolves from it alone. */
export function hostsFileText(entries: ReadonlyArray<{ ip: string; name: string }>): string {
  return ['127.0.0.1 localhost', ...entries.map((e) => `${e.ip} ${e.name}`), ''].join('\n');
}

function zooCfgOf(
  t: Topology,
  s: ZkSlot,
  clientHost: string,
  dataDir: string,
  servers: ZkServerLine[],
  fsync: boolean,
  extra: readonly string[],
): string {
  const timers = t.cluster.timers;
  return zooCfg({
    topologyName: t.name,
    memberId: s.id,
    sid: s.sid,
    dataDir,
    clientHost,
    clientPort: s.clientPort,
    servers,
    timers: { tickMs: timers.tickMs, syncLimit: timers.syncLimit, initLimit: timers.initLimit },
    fsync,
    extra,
  });
}

/**
 * The JVM's options and main class for one member, after `java` (a process or a container).
 * `hostsFile`: the member resolves names from it alone; null: from the system's resolver (its
 * /etc/hosts, then DNS), with lookups cached for a second, so that a peer restarted at a new
 * address (a swarm task) is found again (the JVM's default keeps a name for 30 s).
 */
export function zkJvmArgs(
  classpath: string,
  log4j: string,
  cfgFile: string,
  hostsFile: string | null,
): string[] {
  return [
    ...JVM_HEAP,
    // No perf-data file: a JVM keeps /tmp/hsperfdata_<user>/<pid> and removes it only as it exits,
    // so each member a fault SIGKILLed left one behind; nothing here reads them.
    '-XX:-UsePerfData',
    // POLE_BENCH_ZK_JVM_ARGS: further JVM options (GC, heap), space-separated, after ours.
    ...(process.env.POLE_BENCH_ZK_JVM_ARGS?.split(/\s+/).filter(Boolean) ?? []),
    '-Duser.timezone=UTC',
    `-Dlog4j.configuration=file:${log4j}`,
    '-Dzookeeper.jmx.log4j.disable=true',
    ...(hostsFile !== null
      ? [`-Djdk.net.hosts.file=${hostsFile}`]
      : ['-Dsun.net.inetaddr.ttl=1', '-Dsun.net.inetaddr.negative.ttl=0']),
    '-cp',
    classpath,
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    cfgFile,
  ];
}
