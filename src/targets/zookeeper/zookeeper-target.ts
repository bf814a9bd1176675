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
  connect: connectZkWriter,
  prepareWrites: (ep, dir) => prepareZkSlots(ep, dir),
  startProcesses: (o) => startZkProcesses(o),
  checkAckedWrites: (o) => checkZkAckedWrites({ nodes: o.nodes, acked: o.acked }),
};
