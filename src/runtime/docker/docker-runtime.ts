// src/runtime/docker/: the docker runtime: a network and holder + member containers per run, their labels
// and reaping (`pole-bench clean`), the dry run, and the bridge addresses relay routes need.
//
// The Docker runtime: a bridge network per run; per member a "holder" container that owns the
// network namespace (NET_ADMIN, so tc can shape its egress) and the member container joined to it,
// so a killed or restarted member keeps its address and its qdiscs. What the member containers
// run (the POLE node, ZooKeeper) the target plans (Target.planMembers); this file only keeps
// containers, their output and their events. Every container and network carries the run's
// labels, so `pole-bench clean` (or the next run) can reap what a crashed harness left. Shaping is
// the relay on the host (members reach it through the bridge: its gateway, or an address of the
// bridge per ordered pair where the target keeps its own port numbers) or, where the kernel has
// it, netem inside each holder.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import Docker from 'dockerode';
import { AgentProcess } from '../../load/agent-process.js';
import type { IntervalMessage } from '../../load/agent-protocol.js';
import type { NodeId } from '../../vocabulary/names.js';
import { EventBook } from '../event-book.js';
import { OutputLines } from '../output-lines.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';

import type { CpuGroups, CpuProcess } from '../../measure/cpu-sampler.js';
import { cgroupProcsFile, procsIn } from '../../measure/container-procs.js';
import type { Topology } from '../../topology/topology.js';
import { cleanDocker } from './docker-clean.js';
import { execIn } from './container-exec.js';
import { killContainer, killInstant } from './container-kill.js';
import { DOCKER_LABELS, runLabels } from './docker-labels.js';
import { createShaper } from '../../shaping/create-shaper.js';
import type { Shaper } from '../../shaping/shaper.js';
import type { Runtime } from '../runtime.js';
import type { Address, ContainerImage, ShapingChoice } from '../../vocabulary/names.js';
import { poleTarget } from '../../targets/pole/pole-target.js';
import type { Target } from '../../targets/target.js';
import {
  runPlacement,
  type MemberKind,
  type MemberShapePlan,
  type Placement,
  type PlannedMember,
  type RunSettings,
} from '../../targets/member-plan.js';
import type { Dial } from '../../shaping/shaper.js';
import { containerArgv, containerEnv, prepareLines } from '../container-command.js';
import { startPlan, startedOver } from '../start-order.js';
import type { RelayedNode } from '../../shaping/shaper.js';
import { addBridgeAddresses, bridgeName, pairAddressPlan, type PairAddresses } from './bridge-addresses.js';
import { wallNowMs } from '../../util/wall-clock.js';

/** A member's data directory: its container's own, so it outlives a kill and a restart. */
const DATA_DIR = '/data';
/** Where in the config directory each member's data files wait to be copied (prepareLines). */
const MEMBER_FILES = 'members';

/** A holder only keeps the namespace alive; it exits on `docker stop`. */
const HOLDER_ENTRYPOINT = [
  'node',
  '-e',
  'process.on("SIGTERM",()=>process.exit(0));setInterval(()=>{},1<<30)',
];

export interface DockerRuntimeOptions {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  /** The node image: holders and agents run it, and the POLE target's members. */
  readonly image: string;
  /** The system under test (default the POLE node). */
  readonly target?: Target;
  /** Further images by what the target plans (the ZooKeeper image for the zookeeper target). */
  readonly images?: Partial<Record<ContainerImage, string>>;
  readonly oracle?: string;
  /** The value of the target's own run option (Target.option). */
  readonly targetOption?: string;
  readonly fsync?: boolean;
  readonly docker?: Docker;
  /** Runs every planned tc command in a holder (netem shaping); given by the caller that planned them. */
  readonly tcPlan?: (addresses: ReadonlyMap<NodeId, string>) => Map<NodeId, string[][]>;
}

interface Slot {
  readonly id: NodeId;
  holder?: Docker.Container;
  node?: Docker.Container;
  ip?: string;
  running: boolean;
  member?: PlannedMember;
  /** The member container's cgroup.procs, for the self-check (null: not found). */
  procs?: string | null;
  /** Its output, for the error when it dies before it started. */
  readonly output: OutputLines;
}

/**
 * Where the docker runtime places a target's members: each on its holder's address with the
 * target's customary ports, listening on every address of its namespace, peers abroad through
 * the relay at an address of each ordered pair (or directly, with netem), files in the read-only
 * /config, data in the container's own /data.
 */
