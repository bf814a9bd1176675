// The POLE node's members, wherever they run: `pole-bench node --config <file>`, one config file
// per member with its ports, its peers where the shaping says to dial them (the relay, or each
// other directly when netem shapes the traffic), its oracle and timers, and its events as JSON
// lines on stdout. On this machine a node also stops when the harness closes its stdin.
import { nodeTunables } from '../../node/node-process-env.js';
import { parseNodeEventLine } from '../../vocabulary/node-events.js';
import { traceEveryOf } from '../../topology/trace-sampling.js';
import { allAtOnce, THIS_CLI, type MemberPlan, type Placement } from '../member-plan.js';

export async function planPoleMembers(p: Placement): Promise<MemberPlan> {
  const t = p.topology;
  const c = t.cluster;
  // A POLE node's peer link is dialled by the higher sid; the relay picks its routes' ports.
  const dial = await p.shape(
    t.nodes.map((n) => ({
      id: n.id,
      sid: n.sid,
      peer: { host: p.hostOf(n.id), port: p.portsOf(n.id).peer! },
    })),
    { direction: 'higher-sid', keepPorts: false },
  );
  const configOf = (id: string) => {
    const n = t.node(id);
    const ports = p.portsOf(id);
    return {
      id: n.id,
      sid: n.sid,
      datacenter: n.datacenter,
      listen: { host: p.bindHost, peerPort: ports.peer, clientPort: ports.client, httpPort: ports.http },
      peers: t.nodes.filter((q) => q.id !== n.id).map((q) => ({ id: q.id, sid: q.sid, ...dial(n.id, q.id) })),
      dataDir: p.dataDir(n.id),
      fsync: p.fsync,
      oracle: p.oracle ?? c.oracle,
      ...(c.initialLeader !== undefined ? { initialLeader: c.initialLeader } : {}),
      ...(c.preference ? { preference: c.preference } : {}),
      timers: c.timers,
      ...(c.measure ? { measure: c.measure } : {}),
      ...(c.resign ? { resign: c.resign } : {}),
      ...(c.syncDiffLimit !== undefined ? { syncDiffLimit: c.syncDiffLimit } : {}),
      ...(c.catchUpFrom !== undefined ? { catchUpFrom: c.catchUpFrom } : {}),
      ...(c.electionWaitFor !== undefined ? { electionWaitFor: c.electionWaitFor } : {}),
      traceEvery: traceEveryOf(t),
    };
  };
  return {
    files: t.nodes.map((n) => ({ name: `${n.id}.json`, text: JSON.stringify(configOf(n.id), null, 2) })),
    members: t.nodes.map((n) => ({
      id: n.id,
      program: THIS_CLI,
      args: [
        'node',
        '--config',
        p.configPath(`${n.id}.json`),
        ...(p.onThisMachine ? ['--stop-with-stdin'] : []),
      ],
      env: { GLIBC_TUNABLES: nodeTunables(process.env['GLIBC_TUNABLES']) },
      translate: parseNodeEventLine,
    })),
    // POLE elects the configured initial leader whatever the order.
    startOrder: allAtOnce(t),
  };
}
