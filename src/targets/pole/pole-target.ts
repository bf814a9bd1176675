// src/targets/pole/: the POLE node (src/node/) as a target: the Target (this file), its members as
// local processes or as containers of the docker runtime (pole-containers.ts).
//
// The POLE node (src/node/) as a target: `pole-bench node` processes that emit their events as
// JSON lines, written to through the node's own client, checked by a fence write and reads.
import { ProcessCluster } from '../../runtime/process/process-cluster.js';
import { checkAckedWrites } from './pole-checker.js';
import { connectPoleWriter } from '../../load/write-client.js';
import { planPoleContainers, POLE_CONTAINER_PORTS } from './pole-containers.js';
import { traceEveryOf } from '../../topology/trace-sampling.js';
import type { ProcessMembers, ProcessStartOptions, Target } from '../target.js';

export const poleTarget: Target = {
  name: 'pole',
  hasOracles: true,
  // Its oracles name the rule (leaders.oracle): this is only what POLE is.
  electionRule: 'pole',
  tracesWrites: true,
  protocol: 'pole',
  // measure/node-floor.ts warmUp: 3 s took 5-8 ms off the first seconds of the e2e fixture.
  warmUpMs: 3_000,
  connect: connectPoleWriter,
  // Every write of the POLE load goes to a fresh path: nothing to prepare.
  prepareWrites: () => Promise.resolve(),
  startProcesses: (o) => startPoleProcesses(o),
  planContainers: (o) => planPoleContainers(o),
  containers: { image: 'node', clientPort: POLE_CONTAINER_PORTS.client, httpPort: POLE_CONTAINER_PORTS.http },
  checkAckedWrites: (o) =>
    checkAckedWrites({ leader: o.leader, nodes: o.nodes, acked: o.acked, runId: o.runId }),
};

async function startPoleProcesses(o: ProcessStartOptions): Promise<ProcessMembers> {
  const t = o.topology;
  const c = t.cluster;
  const cluster = await ProcessCluster.start({
    nodes: t.nodes.map((n) => ({ id: n.id, sid: n.sid })),
    datacenterOf: (id) => t.node(id).datacenter,
    oracle: o.oracle ?? c.oracle,
    ...(c.initialLeader !== undefined ? { initialLeader: c.initialLeader } : {}),
    ...(c.preference ? { preference: c.preference } : {}),
    fsync: o.fsync,
    timers: c.timers,
    ...(c.measure ? { measure: c.measure as Record<string, number> } : {}),
    ...(c.resign ? { resign: c.resign } : {}),
    ...(c.syncDiffLimit !== undefined ? { syncDiffLimit: c.syncDiffLimit } : {}),
    ...(c.catchUpFrom !== undefined ? { catchUpFrom: c.catchUpFrom } : {}),
    ...(c.electionWaitFor !== undefined ? { electionWaitFor: c.electionWaitFor } : {}),
    traceEvery: traceEveryOf(t),
    // A POLE node's peer link is dialled by the higher sid.
    dialVia: (nodes) =>
      o.shape(
        nodes.map((n) => ({ id: n.id, sid: n.sid, peer: { host: '127.0.0.1', port: n.peerPort } })),
        { direction: 'higher-sid' },
      ),
  });
  return cluster;
}
