// A ZooKeeper ensemble as local processes: one QuorumPeerMain JVM per topology node, myid = the
// node's sid, every port on loopback, peers in other data centers dialled through the delay relay
// (both the quorum and the election port, in both directions: any member may lead, and either
// side of a pair may dial the election port). Each JVM is started under `setpriv --pdeathsig
// KILL`, so it dies with the harness however the harness dies; ZooKeeper reads no stdin to notice.
//
// Why host names and a hosts file per member: when a member of lower sid opens the election
// connection, the higher one closes it and dials back the address the lower one announced, which
// is the lower one's own server line (QuorumCnxManager.handleConnection in 3.8). With relay ports
// in the server lines, that dial-back would go straight to the peer and skip the delay. So every
// server line names its member (pb-m<sid>) with the member's real ports, and each JVM resolves
// those names from a hosts file of its own (-Djdk.net.hosts.file): itself and the members of its
// data center at 127.0.0.1, a member of another data center at a loopback address of that ordered
// pair (127.<10+i>.<10+j>.1), where the relay listens on the member's own port numbers. Whoever
// dials whom, by configuration or by announcement, goes through the relay.
//
// The initial leader: FLE elects, among members with equal (empty) histories, the highest sid.
// So the topology's initialLeader starts first with just enough members of lower sid for a
// quorum; the rest start once it serves, and join it as followers (a member that joins an
// ensemble with a leader follows it without a new election).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeId } from '../../vocabulary/names.js';
import { MemberProcesses, type MemberSpec } from '../../runtime/process/member-processes.js';
import { freePorts } from '../../util/free-port.js';
import { pairHost } from '../pair-host.js';
import type { ProcessMembers, ProcessStartOptions } from '../target.js';
import type { Dial } from '../../shaping/shaper.js';
import { findZookeeper, type ZkInstall } from './zk-install.js';
import { zkLogTranslator } from './zk-log-events.js';
import { LOG4J_PROPERTIES, extraConfigLines, zooCfg, type ZkServerLine } from './zoo-cfg.js';
import type { Topology } from '../../topology/topology.js';

export { pairHost };

const HOST = '127.0.0.1';
/** A JVM that has not bound its ports and started its election in this long has failed. */
export const START_TIMEOUT_MS = 60_000;
/** SIGTERM, then this long before SIGKILL (ZooKeeper has nothing to flush that fsync did not). */
const STOP_GRACE_MS = 5_000;
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
  const quorum = Math.floor(members.length / 2) + 1;
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

export async function startZkProcesses(o: ProcessStartOptions): Promise<ProcessMembers> {
  const install = await findZookeeper();
  const t = o.topology;
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-zk-'));
  let members: MemberProcesses | undefined;
  try {
    const ports = await freePorts(t.nodes.length * 3);
    const slots = new Map<NodeId, ZkSlot>(
      t.nodes.map((n, i) => [
        n.id,
        {
          id: n.id,
          sid: n.sid,
          clientPort: ports[3 * i]!,
          quorumPort: ports[3 * i + 1]!,
          electionPort: ports[3 * i + 2]!,
        },
      ]),
    );
    const dial = await o.shape(
      [...slots.values()].map((s) => ({
        id: s.id,
        sid: s.sid,
        peer: { host: HOST, port: s.quorumPort },
        more: { election: { host: HOST, port: s.electionPort } },
      })),
      {
        direction: 'both',
        // Each route on an address of its own with the target's port numbers: see above.
        listenAt: (from, to, _port, target) => ({ host: pairHost(t, from, to), port: target.port }),
        retryConnectMs: RELAY_CONNECT_RETRY_MS,
      },
    );
    const log4j = join(dir, 'log4j.properties');
    await writeFile(log4j, LOG4J_PROPERTIES);
    const plan = planZkMembers(t, [...slots.values()], {
      dial,
      dirOf: (id) => join(dir, id),
      fsync: o.fsync,
      extra: extraConfigLines(),
    });
    const specs: MemberSpec[] = [];
    for (const m of plan) {
      await mkdir(m.dataDir, { recursive: true });
      await writeFile(join(m.dataDir, 'myid'), `${m.sid}\n`);
      const hostsFile = join(dir, `${m.id}.hosts`);
      await writeFile(hostsFile, m.hosts);
      const cfgFile = join(dir, `${m.id}.cfg`);
      await writeFile(cfgFile, m.zooCfg);
      specs.push({
        id: m.id,
        launch: jvmCommand(install, log4j, cfgFile, hostsFile),
        translate: zkLogTranslator({
          memberId: m.id,
          memberOfSid: (sid) => plan.find((p) => p.sid === sid)?.id,
          memberAtQuorumAddress: (a) => m.quorumAddresses.get(a),
        }),
        stopsWithStdin: false,
        stopGraceMs: STOP_GRACE_MS,
        isStarted: (e) => e.ev === 'started',
        startTimeoutMs: START_TIMEOUT_MS,
        logFile: join(dir, `${m.id}.log`),
      });
    }
    const procs = new MemberProcesses(specs);
    members = procs;
    const order = startOrder(t.nodes, t.cluster.initialLeader);
    await Promise.all(order.first.map((id) => procs.start(id)));
    if (order.then.length > 0) {
      const leader = t.cluster.initialLeader as NodeId;
      await procs.waitFor((e) => e.ev === 'serving' && e.node === leader, START_TIMEOUT_MS);
      await Promise.all(order.then.map((id) => procs.start(id)));
    }
    return procs.asMembers({
      clientAddress: (id) => ({ host: HOST, port: (slots.get(id) as ZkSlot).clientPort }),
      afterStop: async () => {
        // POLE_BENCH_KEEP_ZK_DIR=1 keeps the configs, data and full logs of the members to look at.
        if (process.env.POLE_BENCH_KEEP_ZK_DIR === '1') process.stderr.write(`kept ${dir}\n`);
        else await rm(dir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    await members?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
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
export function planZkMembers(
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
    const self = o.selfHost?.(s.id) ?? HOST;
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

function jvmCommand(
  install: ZkInstall,
  log4j: string,
  cfgFile: string,
  hostsFile: string,
): MemberSpec['launch'] {
  return {
    command: 'setpriv',
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      install.java,
      ...zkJvmArgs(install.classpath, log4j, cfgFile, hostsFile),
    ],
  };
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
