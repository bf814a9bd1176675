// Faults on members that run on other machines: kill, pause and resume of a member's task
// container, and the run's volumes removed, by a helper task on every node of the swarm.
//
// Why a helper and not each node's Docker API: the swarm's API (the manager's) has services and
// tasks but no action on a task's container, so a kill must come from the daemon of the node the
// task runs on. That daemon normally answers only on its own unix socket; reaching it from the
// harness would mean exposing every node's Docker API over TCP (with TLS certificates per node,
// or an unauthenticated root API on the network), which a swarm does not have and should not
// need for a benchmark. A global service with the node's /var/run/docker.sock mounted (as Chaos
// Mesh's chaos-daemon does) needs nothing of a node but its membership: it starts and goes with
// the run, carries the run's labels like everything else, dials the harness back like the other
// tasks, and acts only on containers and volumes labelled with its own run.
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import Docker from 'dockerode';
import { probeClock, type ClockReading } from '../../measure/clock-probe.js';
import type { ClockEstimates } from '../../measure/clock-offset.js';
import { monoMs } from '../../node/trace/write-tracer.js';
import { DOCKER_LABELS } from '../docker/docker-labels.js';
import { execIn } from '../docker/container-exec.js';
import { killContainer, killInstant } from '../docker/container-kill.js';
import { serveRpc, type TaskRpc } from './task-rpc.js';
import { wallNowMs } from '../../util/wall-clock.js';

/** How long a volume may stay in use after its member's service is removed (its container going). */
const VOLUME_FREE_MS = 20_000;

/** The roles of the volumes a run makes: members' data (and start gates, in runs of 2026-11-26 and before). */
export const RUN_VOLUME_ROLES = ['node', 'gate'];

/** The task's side: the node's daemon, acting on the run `runId`'s containers and volumes only. */
export async function serveFaults(socket: Socket, runId: string, docker = new Docker()): Promise<void> {
  const ours = async (id: string): Promise<Docker.Container> => {
    const c = docker.getContainer(id);
    const info = await c.inspect();
    if (info.Config.Labels?.[DOCKER_LABELS.run] !== runId)
      throw new Error(`container ${id.slice(0, 12)} is not of run ${runId}`);
    return c;
  };
  const runFilter = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  /** The node's hostname, asked of its Docker once. */
  let hostName: Promise<string> | undefined;
  await serveRpc(socket, {
    /**
     * Resolves with the wall ms, on this node's clock, when the kill struck (container-kill.ts says
     * which of the daemon's stamps that is, and why neither end of the API call).
     */
    kill: async (a: { container: string }) =>
      killInstant(await killContainer(docker, await ours(a.container), wallNowMs)),
    pause: async (a: { container: string }) => void (await (await ours(a.container)).pause()),
    /** A command in one of the run's containers (tc and ip for netem shaping): its stdout; throws on a non-zero exit. */
    exec: async (a: { container: string; argv: string[] }) => execIn(await ours(a.container), a.argv),
    unpause: async (a: { container: string }) => void (await (await ours(a.container)).unpause()),
    /**
     * This node's clocks, for the harness's offset probes (measure/clock-probe.ts): the helper is a
     * process of the node's kernel, so its monotonic clock is every member's on the node, and its
     * wall clock theirs unless the node's clock is stepped while the run lasts.
     */
    clock: async () => ({ wallMs: wallNowMs(), monoMs: monoMs() }),
    /**
     * The run's containers on this node, but the helpers', removed at once (SIGKILL): at the
     * teardown, once their services are removed. The swarm's own shutdown of a removed service's
     * tasks reached the nodes 4-5 s after the removal on the local swarm, then took seconds more;
     * nothing in them is wanted by then (a member's log is fsynced as it goes, and its volume stays
     * until removeVolumes).
     */
    removeContainers: async () => {
      const list = (await docker.listContainers({ all: true, filters: runFilter })).filter(
        (c) => c.Labels?.[DOCKER_LABELS.role] !== 'faults',
      );
      await Promise.allSettled(list.map((c) => docker.getContainer(c.Id).remove({ force: true })));
      return list.length;
    },
    /**
     * Once the run's other containers on this node are gone (its services removed, the node takes a
     * moment to remove their containers: a teardown that returned before counted an agent's as left),
     * the run's members' volumes on this node.
     */
    removeVolumes: async () => {
      await containersGone(docker, runId);
      return removeVolumes(docker, (labels) => labels[DOCKER_LABELS.run] === runId);
    },
    /**
     * CPU used so far by every container of the run on this node (cgroup accounting, as the node's
     * Docker reports it: every process of the container, its syscalls included), and whether this
     * node is the harness's own kernel (its boot id is the one the run's labels carry).
     */
    cpu: async () => {
      const here = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
        (t) => t.trim(),
        () => 'unknown',
      );
      hostName ??= docker.info().then(
        (i: { Name?: string }) => i.Name ?? 'unknown',
        () => 'unknown',
      );
      const host = await hostName;
      const list = await docker.listContainers({ filters: runFilter });
      const read = await Promise.all(
        list.map(async (c): Promise<ContainerCpu | null> => {
          // One reading, not the two a second apart Docker takes by default to give a rate.
          const st = await docker
            .getContainer(c.Id)
            .stats({ stream: false, 'one-shot': true })
            .catch(() => null);
          const ns = st?.cpu_stats?.cpu_usage?.total_usage;
          // A container that is ending reads 0: no reading.
          if (typeof ns !== 'number' || ns <= 0) return null;
          return {
            id: c.Id,
            role: c.Labels?.[DOCKER_LABELS.role] ?? '',
            node: c.Labels?.[DOCKER_LABELS.node] ?? '',
            host,
            ns,
            harnessKernel: c.Labels?.[DOCKER_LABELS.bootId] === here,
          };
        }),
      );
      return read.filter((c): c is ContainerCpu => c !== null);
    },
    /** Volumes of runs the swarm no longer has a service of (a harness that died left them). */
    reapVolumes: (a: { liveRuns: string[] }) =>
      removeVolumes(docker, (labels) => !a.liveRuns.includes(labels[DOCKER_LABELS.run] ?? '')),
  });
}

