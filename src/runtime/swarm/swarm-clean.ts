// Reaping the swarm runtime's leftovers: services, overlay networks, configs and volumes carrying
// pole-bench's labels (configs: made by runs of earlier builds, whose members got their files as
// swarm configs). `pole-bench clean` removes all of them; a swarm run starting removes those
// whose harness is gone. Services go first (their tasks hold the networks, configs and volumes).
// Volumes live on the node a member ran on: this removes the manager's own (the one-node swarm's,
// all of them); a run removes every node's through its fault helpers (fault-helper.ts).
import Docker from 'dockerode';
import { DOCKER_LABELS, isOrphan } from '../docker/docker-labels.js';
import { RUN_VOLUME_ROLES } from './fault-helper.js';

export interface SwarmCleanResult {
  readonly services: string[];
  readonly networks: string[];
  readonly configs: string[];
  readonly volumes: string[];
  /** Runs that still have a service (theirs is not a leftover), for the helpers' volume reaping. */
  readonly liveRuns: string[];
}

/** How long removed services may take to let go of their networks and volumes. */
const RELEASE_MS = 30_000;

/** What the daemon is to a swarm: a manager, a worker, or in none. */
export async function swarmRole(docker: Docker): Promise<'manager' | 'worker' | 'none'> {
  const info = (await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  if (info.Swarm?.LocalNodeState !== 'active') return 'none';
  return info.Swarm.ControlAvailable === true ? 'manager' : 'worker';
}

/** Whether the daemon is a swarm manager (else there is nothing of the swarm runtime to clean). */
export async function isSwarmManager(docker: Docker): Promise<boolean> {
  return (await swarmRole(docker)) === 'manager';
}

export async function cleanSwarm(
  opts: { docker?: Docker; orphansOnly?: boolean; runId?: string } = {},
): Promise<SwarmCleanResult> {
  const docker = opts.docker ?? new Docker();
  const none: SwarmCleanResult = { services: [], networks: [], configs: [], volumes: [], liveRuns: [] };
  if (!(await isSwarmManager(docker))) return none;
  const label = opts.runId ? `${DOCKER_LABELS.run}=${opts.runId}` : `${DOCKER_LABELS.managed}=true`;
  const filters = JSON.stringify({ label: [label] });
  const wanted = (labels: Record<string, string> | undefined): boolean =>
    !opts.orphansOnly || isOrphan(labels);
  type Svc = { ID: string; Spec: { Name: string; Labels?: Record<string, string> } };
  const all = (await docker.listServices({ filters })) as unknown as Svc[];
  const gone = all.filter((s) => wanted(s.Spec.Labels));
  const liveRuns = [
    ...new Set(all.filter((s) => !gone.includes(s)).map((s) => s.Spec.Labels?.[DOCKER_LABELS.run] ?? '')),
  ];
  const services: string[] = [];
  for (const s of gone)
    await docker
      .getService(s.ID)
      .remove()
      .then(() => services.push(`${s.Spec.Name} (run ${s.Spec.Labels?.[DOCKER_LABELS.run]})`))
      .catch(() => undefined); // removed meanwhile by its own run
  const deadline = Date.now() + RELEASE_MS;
  const networks = await removeUntilFree(
    async () =>
      (await docker.listNetworks({ filters }))
        .filter((n) => n.Driver === 'overlay' && wanted(n.Labels))
        .map((n) => ({ id: n.Id, name: `${n.Name} (run ${n.Labels?.[DOCKER_LABELS.run]})` })),
    (id) => docker.getNetwork(id).remove(),
    deadline,
  );
  type Cfg = { ID: string; Spec: { Name: string; Labels?: Record<string, string> } };
  const configs = await removeUntilFree(
    async () =>
      ((await docker.listConfigs({ filters })) as unknown as Cfg[])
        .filter((c) => wanted(c.Spec.Labels))
        .map((c) => ({ id: c.ID, name: c.Spec.Name })),
    (id) => docker.getConfig(id).remove(),
    deadline,
  );
  const volumes = await removeUntilFree(
    async () =>
      ((await docker.listVolumes({ filters })).Volumes ?? [])
        // The run's own volumes only: other pole-bench work may label volumes of its own.
        .filter((v) => RUN_VOLUME_ROLES.includes(v.Labels?.[DOCKER_LABELS.role] ?? ''))
        .filter((v) => !liveRuns.includes(v.Labels?.[DOCKER_LABELS.run] ?? ''))
        .filter((v) => wanted(v.Labels ?? undefined))
        .map((v) => ({ id: v.Name, name: v.Name })),
    (id) => docker.getVolume(id).remove(),
    deadline,
  );
  return { services, networks, configs, volumes, liveRuns };
}

/**
 * Removes every listed object, again while some are still in use (a removed service's tasks go
 * a moment later), until none is left or the deadline passes; resolves with what it removed.
 */
async function removeUntilFree(
  list: () => Promise<Array<{ id: string; name: string }>>,
  remove: (id: string) => Promise<unknown>,
  deadline: number,
): Promise<string[]> {
  const removed: string[] = [];
  for (;;) {
    const left = await list().catch(() => []);
    let busy = 0;
    for (const o of left)
      await remove(o.id).then(
        () => removed.push(o.name),
        (err: Error) => {
          if (!/no such|not found/i.test(err.message)) busy++;
        },
      );
    if (busy === 0 || Date.now() > deadline) return removed;
    await new Promise((r) => setTimeout(r, 250));
  }
}