export function dockerPlacement(
  t: Topology,
  o: RunSettings & {
    kind: MemberKind;
    addresses: ReadonlyMap<NodeId, string>;
    shape: Placement['shape'];
  },
): Placement {
  return {
    ...runPlacement(t, o),
    onThisMachine: false,
    portsOf: () => o.kind.ports,
    bindHost: '0.0.0.0',
    hostOf: (id) => {
      const a = o.addresses.get(id);
      if (a === undefined) throw new Error(`no address for ${id}`);
      return a;
    },
    routes: 'per-pair',
    shape: o.shape,
    configPath: (name) => `/config/${name}`,
    dataDir: () => DATA_DIR,
  };
}

/** A member container's whole command: a shell that puts its data files and hosts lines first, if it has any. */
export function memberCommand(m: PlannedMember): string[] {
  const prepare = prepareLines(m, DATA_DIR, (name) => `/config/${MEMBER_FILES}/${m.id}/${name}`);
  const argv = containerArgv(m);
  return prepare.length === 0 ? argv : ['sh', '-c', [...prepare, 'exec "$@"'].join('\n'), m.id, ...argv];
}

export class DockerRuntime implements Runtime {
  readonly name = 'docker' as const;
  readonly target: Target;
  readonly shaping: Shaper;
  readonly runId: string;
  private readonly book = new EventBook();
  private readonly docker: Docker;
  private readonly slots = new Map<NodeId, Slot>();
  private readonly agentProcs = new Map<string, string | null>();
  private readonly waiters = new Set<{
    pred: (e: ClusterEvent) => boolean;
    resolve: (e: ClusterEvent) => void;
  }>();
  private network: Docker.Network | undefined;
  private configDir: string | undefined;
  private tornDown = false;

  constructor(
    private readonly topology: Topology,
    private readonly opts: DockerRuntimeOptions,
  ) {
    this.docker = opts.docker ?? new Docker();
    this.target = opts.target ?? poleTarget;
    this.runId = `${Date.now().toString(36)}-${opts.seed.toString(36)}`;
    for (const n of topology.nodes)
      this.slots.set(n.id, { id: n.id, running: false, output: new OutputLines() });
    this.shaping = createShaper(opts.shaping, topology, {
      seed: opts.seed,
      ...(opts.tcPlan ? { netemPlan: opts.tcPlan } : {}),
    });
  }

  private labels(role: string, node?: NodeId): Record<string, string> {
    return {
      ...runLabels(this.runId),
      [DOCKER_LABELS.role]: role,
      ...(node ? { [DOCKER_LABELS.node]: node } : {}),
    };
  }

  get networkName(): string {
    return `pole-bench-${this.runId}`;
  }

  /** Node addresses on a /24: holder of sid k gets .(10 + k); the gateway is .1. */
  addressesIn(subnet: string): Map<NodeId, string> {
    const prefix = subnet.split('.').slice(0, 3).join('.');
    return new Map(this.topology.nodes.map((n) => [n.id, `${prefix}.${10 + n.sid}`]));
  }

  /**
   * A subnet for this run's network: 10.231.x.0/24 with x from the seed, the next one when Docker
   * says it overlaps another network. Fixed addresses make the tc filters (and --dry-run) exact.
   * Docker hands out addresses (the agents') from the lower half only: the upper half is for the
   * relay's per-pair addresses (bridge-addresses.ts).
   */
  private async createNetwork(): Promise<{ subnet: string; gateway: string }> {
    for (let attempt = 0; attempt < 32; attempt++) {
      const x = (this.opts.seed + attempt * 37) % 250;
      const subnet = `10.231.${x}.0/24`;
      const gateway = `10.231.${x}.1`;
      try {
        this.network = await this.docker.createNetwork({
          Name: this.networkName,
          Driver: 'bridge',
          Labels: this.labels('network'),
          IPAM: { Config: [{ Subnet: subnet, Gateway: gateway, IPRange: `10.231.${x}.0/25` }] },
        });
        return { subnet, gateway };
      } catch (err) {
        if (!/overlap/i.test((err as Error).message)) throw err;
      }
    }
    throw new Error('no free 10.231.x.0/24 subnet for the run network');
  }

