// src/targets/zookeeper/: stock ZooKeeper 3.8 as a target: its config, its members (zk-members.ts), its log lines as events, its write client and final read, and its own client (client/).
//
// Stock Apache ZooKeeper 3.8 (Debian's package) as a target: QuorumPeerMain JVMs, whose log lines
// become the shared events (zk-log-events.ts), loaded by setData on pre-created slots through the
// harness's own client (client/), and checked by sync + reads on every live member.
import type { Target } from '../target.js';
import { ZK_MEMBERS } from './zk-member-kind.js';
import { connectZkWriter, prepareZkSlots } from './zk-write-client.js';

export const zookeeperTarget: Target = {
  name: 'zookeeper',
  title: 'stock Apache ZooKeeper 3.8 (`zookeeper`; recovery phases from its log, see docs/zookeeper.md)',
  hasOracles: false,
  electionRule: 'zookeeper-fle',
  tracesWrites: false,
  protocol: 'zookeeper',
  // A member answers getData from its own state, which may lag the leader's: ZooKeeper promises
  // each session its own order, and linearizable reads only after a sync.
  readModes: {
    default: { describe: 'getData, plain: from the member’s own state', promises: 'session' },
    // A sync makes the member catch up with the leader before it answers.
    sync: { describe: 'sync, then getData', promises: 'linearizable' },
  },
  // The JVMs' JIT: with 3 s of warm-up, a 40 s run of the e2e fixture (200 writes/s, seed 21,
  // --duration 40s --kill-at 30s) had per-second p99s of 15.5-42.1 ms in its first 11 s against
  // 13.0-29.8 ms (median 15.6) from then to the kill.
  warmUpMs: 10_000,
  connect: connectZkWriter,
  prepareWrites: (ep, dir) => prepareZkSlots(ep, dir),
  members: ZK_MEMBERS,
  // The plan and the final read load when a run needs them: the registry, and with it this
  // file, is loaded by every command and load agent.
  planMembers: async (p) => (await import('./zk-members.js')).planZkMembers(p),
  checkAckedWrites: async (o) =>
    (await import('./zk-checker.js')).checkZkAckedWrites({ nodes: o.nodes, acked: o.acked }),
};
