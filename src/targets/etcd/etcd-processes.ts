// An etcd cluster as local processes: one etcd 3.4 per topology node, every port on loopback,
// peers in other data centers reached through the delay relay at an address of each ordered pair
// (etcd-members.ts says why each member resolves its peers' names from a hosts file of its own).
// Each member runs `setpriv --pdeathsig KILL -- unshare [--user --map-root-user] --mount -- sh -c
// 'mount --bind HOSTS /etc/hosts && exec etcd …'`: it dies with the harness however the harness
// dies, and its /etc/hosts is its own (the mount namespace is private, the machine's file is
// untouched); an ordinary user makes the namespace inside a user namespace (etcd-isolation.ts).
//
// Who leads before and during the run: etcd-leadership.ts.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeId } from '../../vocabulary/names.js';
import { MemberProcesses, type MemberSpec } from '../../runtime/process/member-processes.js';
import { freePorts } from '../../util/free-port.js';
import type { ProcessMembers, ProcessStartOptions } from '../target.js';
import { findEtcd, type EtcdInstall } from './etcd-install.js';
import { etcdIsolation, type EtcdIsolation } from './etcd-isolation.js';
import { etcdLogTranslator } from './etcd-log-events.js';
import { leadAsAsked, watchLeaders } from './etcd-leadership.js';
import { clusterToken, extraEtcdArgs, planEtcdMembers, type EtcdSlot } from './etcd-members.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import { pairHost } from '../pair-host.js';

const HOST = '127.0.0.1';
/** A member that has not joined its cluster and served clients in this long has failed. */
export const START_TIMEOUT_MS = 30_000;
/** SIGTERM, then this long before SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** A relay route keeps a dialling member waiting this long while its peer is not listening yet. */
const RELAY_CONNECT_RETRY_MS = 1_000;

export async function startEtcdProcesses(o: ProcessStartOptions): Promise<ProcessMembers> {
  if (!o.fsync)
    throw new Error('etcd 3.4 always syncs its log to disk: it has no setting to run without fsync');
  const install = await findEtcd();
  const isolation = await etcdIsolation(install);
  if ('problem' in isolation) throw new Error(isolation.problem);
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
    // A new leader's line may ask for a transfer (--etcd-prefer), once the members exist.
    const hook = { onLeader: (_e: ClusterEvent): void => undefined };
    const specs: MemberSpec[] = [];
    for (const m of plan) {
      await mkdir(m.dataDir, { recursive: true, mode: 0o700 });
      const hostsFile = join(dir, `${m.id}.hosts`);
      await writeFile(hostsFile, m.hosts);
      specs.push({
        id: m.id,
        launch: etcdCommand(install, isolation.ok, hostsFile, m.args),
        translate: watchLeaders(
          etcdLogTranslator({ memberId: m.id, nodeOf: (id) => byEtcdId.get(id) }),
          hook,
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
    await leadAsAsked(
      {
        get events() {
          return procs.events;
        },
        waitFor: (pred, timeoutMs, since) => procs.waitFor(pred, timeoutMs, since),
        isRunning: (id) => procs.isRunning(id),
        record: (e) => procs.record(e),
        clientAddress: clientOf,
      },
      { topology: t, ...(o.prefer !== undefined ? { prefer: o.prefer } : {}), etcdIdOf, hook },
    );
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

function etcdCommand(
  install: EtcdInstall,
  isolation: EtcdIsolation,
  hostsFile: string,
  args: readonly string[],
): MemberSpec['launch'] {
  return {
    command: install.setpriv,
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      install.unshare,
      ...isolation.unshareArgs,
      '--',
      '/bin/sh',
      '-c',
      'mount --bind "$0" /etc/hosts && exec "$@"',
      hostsFile,
      install.etcd,
      ...args,
      ...extraEtcdArgs(),
    ],
  };
}
