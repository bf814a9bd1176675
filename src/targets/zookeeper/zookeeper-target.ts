// Stock Apache ZooKeeper 3.8 (Debian's package) as a target: QuorumPeerMain JVMs, whose log lines
// become the shared events (zk-log-events.ts), loaded by setData on pre-created slots through the
// harness's own client (client/), and checked by sync + reads on every live member.
import type { Target } from '../target.js';
import { checkZkAckedWrites } from './zk-checker.js';
import { startZkProcesses } from './zk-process-ensemble.js';
import { connectZkWriter, prepareZkSlots } from './zk-write-client.js';

export const zookeeperTarget: Target = {
  name: 'zookeeper',
  hasOracles: false,
  protocol: 'zookeeper',
  // The JVMs' JIT: on the e2e fixture (200 writes/s) with 3 s of warm-up the first 10 s of the
  // load ran 5-20 ms over their later p99 (docs/zookeeper.md).
  warmUpMs: 10_000,
  connect: connectZkWriter,
  prepareWrites: (ep, dir) => prepareZkSlots(ep, dir),
  startProcesses: (o) => startZkProcesses(o),
  checkAckedWrites: (o) => checkZkAckedWrites({ nodes: o.nodes, acked: o.acked }),
};
