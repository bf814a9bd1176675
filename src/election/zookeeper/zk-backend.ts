// src/election/zookeeper/: `election --backend zookeeper`: a ZooKeeper ensemble of three servers and
// ZooKeeper's leader recipe (zk-leader-recipe.ts), one session per participant.
//
// The zookeeper backend of `pole-bench election`: a stock ZooKeeper 3.8 ensemble of three servers
// (Debian's package, local processes on loopback, one data center: the store's), started the way
// the zookeeper target starts its members, with the tick the paper used (2 s); each participant
// runs the leader recipe (zk-leader-recipe.ts) with a session of its own on the first server.
import { startPlannedProcesses } from '../../runtime/process/planned-processes.js';
import { parseTopology } from '../../topology/topology.js';
import { noShaper } from '../../shaping/no-shaper.js';
import { zookeeperTarget } from '../../targets/zookeeper/zookeeper-target.js';
import { ZkClient, ZkError } from '../../targets/zookeeper/client/zk-client.js';
import type { ElectionBackend } from '../election-run.js';
import { ZkRecipeParticipant } from './zk-leader-recipe.js';

const ROOT = '/pb-election';

export async function openZkBackend(o: {
  readonly runId: string;
  readonly tickMs: number;
  readonly sessionTimeoutMs: number;
}): Promise<ElectionBackend> {
  // ZooKeeper bounds a session's timeout to [2, 20] ticks.
  if (o.sessionTimeoutMs < 2 * o.tickMs || o.sessionTimeoutMs > 20 * o.tickMs)
    throw new Error(
      `a session timeout of ${o.sessionTimeoutMs} ms is outside what ZooKeeper allows with a ${o.tickMs} ms tick (2 to 20 ticks)`,
    );
  const topology = parseTopology(
    'election-ensemble.yaml',
    [
      'target: zookeeper',
      'datacenters: [{ name: store, nodes: [p1, p2, p3] }]',
      `cluster: { initialLeader: p3, timers: { tickMs: ${o.tickMs}, syncLimit: 5, initLimit: 10 } }`,
    ].join('\n'),
  );
  const shaper = noShaper(topology, 'one data center');
  const members = await startPlannedProcesses(zookeeperTarget, {
    topology,
    seed: 1,
    fsync: true,
    shape: (m, plan) => shaper.install({ members: m, plan }),
  });
  let admin: ZkClient | undefined;
  try {
    // A server closes clients until it has synced with its leader: wait for all three.
    await Promise.all(
      ['p1', 'p2', 'p3'].map((id) => members.waitFor((e) => e.node === id && e.ev === 'serving', 60_000)),
    );
    const address = members.clientAddress('p1');
    admin = await ZkClient.connect(address.host, address.port, {
      sessionTimeoutMs: o.sessionTimeoutMs,
      requestTimeoutMs: 10_000,
    });
    const zk = admin;
    await ensure(zk, ROOT);
    await ensure(zk, `${ROOT}/${o.runId}`);
    let current: string | undefined;
    return {
      name: 'zookeeper',
      describe: `ZooKeeper 3.8 (Debian's package), 3 servers on one LAN, tickTime ${o.tickMs} ms`,
      address,
      async prepare(group) {
        current = `${ROOT}/${o.runId}/${group}`;
        await ensure(zk, current);
      },
      participant(name, via, emit) {
        if (current === undefined) throw new Error('no group prepared');
        return new ZkRecipeParticipant(name, {
          host: via.host,
          port: via.port,
          sessionTimeoutMs: o.sessionTimeoutMs,
          root: current,
          emit,
        });
      },
      roundMs: () => Promise.resolve(null),
      async finish(group) {
        await removeTree(zk, `${ROOT}/${o.runId}/${group}`);
      },
      async close() {
        await removeTree(zk, `${ROOT}/${o.runId}`).catch(() => undefined);
        await zk.close().catch(() => undefined);
        await members.stop();
      },
    };
  } catch (err) {
    await admin?.close().catch(() => undefined);
    await members.stop();
    throw err;
  }
}

async function ensure(zk: ZkClient, path: string): Promise<void> {
  try {
    await zk.create(path, new Uint8Array(0));
  } catch (err) {
    if (!(err instanceof ZkError && err.code === 'NODEEXISTS')) throw err;
  }
}

/** Deletes `path` and what is under it (ephemeral znodes of sessions that ended are gone already). */
async function removeTree(zk: ZkClient, path: string): Promise<void> {
  let children: string[];
  try {
    children = await zk.getChildren(path);
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NONODE') return;
    throw err;
  }
  for (const c of children) await removeTree(zk, `${path}/${c}`);
  try {
    await zk.delete(path);
  } catch (err) {
    if (!(err instanceof ZkError && err.code === 'NONODE')) throw err;
  }
}
