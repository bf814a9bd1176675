// The POLE node as containers of the docker runtime: the node image's `node --config` in each
// holder's namespace, on fixed ports (every node has an address of its own), with its config file
// written to the mounted config dir. Its peers are dialled where the shaping says: the relay on
// the host, or each other directly when netem shapes the holders' traffic.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseNodeEventLine } from '../../vocabulary/node-events.js';
import type { ContainerPlan, ContainerStartOptions } from '../target.js';
import { traceEveryOf } from '../../topology/trace-sampling.js';
import { nodeContainerEnv } from '../../node/node-process-env.js';

/** Ports inside every node's own network namespace. */
export const POLE_CONTAINER_PORTS = { peer: 7000, client: 7001, http: 7002 } as const;

export async function planPoleContainers(o: ContainerStartOptions): Promise<ContainerPlan> {
  const t = o.topology;
  const c = t.cluster;
  const ports = POLE_CONTAINER_PORTS;
  // A POLE node's peer link is dialled by the higher sid.
  const dial = await o.shape(
    t.nodes.map((n) => ({
      id: n.id,
      sid: n.sid,
      peer: { host: o.addresses.get(n.id) as string, port: ports.peer },
    })),
    { direction: 'higher-sid' },
  );
  for (const n of t.nodes) {
    const config = {
      id: n.id,
      sid: n.sid,
      datacenter: n.datacenter,
      listen: { host: '0.0.0.0', peerPort: ports.peer, clientPort: ports.client, httpPort: ports.http },
      peers: t.nodes.filter((p) => p.id !== n.id).map((p) => ({ id: p.id, sid: p.sid, ...dial(n.id, p.id) })),
      dataDir: '/data',
      fsync: o.fsync,
      oracle: o.oracle ?? c.oracle,
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
    await writeFile(join(o.configDir, `${n.id}.json`), JSON.stringify(config, null, 2));
  }
  return {
    image: 'node',
    members: t.nodes.map((n) => ({
      id: n.id,
      cmd: ['node', '--config', `/config/${n.id}.json`],
      env: nodeContainerEnv(),
      translate: parseNodeEventLine,
    })),
    clientPort: ports.client,
    httpPort: ports.http,
    // POLE elects the configured initial leader whatever the order: all at once.
    startOrder: { first: t.nodes.map((n) => n.id), then: [] },
    startTimeoutMs: 30_000,
  };
}
