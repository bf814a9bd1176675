// The Docker runtime: a bridge network per run; per node a "holder" container that owns the
// network namespace (NET_ADMIN, so tc can shape its egress) and the node container joined to it,
// so a killed or restarted node keeps its address and its qdiscs. Every container and network
// carries the run's labels, so `pole-bench clean` (or the next run) can reap what a crashed
// harness left. Shaping is the relay on the host (the nodes dial it through the bridge's gateway)
// or, where the kernel has it, netem inside each holder.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import Docker from 'dockerode';
import { AgentProcess } from '../../load/agent-process.js';
import type { IntervalMessage } from '../../load/agent-protocol.js';
import type { NodeId } from '../../node/core/types.js';
import { EventBook, type ClusterEvent } from '../event-book.js';
import { wallNow } from '../process/process-cluster.js';
import type { CpuGroups, CpuProcess } from '../../measure/cpu-sampler.js';
import { cgroupProcsFile, procsIn } from '../../measure/container-procs.js';
import type { Topology } from '../../topology/topology.js';
import { cleanDocker } from './docker-clean.js';
import { DOCKER_LABELS, runLabels } from './docker-labels.js';
import { createShaper } from '../../shaping/create-shaper.js';
import type { Shaper } from '../../shaping/shaper.js';
import type { Address, Runtime, ShapingChoice } from '../runtime.js';
import { poleTarget } from '../../targets/pole/pole-target.js';

/** Ports inside every node's own network namespace. */
const PEER_PORT = 7000;
const CLIENT_PORT = 7001;
const HTTP_PORT = 7002;

/** A holder only keeps the namespace alive; it exits on `docker stop`. */
const HOLDER_ENTRYPOINT = [
  'node',
  '-e',
  'process.on("SIGTERM",()=>process.exit(0));setInterval(()=>{},1<<30)',
];

export interface DockerRuntimeOptions {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  readonly image: string;
  readonly oracle?: string;
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
  /** The node container's cgroup.procs, for the self-check (null: not found). */
  procs?: string | null;
}

export class DockerRuntime implements Runtime {
  readonly name = 'docker' as const;
  /** Containers run the POLE node image only, so far. */
  readonly target = poleTarget;
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
    this.runId = `${Date.now().toString(36)}-${opts.seed.toString(36)}`;
    for (const n of topology.nodes) this.slots.set(n.id, { id: n.id, running: false });
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
          IPAM: { Config: [{ Subnet: subnet, Gateway: gateway }] },
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
    // The relay listens on the bridge's gateway, where the nodes reach the host; netem runs its
    // tc commands in each holder. A POLE node's peer link is dialled by the higher sid.
    const dial = await this.shaping.install({
      members: t.nodes.map((n) => ({
        id: n.id,
        sid: n.sid,
        peer: { host: addresses.get(n.id) as string, port: PEER_PORT },
      })),
      plan: { direction: 'higher-sid' },
      listenHost: gateway,
      addresses,
      exec: (id, argv) => this.exec(this.slot(id).holder!, argv),
    });
    this.configDir = await mkdtemp(join(tmpdir(), 'pole-bench-docker-'));
    const c = t.cluster;
    for (const n of t.nodes) {
      const config = {
        id: n.id,
        sid: n.sid,
        datacenter: n.datacenter,
        listen: { host: '0.0.0.0', peerPort: PEER_PORT, clientPort: CLIENT_PORT, httpPort: HTTP_PORT },
        peers: t.nodes
          .filter((p) => p.id !== n.id)
          .map((p) => ({ id: p.id, sid: p.sid, ...dial(n.id, p.id) })),
        dataDir: '/data',
        fsync: this.opts.fsync ?? true,
        oracle: this.opts.oracle ?? c.oracle,
        ...(c.initialLeader !== undefined ? { initialLeader: c.initialLeader } : {}),
        ...(c.preference ? { preference: c.preference } : {}),
        timers: c.timers,
        ...(c.measure ? { measure: c.measure } : {}),
        ...(c.resign ? { resign: c.resign } : {}),
      };
      await writeFile(join(this.configDir, `${n.id}.json`), JSON.stringify(config, null, 2));
    }
    await Promise.all(
      t.nodes.map(async (n) => {
        const s = this.slot(n.id);
        s.node = await this.docker.createContainer({
          Image: this.opts.image,
          name: `pole-bench-${this.runId}-${n.id}`,
          Cmd: ['node', '--config', `/config/${n.id}.json`],
          Labels: this.labels('node', n.id),
          // Init: Node as PID 1 would ignore SIGTERM; docker's init forwards it (clean `docker stop`).
          HostConfig: {
            NetworkMode: `container:${s.holder!.id}`,
            Binds: [`${this.configDir}:/config:ro`],
            Init: true,
          },
        });
        await this.startNode(n.id);
      }),
    );
  }

  private slot(id: NodeId): Slot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no node ${id} in this run`);
    return s;
  }

  /** Attach to the node's output, start it, and wait for its `started` event. */
  private async startNode(id: NodeId): Promise<void> {
    const s = this.slot(id);
    const since = this.events.length;
    const stream = await s.node!.attach({ stream: true, stdout: true, stderr: true });
    const out = new PassThrough();
    const err = new PassThrough();
    s.node!.modem.demuxStream(stream, out, err);
    createInterface({ input: out }).on('line', (line) => this.book.line(line));
    err.resume();
    await s.node!.start();
    s.running = true;
    s.procs = cgroupProcsFile((await s.node!.inspect()).State.Pid);
    await this.waitFor((e) => e.node === id && e.ev === 'started', 30_000, since);
  }

  /** The first event (from index `since` on) matching `pred`, waiting up to timeoutMs for it. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.book.waitFor(pred, timeoutMs, since);
  }

  get events(): readonly ClusterEvent[] {
    return this.book.events;
  }

  async kill(id: NodeId): Promise<number> {
    const s = this.slot(id);
    const at = wallNow();
    await s.node!.kill({ signal: 'SIGKILL' });
    await s.node!.wait();
    s.running = false;
    return at;
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

  /** The bridge address of the node's namespace: reachable from the host. */
  clientAddress(id: NodeId): Address {
    return { host: this.slot(id).ip as string, port: CLIENT_PORT };
  }

  httpAddress(id: NodeId): Address {
    return { host: this.slot(id).ip as string, port: HTTP_PORT };
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

  private async exec(container: Docker.Container, argv: string[]): Promise<string> {
    const e = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
    const stream = await e.start({});
    const out = new PassThrough();
    const err = new PassThrough();
    const chunks: Buffer[] = [];
    const errChunks: Buffer[] = [];
    out.on('data', (b: Buffer) => chunks.push(b));
    err.on('data', (b: Buffer) => errChunks.push(b));
    container.modem.demuxStream(stream, out, err);
    await new Promise<void>((resolve) => stream.on('end', resolve));
    const info = await e.inspect();
    if (info.ExitCode !== 0) {
      const said = Buffer.concat(errChunks).toString('utf8').trim();
      throw new Error(
        `${argv.join(' ')} failed in ${container.id.slice(0, 12)} (exit ${info.ExitCode}): ${said}`,
      );
    }
    return Buffer.concat(chunks).toString('utf8');
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