  async start(): Promise<void> {
    const t = this.topology;
    const netName = this.networkName;
    // What runs whose harness died (SIGKILL, a crash) left behind goes now, before anything new.
    await cleanDocker({ docker: this.docker, orphansOnly: true });
    const { subnet, gateway } = await this.createNetwork();
    const addresses = this.addressesIn(subnet);
    // Holders first: they own the addresses that go into every node's config.
    await Promise.all(
      [...this.slots.values()].map(async (s) => {
        s.ip = addresses.get(s.id);
        s.holder = await this.docker.createContainer({
          Image: this.opts.image,
          name: `pole-bench-${this.runId}-${s.id}-net`,
          Entrypoint: HOLDER_ENTRYPOINT,
          Labels: this.labels('holder', s.id),
          HostConfig: { NetworkMode: netName, CapAdd: ['NET_ADMIN'] },
          NetworkingConfig: {
            EndpointsConfig: { [netName]: { IPAMConfig: { IPv4Address: s.ip as string } } },
          },
        });
        await s.holder.start();
      }),
    );
    this.configDir = await mkdtemp(join(tmpdir(), 'pole-bench-docker-'));
    const pairs = pairAddressPlan(t, subnet);
    const kind = this.target.members;
    const placement = dockerPlacement(t, {
      ...this.opts,
      kind,
      addresses,
      shape: (members, p) => this.shape(members, p, { gateway, addresses, pairs }),
    });
    const plan = await this.target.planMembers(placement);
    const configDir = this.configDir;
    for (const f of plan.files) await writeFile(join(configDir, f.name), f.text);
    const image = this.imageOf(kind.image);
    for (const m of plan.members) {
      const s = this.slot(m.id);
      s.member = m;
      for (const f of m.dataFiles ?? []) {
        await mkdir(join(configDir, MEMBER_FILES, m.id), { recursive: true });
        await writeFile(join(configDir, MEMBER_FILES, m.id, f.name), f.text);
      }
      s.node = await this.docker.createContainer({
        Image: image,
        name: `pole-bench-${this.runId}-${m.id}`,
        // The whole command line: the node image's entrypoint is in it (container-command.ts).
        Entrypoint: [],
        Cmd: memberCommand(m),
        Env: containerEnv(m),
        Labels: this.labels('node', m.id),
        // Init: a Node or Java PID 1 would ignore SIGTERM; docker's init forwards it (clean `docker stop`).
        HostConfig: {
          NetworkMode: `container:${s.holder!.id}`,
          Binds: [`${configDir}:/config:ro`],
          Init: true,
        },
      });
    }
    await startPlan(
      plan,
      async (ids) => {
        await Promise.all(ids.map((id) => this.startNode(id)));
      },
      startedOver(this.book, this),
      kind.startTimeoutMs,
    );
  }

  /** The image tag for what a plan runs. */
  private imageOf(image: MemberKind['image']): string {
    if (image === 'node') return this.opts.image;
    const tag = this.opts.images?.[this.target.name];
    if (!tag)
      throw new Error(`the ${this.target.name} target needs its own image, which this run was not given`);
    return tag;
  }

  /**
   * Installs the shaping for a target's members: the relay listens on the bridge (its gateway, or
   * the per-pair addresses a plan with listenAt asks for, added to the bridge first, and removed
   * with it); netem runs its tc commands in each holder.
   */
  private async shape(
    members: readonly RelayedNode[],
    plan: MemberShapePlan,
    net: { gateway: string; addresses: ReadonlyMap<NodeId, string>; pairs: PairAddresses },
  ): Promise<Dial> {
    if (this.shaping.kind === 'relay' && plan.keepPorts) {
      const wanted = net.pairs.all().filter((a) => a !== net.gateway);
      await addBridgeAddresses(bridgeName(this.network!.id), wanted);
    }
    return this.shaping.install({
      members,
      plan: {
        direction: plan.direction,
        ...(plan.keepPorts
          ? { listenAt: (from, to, _port, at) => ({ host: net.pairs.hostOf(from, to), port: at.port }) }
          : {}),
        ...(plan.retryConnectMs !== undefined ? { retryConnectMs: plan.retryConnectMs } : {}),
      },
      listenHost: net.gateway,
      addresses: net.addresses,
      exec: (id, argv) => this.exec(this.slot(id).holder!, argv),
    });
  }

