// An etcd cluster as local processes: one etcd 3.4 per topology node, every port on loopback,
// peers in other data centers reached through the delay relay at an address of each ordered pair
// (etcd-members.ts says why each member resolves its peers' names from a hosts file of its own).
// Each member runs `setpriv --pdeathsig KILL -- unshare -m -- sh -c 'mount --bind HOSTS
// /etc/hosts && exec etcd …'`: it dies with the harness however the harness dies, and its
// /etc/hosts is its own (the mount namespace is private, the machine's file is untouched).
//
// The initial leader: Raft elects whoever times out first. So once a leader is elected, and it is
// not the topology's initialLeader, leadership is handed to it (etcd's MoveLeader) before the run.
// With --etcd-prefer, every election after that is followed by the same hand-over to the preferred
// member (named, or the oracle's choice among the living): Raft's choice, then the preferred one.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeId } from '../../node/core/types.js';
import { MemberProcesses, type MemberSpec } from '../../runtime/process/member-processes.js';
import { freePorts } from '../../util/free-port.js';
import type { ProcessMembers, ProcessStartOptions } from '../target.js';
import { EtcdGateway } from './etcd-gateway.js';
import { findEtcd, type EtcdInstall } from './etcd-install.js';
import { etcdLogTranslator } from './etcd-log-events.js';
import { clusterToken, planEtcdMembers, type EtcdSlot } from './etcd-members.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import { predictElected } from '../../topology/model.js';
import type { Topology } from '../../topology/topology.js';
import { pairHost } from '../pair-host.js';

const HOST = '127.0.0.1';
/** A member that has not joined its cluster and served clients in this long has failed. */
export const START_TIMEOUT_MS = 30_000;
/** SIGTERM, then this long before SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** How long the first election, and the transfer to the initial leader, may take. */
const LEADER_TIMEOUT_MS = 20_000;
/** A relay route keeps a dialling member waiting this long while its peer is not listening yet. */
const RELAY_CONNECT_RETRY_MS = 1_000;