/** One container's CPU so far, as a node's fault helper reads it. */
export interface ContainerCpu {
  readonly id: string;
  /** Its role label (node, agent, relay, faults) and the member or data center it serves. */
  readonly role: string;
  readonly node: string;
  /** The swarm node's hostname. */
  readonly host: string;
  /** CPU ns since the container started (cgroup). */
  readonly ns: number;
  /** The node runs on the harness's kernel (a local swarm's Docker-in-Docker host). */
  readonly harnessKernel: boolean;
}

/** Waits (bounded) until no container of the run but the fault helpers' is on this node. */
async function containersGone(docker: Docker, runId: string): Promise<void> {
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${runId}`] });
  const deadline = Date.now() + VOLUME_FREE_MS;
  while (Date.now() < deadline) {
    const left = (await docker.listContainers({ all: true, filters }).catch(() => [])).filter(
      (c) => c.Labels?.[DOCKER_LABELS.role] !== 'faults',
    );
    if (left.length === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function removeVolumes(
  docker: Docker,
  wanted: (labels: Record<string, string>) => boolean,
): Promise<string[]> {
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.managed}=true`] });
  // Members' and gates' volumes only: other pole-bench work on the node may label volumes too.
  const vols = ((await docker.listVolumes({ filters })).Volumes ?? []).filter(
    (v) => RUN_VOLUME_ROLES.includes(v.Labels?.[DOCKER_LABELS.role] ?? '') && wanted(v.Labels ?? {}),
  );
  const removed: string[] = [];
  const deadline = Date.now() + VOLUME_FREE_MS;
  for (const v of vols) {
    for (;;) {
      // The member's container is removed by its node shortly after its service: until then the
      // volume is in use; a bounded wait, then it is left for `pole-bench clean`.
      const err = await docker
        .getVolume(v.Name)
        .remove()
        .then(() => null)
        .catch((e: Error) => e);
      if (err === null || /no such volume/i.test(err.message)) {
        removed.push(v.Name);
        break;
      }
      if (!/in use/i.test(err.message) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return removed;
}

/** The harness's side: the helpers by node id. */
export class FaultHelpers {
  private readonly byNode = new Map<string, TaskRpc>();

  add(nodeId: string, rpc: TaskRpc): void {
    this.byNode.set(nodeId, rpc);
  }

  get nodes(): string[] {
    return [...this.byNode.keys()];
  }

  private on(nodeId: string): TaskRpc {
    const rpc = this.byNode.get(nodeId);
    if (!rpc) throw new Error(`no fault helper on swarm node ${nodeId}`);
    return rpc;
  }

  /** Resolves with the wall ms of the kill, as the helper took it just before its kill. */
  kill(nodeId: string, container: string): Promise<number> {
    return this.on(nodeId).call<number>('kill', { container });
  }

  exec(nodeId: string, container: string, argv: string[]): Promise<string> {
    return this.on(nodeId).call<string>('exec', { container, argv }, 15_000);
  }

  pause(nodeId: string, container: string): Promise<void> {
    return this.on(nodeId).call('pause', { container });
  }

  unpause(nodeId: string, container: string): Promise<void> {
    return this.on(nodeId).call('unpause', { container });
  }

  /**
   * Every node's clocks against the harness's, by node id: one burst of round trips per node, one
   * node after the other (bursts at once would queue behind each other in the harness and widen
   * every round trip, hence every ±).
   */
  async probeClocks(): Promise<Map<string, ClockEstimates>> {
    const out = new Map<string, ClockEstimates>();
    for (const [node, rpc] of this.byNode)
      out.set(node, await probeClock(() => rpc.call<ClockReading>('clock', {}, 2_000)));
    return out;
  }

  /** Every container of the run on every node that answers, with its CPU so far. */
  async cpu(): Promise<ContainerCpu[]> {
    const each = await Promise.allSettled(
      [...this.byNode.values()].map((r) => r.call<ContainerCpu[]>('cpu', {}, 5_000)),
    );
    return each.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  }

  /** Every node's containers of this run but the helpers', removed at once. */
  async removeContainers(): Promise<void> {
    await Promise.allSettled([...this.byNode.values()].map((r) => r.call('removeContainers', {}, 30_000)));
  }

  /** Every node's volumes of this run; resolves with what each removed. */
  async removeVolumes(): Promise<string[]> {
    const each = await Promise.allSettled(
      [...this.byNode.values()].map((r) => r.call<string[]>('removeVolumes', {}, 30_000)),
    );
    return each.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  }

  async reapVolumes(liveRuns: readonly string[]): Promise<void> {
    await Promise.allSettled(
      [...this.byNode.values()].map((r) => r.call('reapVolumes', { liveRuns }, 30_000)),
    );
  }

  close(): void {
    for (const r of this.byNode.values()) r.close();
  }
}
