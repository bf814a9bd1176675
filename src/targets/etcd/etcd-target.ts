// src/targets/etcd/: etcd 3.4 (Raft) as a target: its members' flags and hosts files, its
// processes, its log lines as events, its JSON gateway client and its final read.
//
// Debian's etcd-server 3.4 as a target: one etcd per topology node, loaded by puts on slots
// through the v3 JSON gateway, its zap log lines as the shared events, checked by linearizable
// ranges on every live member. On every runtime (etcd-plan.ts); in containers, the pole-bench-etcd
// image.
import type { Target } from '../target.js';
import { ETCD_MEMBERS } from './etcd-member-kind.js';
import { connectEtcdWriter } from './etcd-write-client.js';

export const etcdTarget: Target = {
  name: 'etcd',
  title: 'etcd 3.4, Raft (`etcd`; recovery phases from its log, see docs/etcd.md)',
  hasOracles: false,
  electionRule: 'raft',
  tracesWrites: false,
  protocol: 'etcd',
  readModes: {
    default: { describe: 'range, linearizable: through the leader’s read index', promises: 'linearizable' },
    // Answered from the member's own state, as ZooKeeper's plain reads.
    serializable: { describe: 'range, serializable: from the member’s own state', promises: 'session' },
  },
  // Go needs no JIT: the warm-up grows the members' buffers and the client's sockets.
  warmUpMs: 3_000,
  connect: connectEtcdWriter,
  // A put creates its key: nothing to prepare.
  prepareWrites: () => Promise.resolve(),
  option: {
    flag: 'etcd-prefer',
    suiteKey: 'etcdPrefer',
    description:
      "etcd: after every election hand leadership (etcd's MoveLeader) to this member, or `oracle`: to the member the topology's oracle would elect among the living",
    handOver: '--etcd-prefer: MoveLeader',
    check: (t, prefer) =>
      prefer !== 'oracle' && !t.nodes.some((n) => n.id === prefer)
        ? `${prefer} is neither a member of ${t.name} (${t.nodes.map((n) => n.id).join(', ')}) nor "oracle"`
        : undefined,
  },
  members: ETCD_MEMBERS,
  // The plan and the final read load when a run needs them: the registry, and with it this
  // file, is loaded by every command and load agent.
  planMembers: async (p) => (await import('./etcd-plan.js')).planEtcd(p),
  checkAckedWrites: async (o) =>
    (await import('./etcd-checker.js')).checkEtcdAckedWrites({ nodes: o.nodes, acked: o.acked }),
};