export async function startEtcdProcesses(o: ProcessStartOptions): Promise<ProcessMembers> {
  if (!o.fsync)
    throw new Error('etcd 3.4 always syncs its log to disk: it has no setting to run without fsync');
  const install = await findEtcd();
  const t = o.topology;
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-etcd-'));
  let members: MemberProcesses | undefined;
  try {
    const ports = await freePorts(t.nodes.length * 2);
    const slots = new Map<NodeId, EtcdSlot>(
      t.nodes.map((n, i) => [
        n.id,
        { id: n.id, sid: n.sid, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]! },
      ]),
    );
    const dial = await o.shape(
      [...slots.values()].map((s) => ({ id: s.id, sid: s.sid, peer: { host: HOST, port: s.peerPort } })),
      {
        direction: 'both',
        // Each route on an address of its own with the member's port number: etcd-members.ts.
        listenAt: (from, to, _port, target) => ({ host: pairHost(t, from, to), port: target.port }),
        retryConnectMs: RELAY_CONNECT_RETRY_MS,
      },
    );
    const plan = planEtcdMembers(t, [...slots.values()], {
      dial,
      dirOf: (id) => join(dir, id),
      token: clusterToken(t, o.seed),
    });
    const byEtcdId = new Map(plan.map((m) => [m.memberId, m.id]));
    const etcdIdOf = new Map(plan.map((m) => [m.id, m.memberId]));
    // Set once the members exist: a new leader's line may ask for a transfer (--etcd-prefer).
    let onLeader: (e: ClusterEvent) => void = () => undefined;
    const specs: MemberSpec[] = [];
    for (const m of plan) {
      await mkdir(m.dataDir, { recursive: true, mode: 0o700 });
      const hostsFile = join(dir, `${m.id}.hosts`);
      await writeFile(hostsFile, m.hosts);
      specs.push({
        id: m.id,
        launch: etcdCommand(install, hostsFile, m.args),
        translate: watchLeaders(
          etcdLogTranslator({ memberId: m.id, nodeOf: (id) => byEtcdId.get(id) }),
          (e) => onLeader(e),
        ),
        stopsWithStdin: false,
        stopGraceMs: STOP_GRACE_MS,
        isStarted: (e) => e.ev === 'started',
        startTimeoutMs: START_TIMEOUT_MS,
        logFile: join(dir, `${m.id}.log`),
      });
    }
    const procs = new MemberProcesses(specs);
    members = procs;
    // A new cluster comes up only with a quorum of its members: all start together.
    await Promise.all(plan.map((m) => procs.start(m.id)));
    const clientOf = (id: NodeId): { host: string; port: number } => ({
      host: HOST,
      port: (slots.get(id) as EtcdSlot).clientPort,
    });
    const preferred =
      o.prefer === undefined ? undefined : preferredLeader(t, o.prefer, (id) => procs.isRunning(id));
    // The topology's initial leader, else the preferred one, leads before the run.
    const initial = t.cluster.initialLeader ?? preferred?.();
    if (initial !== undefined) {
      const target = etcdIdOf.get(initial);
      if (target === undefined) throw new Error(`initialLeader ${initial} is not a member`);
      await handLeadershipTo(procs, initial, target, clientOf);
    }
    if (preferred)
      onLeader = (e) => void preferLeader(procs, e.node, preferred(), etcdIdOf, clientOf, o.prefer!);
    return procs.asMembers({
      clientAddress: clientOf,
      afterStop: async () => {
        // POLE_BENCH_KEEP_ETCD_DIR=1 keeps the members' data and full logs to look at.
        if (process.env.POLE_BENCH_KEEP_ETCD_DIR === '1') process.stderr.write(`kept ${dir}\n`);
        else await rm(dir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    await members?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

const isLeaderEvent = (e: ClusterEvent): boolean => e.ev === 'elected' && e.leader === e.node;

/** A translator that also tells `onLeader` of every leader's own election, once it is an event. */
function watchLeaders(
  translate: (line: string) => ClusterEvent[],
  onLeader: (e: ClusterEvent) => void,
): (line: string) => ClusterEvent[] {
  return (line) => {
    const out = translate(line);
    // After the events are booked (the caller pushes them first), so a waiter sees the election.
    for (const e of out) if (isLeaderEvent(e)) setImmediate(() => onLeader(e));
    return out;
  };
}

/**
 * Whom leadership goes to (--etcd-prefer): the named member while it runs, or the member the
 * topology's oracle would elect among the running ones (every one taken as up to date, the
 * topology's RTTs: topology/model.ts predictElected), as the closest etcd comes to POLE.
 */
export function preferredLeader(
  t: Topology,
  prefer: string,
  isRunning: (id: NodeId) => boolean,
): () => NodeId | undefined {
  return () => {
    const down = t.nodes.map((n) => n.id).filter((id) => !isRunning(id));
    if (prefer !== 'oracle') return down.includes(prefer) ? undefined : prefer;
    if (down.length === t.nodes.length) return undefined;
    return predictElected(t, t.cluster.oracle, down).leader;
  };
}

/** Asks `leader`, just elected, to hand leadership to `want` where that is another running member. */
async function preferLeader(
  procs: MemberProcesses,
  leader: NodeId,
  want: NodeId | undefined,
  etcdIdOf: ReadonlyMap<NodeId, string>,
  clientOf: (id: NodeId) => { host: string; port: number },
  prefer: string,
): Promise<void> {
  if (want === undefined || want === leader || !procs.isRunning(want) || !procs.isRunning(leader)) return;
  procs.record({
    ev: 'transfer-asked',
    to: want,
    reason: prefer === 'oracle' ? 'etcd-prefer: the oracle' : 'etcd-prefer',
    t: Date.now(),
    node: leader,
    src: 'harness',
  });
  const gw = new EtcdGateway(clientOf(leader), LEADER_TIMEOUT_MS);
  try {
    await gw.moveLeader(etcdIdOf.get(want)!);
  } catch (err) {
    // A leader that lost its place meanwhile refuses: the next election asks again.
    procs.record({
      ev: 'log-error',
      message: `MoveLeader from ${leader} to ${want}: ${(err as Error).message}`,
      t: Date.now(),
      node: leader,
      src: 'harness',
    });
  } finally {
    gw.close();
  }
}

/**
 * Waits for a leader; until `id` (etcd member `etcdId`) leads, asks whoever leads to hand it
 * leadership, again if leadership moved meanwhile ("not leader": a start on a busy machine can
 * see a second election before the first transfer), within LEADER_TIMEOUT_MS in all.
 */
export async function handLeadershipTo(
  procs: MemberProcesses,
  id: NodeId,
  etcdId: string,
  clientOf: (id: NodeId) => { host: string; port: number },
): Promise<void> {
  const until = Date.now() + LEADER_TIMEOUT_MS;
  await procs.waitFor(isLeaderEvent, LEADER_TIMEOUT_MS);
  let last = '';
  while (Date.now() < until) {
    const leader = [...procs.events].reverse().find(isLeaderEvent)?.node;
    if (leader === id) return;
    const since = procs.events.length;
    const gw = new EtcdGateway(clientOf(leader!), Math.max(1, until - Date.now()));
    try {
      await gw.moveLeader(etcdId);
    } catch (err) {
      last = `: ${(err as Error).message}`;
    } finally {
      gw.close();
    }
    // The next leader's line, or a short pause before looking again.
    await procs
      .waitFor(isLeaderEvent, Math.min(1_000, Math.max(1, until - Date.now())), since)
      .catch(() => undefined);
  }
  throw new Error(`leadership did not pass to ${id} within ${LEADER_TIMEOUT_MS} ms${last}`);
}

function etcdCommand(install: EtcdInstall, hostsFile: string, args: readonly string[]): MemberSpec['launch'] {
  return {
    command: install.setpriv,
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      install.unshare,
      '--mount',
      '--',
      '/bin/sh',
      '-c',
      'mount --bind "$0" /etc/hosts && exec "$@"',
      hostsFile,
      install.etcd,
      ...args,
      // POLE_BENCH_ETCD_ARGS: further etcd flags, space-separated, after ours (etcd takes the last).
      ...(process.env.POLE_BENCH_ETCD_ARGS?.split(/\s+/).filter(Boolean) ?? []),
    ],
  };
}
