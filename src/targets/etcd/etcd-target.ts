// src/targets/etcd/: etcd 3.4 (Raft) as a target: its members' flags and hosts files, its
// processes, its log lines as events, its JSON gateway client and its final read.
//
// Debian's etcd-server 3.4 as a target: one etcd per topology node, loaded by puts on slots
// through the v3 JSON gateway, its zap log lines as the shared events, checked by linearizable
// ranges on every live member. As local processes and as containers of the docker runtime (the
// pole-bench-etcd image); not on a swarm yet.
import type { Target } from '../target.js';
import { checkEtcdAckedWrites } from './etcd-checker.js';
import { ETCD_CONTAINER_PORTS, planEtcdContainers } from './etcd-containers.js';
import { startEtcdProcesses } from './etcd-processes.js';
import { findEtcd } from './etcd-install.js';
import { etcdIsolation } from './etcd-isolation.js';
import { connectEtcdWriter } from './etcd-write-client.js';

export const etcdTarget: Target = {
  name: 'etcd',
  hasOracles: false,
  electionRule: 'raft',
  tracesWrites: false,
  protocol: 'etcd',
  // Go needs no JIT: the warm-up grows the members' buffers and the client's sockets.
  warmUpMs: 3_000,
  connect: connectEtcdWriter,
  // A put creates its key: nothing to prepare.
  prepareWrites: () => Promise.resolve(),
  startProcesses: (o) => startEtcdProcesses(o),
  cannotRunAsProcesses: etcdCannotRunAsProcesses,
  planContainers: (o) => planEtcdContainers(o),
  containers: { image: 'etcd', clientPort: ETCD_CONTAINER_PORTS.client },
  checkAckedWrites: (o) => checkEtcdAckedWrites({ nodes: o.nodes, acked: o.acked }),
};

/** Not installed, or no way for this user to give a member its own /etc/hosts: why, in words. */
async function etcdCannotRunAsProcesses(): Promise<string | undefined> {
  let install;
  try {
    install = await findEtcd();
  } catch (err) {
    return (err as Error).message;
  }
  const isolation = await etcdIsolation(install);
  return 'problem' in isolation ? isolation.problem : undefined;
}