  private slot(id: NodeId): Slot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no node ${id} in this run`);
    return s;
  }

  /**
   * Attach to the member's output, start it, and wait for its `started` event; a member whose
   * container exits first fails the start at once, with what it said.
   */
  private async startNode(id: NodeId): Promise<void> {
    const s = this.slot(id);
    const member = s.member!;
    const since = this.events.length;
    const stream = await s.node!.attach({ stream: true, stdout: true, stderr: true });
    const out = new PassThrough();
    const err = new PassThrough();
    s.node!.modem.demuxStream(stream, out, err);
    s.output.clear();
    const keep = (line: string): void => s.output.keep(line);
    createInterface({ input: out }).on('line', (line) => {
      const evs = member.translate(line);
      if (evs.length === 0 && !line.startsWith('{')) keep(line);
      for (const e of evs) this.book.push(e);
    });
    createInterface({ input: err }).on('line', keep);
    await s.node!.start();
    s.running = true;
    s.procs = cgroupProcsFile((await s.node!.inspect()).State.Pid);
    const timeoutMs = this.target.members.startTimeoutMs;
    let settled = false;
    const died = new Promise<never>((_, reject) => {
      void s
        .node!.wait()
        .then((r: { StatusCode?: number }) => {
          if (!settled)
            reject(
              new Error(
                `${id} exited (status ${r.StatusCode}) before it started; output: ${s.output.toString()}`,
              ),
            );
        })
        .catch(() => undefined);
    });
    try {
      await Promise.race([this.waitFor((e) => e.node === id && e.ev === 'started', timeoutMs, since), died]);
    } finally {
      settled = true;
    }
  }

  /** The first event (from index `since` on) matching `pred`, waiting up to timeoutMs for it. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.book.waitFor(pred, timeoutMs, since);
  }

  get events(): readonly ClusterEvent[] {
    return this.book.events;
  }

  /** Resolves with the wall ms the kill struck (container-kill.ts says how that is known). */
  async kill(id: NodeId): Promise<number> {
    const s = this.slot(id);
    const k = await killContainer(this.docker, s.node!, wallNowMs);
    s.running = false;
    return killInstant(k);
  }

  restart(id: NodeId): Promise<void> {
    return this.startNode(id);
  }

  /** The cgroup freezer: every process of the node stops (a signal would only reach its init). */
  pause(id: NodeId): void {
    void this.slot(id).node?.pause();
  }

  resume(id: NodeId): void {
    void this.slot(id).node?.unpause();
  }

  isRunning(id: NodeId): boolean {
    return this.slot(id).running;
  }

  /** The bridge address of the member's namespace: reachable from the host. */
  clientAddress(id: NodeId): Address {
    return { host: this.slot(id).ip as string, port: this.target.members.ports.client };
  }

  httpAddress(id: NodeId): Address | undefined {
    const port = this.target.members.ports.http;
    return port === undefined ? undefined : { host: this.slot(id).ip as string, port };
  }

  /**
   * One container per data center on the run's network (`docker run -i … agent --stdio`): the
   * agent reaches its servers the way a client in that data center would, and speaks the agent
   * protocol as JSON lines over the attached stdio. SYS_NICE lets it raise its own priority.
   */
  async spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess> {
    const labels = this.labels('agent');
    const args = ['run', '-i', '--rm', '--init', '--name', `pole-bench-${this.runId}-agent-${dc}`];
    args.push('--network', this.networkName, '--cap-add', 'SYS_NICE');
    for (const [k, v] of Object.entries(labels)) args.push('--label', `${k}=${v}`);
    args.push(this.opts.image, 'agent', '--stdio');
    const agent = await AgentProcess.spawn({
      onInterval,
      stdioCommand: { file: 'docker', args },
      readyTimeoutMs: 30_000,
    });
    // Ready means the container runs: its cgroup gives the self-check its processes.
    const info = await this.docker
      .getContainer(`pole-bench-${this.runId}-agent-${dc}`)
      .inspect()
      .catch(() => undefined);
    this.agentProcs.set(dc, info ? cgroupProcsFile(info.State.Pid) : null);
    return agent;
  }

  /** Every process in the node and agent containers' cgroups (the host's /proc sees them). */
  cpuGroups(): CpuGroups {
    const of = (file: string | null | undefined, label: string): CpuProcess[] =>
      file ? procsIn(file).map((pid) => ({ pid, label })) : [];
    return {
      nodes: () => [...this.slots.values()].flatMap((s) => (s.running ? of(s.procs, s.id) : [])),
      agents: () => [...this.agentProcs].flatMap(([dc, file]) => of(file, dc)),
    };
  }

  /** Runs a command in a node's holder (its network namespace: tc, ip); resolves with its stdout. */
  execInHolder(id: NodeId, argv: string[]): Promise<string> {
    const holder = this.slot(id).holder;
    if (!holder) throw new Error(`${id} has no holder yet`);
    return this.exec(holder, argv);
  }

  private exec(container: Docker.Container, argv: string[]): Promise<string> {
    return execIn(container, argv);
  }

  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    this.book.clearWaiters();
    // Nodes before holders: a node container cannot outlive the namespace it joined.
    await Promise.allSettled([...this.slots.values()].map((s) => s.node?.remove({ force: true, v: true })));
    await Promise.allSettled([...this.slots.values()].map((s) => s.holder?.remove({ force: true, v: true })));
    // Agents (and anything else of this run): found by the run's label.
    const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${this.runId}`] });
    const rest = await this.docker.listContainers({ all: true, filters }).catch(() => []);
    await Promise.allSettled(
      rest.map((c) => this.docker.getContainer(c.Id).remove({ force: true, v: true })),
    );
    await Promise.allSettled([this.network?.remove(), this.shaping.close()]);
    if (this.configDir) await rm(this.configDir, { recursive: true, force: true });
  }
}
