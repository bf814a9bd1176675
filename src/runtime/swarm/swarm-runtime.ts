// src/runtime/swarm/: the swarm runtime: members, load agents, the relay and a fault helper per node as
// services of the swarm DOCKER_HOST (or the local daemon) manages; the plan, the dial-back, reaping.
//
// Each member is a service of one replica on an attachable overlay made for the run, placed by its
// data center (node label pole-bench.dc=<dc>, or --place), never restarted by the swarm, with a
// stable name (dnsrr: the name is its task's own address) and its data on a named volume. Its
// service is made before its command is known: its start gate dials the harness and is sent a
// script with its files (the target's config directory; MemberFile in swarm-plan.ts says why not
// swarm configs) and its command when the members start; its output comes from its task's
// log stream and its client and status ports are published on its node (mode host) for the
// harness. Agents, the relay and the fault helpers dial the harness back (swarm-rendezvous.ts).
// A kill, pause or resume goes to the fault helper of the member's node (fault-helper.ts); a
// restart makes a new task of the member's service, pinned to the node its volume is on.
// Everything carries the run's labels; teardown, the next run and `pole-bench clean` reap it.
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import Docker from 'dockerode';
import { AgentProcess } from '../../load/agent-process.js';
import type { IntervalMessage } from '../../load/agent-protocol.js';
import type { NodeId } from '../../vocabulary/names.js';
import type { CpuGroups, RemoteCpuSource } from '../../measure/cpu-sampler.js';
import { USER_HZ } from '../../measure/proc-cpu.js';
import {
  clockReport,
  hostClocks,
  offsetsOf,
  type ClockEstimates,
  type ClockReport,
  type HostClocks,
} from '../../measure/clock-offset.js';
import { harnessWallMs, probeClock } from '../../measure/clock-probe.js';
import { createShaper } from '../../shaping/create-shaper.js';
import type { Shaper } from '../../shaping/shaper.js';
import type { Topology } from '../../topology/topology.js';
import { poleTarget } from '../../targets/pole/pole-target.js';
import type { Target } from '../../targets/target.js';
import {
  runPlacement,
  type MemberKind,
  type MemberPlan,
  type PlannedMember,
} from '../../targets/member-plan.js';
import { containerArgv, containerEnv } from '../container-command.js';
import { byIndexPorts } from '../member-ports.js';
import { startPlan, startedOver } from '../start-order.js';
import type { Address, ContainerImage, ShapingChoice } from '../../vocabulary/names.js';
import type { ClusterEvent } from '../../vocabulary/node-events.js';
import { EventBook } from '../event-book.js';
import { OutputLines } from '../output-lines.js';
import { eventOnHarnessClock } from '../event-clock.js';
import { TaskPoller, taskStates, type TaskInfo } from './task-poller.js';
import { DOCKER_LABELS } from '../docker/docker-labels.js';
import type { Runtime, RuntimeTrouble } from '../runtime.js';
import { FaultHelpers } from './fault-helper.js';
import { cleanSwarm } from './swarm-clean.js';
import { memberStartScript, SwarmPlan, type MemberFile } from './swarm-plan.js';
import { harnessHost, probeSwarm } from './swarm-probe.js';
import { Rendezvous, type TaskConnection } from './swarm-rendezvous.js';
import { swarmRelayShaper } from './swarm-relay-shaper.js';
import { swarmNetemShaper, type SwarmNetemShaper } from './swarm-netem-shaper.js';
import type { NetemLeaf } from '../../shaping/netem/netem-plan.js';
import { TaskRpc } from './task-rpc.js';

export interface SwarmRuntimeOptions {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  /** The node image: agents, the relay, the fault helpers and the POLE target's members run it. */
  readonly image: string;
  readonly target?: Target;
  readonly images?: Partial<Record<ContainerImage, string>>;
  readonly oracle?: string;
  readonly fsync?: boolean;
  /** The value of the target's own run option (Target.option). */
  readonly targetOption?: string;
  /** --place: data center → node (hostname or id), over the nodes' pole-bench.dc labels. */
  readonly place?: ReadonlyMap<string, string>;
  readonly docker?: Docker;
  /** netem shaping's leaf: `pfifo` keeps its tree and filters testable on a kernel without netem. */
  readonly netemLeaf?: NetemLeaf;
}

/** How long the swarm may take to schedule a task and its container to start. */
const TASK_START_MS = 60_000;
/** A member's data directory: its service's volume, kept across its restarts on its node. */
const DATA_DIR = '/data';
/** How long removed services' task containers may take to go. */
const CONTAINERS_GONE_MS = 30_000;
/** How long the run's network may linger on the manager once its tasks are gone. */
const NETWORK_GONE_MS = 10_000;
/** Task states past which a task will never run. */
const ENDED = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);

/** A task's address on a network (its attachment's first, without the prefix length). */
function addressOn(task: TaskInfo, network: string): string | undefined {
  const cidr = task.NetworksAttachments?.find((n) => n.Network?.Spec?.Name === network)?.Addresses?.[0];
  return cidr?.split('/')[0];
}

interface Slot {
  readonly id: NodeId;
  service?: Docker.Service;
  member?: PlannedMember;
  task?: TaskInfo;
  /** The address of its node, where its published ports are. */
  nodeAddr?: string;
  ports: Map<number, number>;
  running: boolean;
  logs?: NodeJS.ReadableStream;
  /** Its task's start gate, dialled in and waiting for its script (awaitTask; release sends it). */
  gate?: TaskConnection;
  /** Every task of its service so far (a restart waits for one it has not seen). */
  readonly seen: Set<string>;
  /** Its output, for the error when it ends before it started. */
  readonly output: OutputLines;
}

/** Ends a member's log stream, if it has one (its error, if any, swallowed: it is wanted no more). */
function closeLogs(s: Slot): void {
  const stream = s.logs as (NodeJS.ReadableStream & { destroy?: () => void }) | undefined;
  s.logs = undefined;
  stream?.on('error', () => undefined);
  stream?.destroy?.();
}

export class SwarmRuntime implements Runtime {
  readonly name = 'swarm' as const;
  readonly target: Target;
  readonly shaping: Shaper;
  readonly runId: string;
  private readonly book = new EventBook();
  private readonly docker: Docker;
  private readonly slots = new Map<NodeId, Slot>();
  private readonly helpers = new FaultHelpers();
  /** Every wait on the run's tasks, served by one list call per period. */
  private readonly taskPoller = new TaskPoller(
    async (ids) => (await this.docker.listTasks({ filters: JSON.stringify({ service: ids }) })) as TaskInfo[],
  );
  private rendezvous: Rendezvous | undefined;
  private relayRpc: Promise<TaskRpc> | undefined;
  private relayService: string | undefined;
  /** Swarm nodes whose helper went away mid-run: their tasks are never removed, so not waited for. */
  private readonly goneNodes = new Set<string>();
  /** The netem shaping, where the run asked for it (applied in the tasks once they exist). */
  private netem: SwarmNetemShaper | undefined;
  /** Every usable node's helper has dialled in (netem's trees go in through them). */
  private helpersDialled: Promise<void> = Promise.resolve();
  /** ... and has reaped dead runs' volumes, and every node's clocks are probed. */
  private helpersReady: Promise<void> = Promise.resolve();
  private swarmPlan: SwarmPlan | undefined;
  private plan: MemberPlan | undefined;
  /** The target's config files, written in every member by its start script. */
  private files: MemberFile[] = [];
  private readonly nodeAddrs = new Map<string, string>();
  /** Swarm node id → hostname, for the clocks' report. */
  private readonly nodeNames = new Map<string, string>();
  /**
   * Each swarm node's clocks (by its fault helper) and each agent's, against the harness's, as
   * measured before the load: what their stamps are moved onto the harness's clocks by.
   */
  private readonly nodeClocks = new Map<string, ClockEstimates>();
  private readonly agentClocks = new Map<string, { before: ClockEstimates; agent: AgentProcess }>();
  /** Each data center's agent task, dialled in (or on its way). */
  private readonly agents = new Map<string, Promise<TaskConnection>>();
  /** Each data center's agent service, by data center (spawnAgent reads its task's node). */
  private readonly agentServices = new Map<string, string>();
  /** The node each data center's agent runs on (clockReport pairs it with that node's helper). */
  private readonly agentNodes = new Map<string, string>();
  private tornDown = false;
  private readonly lost: RuntimeTrouble[] = [];
  /**
   * When each step of the bring-up ended, in ms from start()'s call: where the seconds go
   * (`bench docker --runtime swarm` prints it), the steps that run in parallel each with its own.
   */
  readonly startSteps: Array<{ readonly step: string; readonly ms: number }> = [];
  private startedAt = 0;
  /** Whether start() is still running: only its steps are recorded (a later restart's are not). */
  private starting = false;
  private step(step: string): void {
    if (this.starting) this.startSteps.push({ step, ms: performance.now() - this.startedAt });
  }

  constructor(
    private readonly topology: Topology,
    private readonly opts: SwarmRuntimeOptions,
  ) {
    this.docker = opts.docker ?? new Docker();
    this.target = opts.target ?? poleTarget;
    this.runId = `${Date.now().toString(36)}-${opts.seed.toString(36)}`;
    for (const n of topology.nodes)
      this.slots.set(n.id, {
        id: n.id,
        running: false,
        ports: new Map(),
        seen: new Set(),
        output: new OutputLines(),
      });
    this.shaping =
      opts.shaping.kind === 'relay'
        ? swarmRelayShaper(topology, {
            seed: opts.seed,
            reason: opts.shaping.reason,
            relayTask: () => this.relayTask(),
            relayAddress: () => this.relayAddress(),
          })
        : opts.shaping.kind === 'netem'
          ? (this.netem = swarmNetemShaper(topology, {
              reason: opts.shaping.reason,
              ...(opts.netemLeaf ? { leaf: opts.netemLeaf } : {}),
            }))
          : createShaper(opts.shaping, topology, { seed: opts.seed });
  }

  private sp(): SwarmPlan {
    if (!this.swarmPlan) {
      // The names are the run id's alone; the plan proper (placement, harness) comes in start().
      return new SwarmPlan({
        topology: this.topology,
        runId: this.runId,
        image: this.opts.image,
        placement: new Map(),
        harness: { host: '', port: 0, token: '' },
      });
    }
    return this.swarmPlan;
  }

  async start(): Promise<void> {
    const t = this.topology;
    this.startedAt = performance.now();
    this.starting = true;
    // What runs whose harness died left behind goes now, before anything new.
    const left = await cleanSwarm({ docker: this.docker, orphansOnly: true });
    this.step('dead runs cleaned');
    const ready = await probeSwarm(
      {
        datacenters: t.datacenters.map((d) => d.name),
        images: [this.opts.image, ...Object.values(this.opts.images ?? {})],
        ...(this.opts.place ? { place: this.opts.place } : {}),
      },
      this.docker,
    );
    this.step('swarm probed');
    this.rendezvous = await Rendezvous.listen(await harnessHost(this.docker));
    const sp = (this.swarmPlan = new SwarmPlan({
      topology: t,
      runId: this.runId,
      image: this.opts.image,
      placement: ready.placement,
      harness: { host: this.rendezvous.host, port: this.rendezvous.port, token: this.rendezvous.token },
    }));
    for (const n of (await this.docker.listNodes()) as Array<{ ID: string; Status?: { Addr?: string } }>)
      if (n.Status?.Addr) this.nodeAddrs.set(n.ID, n.Status.Addr);
    for (const n of ready.nodes) this.nodeNames.set(n.id, n.hostname);
    await this.docker.createNetwork(sp.network());
    this.step('network made');
    // A fault helper on every usable node and the relay, started together: the relay is wanted
    // for the members' plan, the helpers for netem's trees, the clocks and the members' release.
    const helperSvc = await this.docker.createService(sp.faultHelper());
    this.helpersDialled = Promise.all(
      ready.nodes
        .filter((n) => n.usable)
        .map(async (n) => {
          const c = await this.rendezvous!.waitFor('faults', n.id, TASK_START_MS, () =>
            this.taskState(helperSvc.id),
          );
          const rpc = new TaskRpc(c.socket, `the fault helper on ${n.hostname}`);
          this.helpers.add(n.id, rpc);
          void rpc.closed.then(() => this.helperGone(n.id, n.hostname));
        }),
    ).then(() => this.step('fault helpers dialled in'));
    this.helpersDialled.catch(() => undefined); // said when the members' start awaits it
    this.helpersReady = this.helpersDialled
      .then(() => this.helpers.reapVolumes([...left.liveRuns, this.runId]))
      // Before any member starts (they wait for their helper): every event is then moved onto the
      // harness's clocks as it comes in.
      .then(async () => {
        for (const [node, c] of await this.helpers.probeClocks()) this.nodeClocks.set(node, c);
        this.step("nodes' clocks probed");
      });
    this.helpersReady.catch(() => undefined); // said when the members' start awaits it
    if (this.shaping.kind === 'relay') {
      const relaySvc = await this.docker.createService(sp.relay());
      this.relayService = relaySvc.id;
      this.relayRpc = this.rendezvous
        .waitFor('relay', '', TASK_START_MS, () => this.taskState(relaySvc.id))
        .then((c) => {
          this.step('relay dialled in');
          return new TaskRpc(c.socket, 'the relay task');
        });
      this.relayRpc.catch(() => undefined);
    }
    // The agents start now too, and wait for their `start` (the swarm takes seconds per task: one
    // by one, at the load's start, they would delay it by that much). Made after the relay's
    // dial-in instead, or after the members' plan, bring-up took as long within the noise: the
    // two cores are busy throughout, whatever the order.
    for (const d of t.datacenters) {
      const dialled = this.createAgent(d.name);
      dialled.catch(() => undefined); // said when spawnAgent awaits it
      this.agents.set(d.name, dialled);
    }
    this.step('helpers, relay and agents created');
    // Every member's service now, its task held at its gate (which needs nothing of the plan):
    // the swarm's seconds per task run while the relay starts and the plan is made. Their
    // addresses are then known for netem's filters, and the swarm is not waited for twice.
    const atGates = this.createMembers(t.nodes.map((n) => n.id));
    atGates.catch(() => undefined); // said when awaited below
    const kind = this.target.members;
    const portsOf = byIndexPorts(t, kind);
    const plan = await this.target.planMembers({
      ...runPlacement(t, this.opts),
      onThisMachine: false,
      portsOf,
      bindHost: '0.0.0.0',
      // By name on the run's network: a task's address changes with a restart.
      hostOf: (id) => sp.memberHost(id),
      // The relay is one task with one address on the overlay: it tells sources apart by theirs.
      routes: 'by-source',
      shape: (members, p) =>
        this.shaping.install({
          members,
          plan: {
            direction: p.direction,
            ...(p.keepPorts
              ? { listenAt: (from, _to, _port, at) => ({ port: at.port, acceptFrom: sp.memberHost(from) }) }
              : {}),
            ...(p.retryConnectMs !== undefined ? { retryConnectMs: p.retryConnectMs } : {}),
          },
        }),
      configPath: (name) => `/config/${name}`,
      dataDir: () => DATA_DIR,
    });
    this.plan = plan;
    this.step("members' plan made");
    this.files = plan.files.map((f) => ({ path: `/config/${f.name}`, data: Buffer.from(f.text) }));
    for (const m of plan.members) this.slot(m.id).member = m;
    const { first, then } = plan.startOrder;
    await atGates;
    this.step("members' tasks at their gates");
    if (this.netem) {
      await this.helpersDialled;
      await this.netem.apply(this.memberAddresses(), this.execInMember, [...first, ...then]);
      this.step('netem applied');
    }
    await startPlan(
      plan,
      async (ids) => {
        await this.releaseMembers(ids);
        this.step(ids === first ? 'members started' : 'later members started');
      },
      startedOver(this.book, this),
      kind.startTimeoutMs,
    );
    // Every agent has booted and dialled in (idle until its `start`): nothing of the run's start-up
    // is left to compete for the CPU with the links' measurement and the warm-up that follow.
    await Promise.all(this.agents.values());
    this.step('agents dialled in');
    this.starting = false;
  }

  private imageOf(image: MemberKind['image']): string {
    if (image === 'node') return this.opts.image;
    const tag = this.opts.images?.[this.target.name];
    if (!tag)
      throw new Error(`the ${this.target.name} target needs its own image, which this run was not given`);
    return tag;
  }

  private slot(id: NodeId): Slot {
    const s = this.slots.get(id);
    if (!s) throw new Error(`no node ${id} in this run`);
    return s;
  }

  /**
   * Creates the members' services and waits until each one's task runs and its gate has dialled
   * in (its command not yet known: the gate waits for it).
   */
  private async createMembers(ids: readonly NodeId[]): Promise<void> {
    const made = this.target.members;
    await Promise.all(
      ids.map(async (id) => {
        const s = this.slot(id);
        s.service = await this.docker.createService(
          this.sp().member({
            id,
            image: this.imageOf(made.image),
            ports: [made.ports.client, ...(made.ports.http !== undefined ? [made.ports.http] : [])],
          }),
        );
        await this.awaitTask(s);
        this.step(`${id}'s task at its gate`);
      }),
    );
  }

  /** A member's start script: its command (the node image's entrypoint first), files, hosts lines. */
  private startScript(s: Slot): string {
    const m = s.member!;
    const dataFiles = (m.dataFiles ?? []).map((f) => ({
      path: `${DATA_DIR}/${f.name}`,
      data: Buffer.from(f.text),
    }));
    return memberStartScript({
      cmd: containerArgv(m),
      env: containerEnv(m),
      files: [...this.files, ...dataFiles],
      hosts: m.etcHosts ?? [],
    });
  }

  /** Opens the gates of members whose tasks run, all at once, and waits for each one's `started`. */
  private async releaseMembers(ids: readonly NodeId[]): Promise<void> {
    await this.helpersReady;
    const since = this.events.length;
    await Promise.all(ids.map((id) => this.release(this.slot(id), since)));
  }

  /** Each member's task address on the run's network (the tasks that run, or wait at their gates). */
  private memberAddresses(): Map<NodeId, string> {
    const network = this.sp().networkName;
    const out = new Map<NodeId, string>();
    for (const s of this.slots.values()) {
      const a = s.task ? addressOn(s.task, network) : undefined;
      if (a) out.set(s.id, a);
    }
    return out;
  }

  /** A command in a member's task container, by its node's fault helper (tc, ip). */
  readonly execInMember = (id: NodeId, argv: string[]): Promise<string> => {
    const { node, container } = this.containerOf(id);
    return this.helpers.exec(node, container, argv);
  };

  /**
   * Waits until the member's service runs a task it has not run before (held at the start gate),
   * follows that task's output and reads where its ports are published. A task that ends first
   * fails it with the swarm's reason (a missing image on its node, say).
   */
  private async awaitTask(s: Slot): Promise<void> {
    const running = await this.pollTasks(s.service!.id, (ts) => {
      const fresh = ts.filter((t) => !s.seen.has(t.ID));
      const ended = fresh.find((t) => ENDED.has(t.Status?.State ?? ''));
      if (ended)
        throw new Error(
          `the swarm ended ${s.id}'s task (${ended.Status?.State}): ${ended.Status?.Err ?? 'no reason given'}`,
        );
      return fresh.find((t) => t.Status?.State === 'running' && t.Status.ContainerStatus?.ContainerID);
    });
    s.seen.add(running.ID);
    s.task = running;
    this.followLogs(s, running.ID);
    s.nodeAddr = this.nodeAddrs.get(running.NodeID ?? '');
    if (!s.nodeAddr)
      throw new Error(`${s.id} runs on swarm node ${running.NodeID}, whose address the swarm does not say`);
    s.ports = new Map(
      (running.Status?.PortStatus?.Ports ?? []).map((p) => [p.TargetPort ?? 0, p.PublishedPort ?? 0]),
    );
    // Its gate, dialled in: a task that ends first (bash failed to reach the harness) says why.
    let settled = false;
    const ended = this.pollTasks(
      s.service!.id,
      (ts) => ts.find((t) => t.ID === running.ID && ENDED.has(t.Status?.State ?? '')),
      TASK_START_MS,
      () => settled,
    ).then((t) => {
      throw new Error(
        `${s.id}'s task ended (${t.Status?.State}: ${t.Status?.Err ?? 'no error said'}) at its start gate; output: ${s.output.toString()}`,
      );
    });
    try {
      s.gate = await Promise.race([
        this.rendezvous!.waitFor('gate', s.id, TASK_START_MS, () => this.taskState(s.service!.id)),
        ended,
      ]);
    } finally {
      settled = true;
      ended.catch(() => undefined);
    }
  }

  /**
   * Opens the member's start gate and waits for its `started`; a task that ends first fails the
   * start with what the member said.
   */
  private async release(s: Slot, since: number): Promise<void> {
    const startTimeoutMs = this.target.members.startTimeoutMs;
    const task = s.task!;
    const gate = s.gate;
    if (!gate) throw new Error(`${s.id}'s start gate has not dialled in`);
    s.gate = undefined;
    // The script, then the end of the harness's side: the gate reads to the end and runs it, and
    // the member's stdout comes back the other way (its events: not through the swarm's logs).
    gate.socket.end(this.startScript(s));
    createInterface({ input: gate.socket }).on('line', (line) => this.memberLine(s, line));
    gate.socket.resume();
    let settled = false;
    const died = this.pollTasks(
      s.service!.id,
      (ts) => ts.find((t) => t.ID === task.ID && ENDED.has(t.Status?.State ?? '')),
      startTimeoutMs + 1_000,
      () => settled,
    ).then((t) => {
      throw new Error(
        `${s.id} ended (${t.Status?.State}: ${t.Status?.Err ?? 'no error said'}) before it started; output: ${s.output.toString()}`,
      );
    });
    try {
      await Promise.race([
        this.waitFor((e) => e.node === s.id && e.ev === 'started', startTimeoutMs, since),
        died,
      ]);
    } finally {
      settled = true;
      died.catch(() => undefined);
    }
    this.step(`${s.id} started`);
    s.running = true;
  }

  /**
   * Polls the service's tasks until `pick` finds one (it may throw to give up); bounded. Once
   * `stop` says so, never resolves (a watcher that is no longer wanted).
   */
  private pollTasks(
    serviceId: string,
    pick: (tasks: TaskInfo[]) => TaskInfo | undefined,
    timeoutMs = TASK_START_MS,
    stop: () => boolean = () => false,
  ): Promise<TaskInfo> {
    return this.taskPoller.until(serviceId, pick, timeoutMs, stop);
  }

  /** What the service's tasks are doing, for an error. */
  private async taskStateNow(serviceId: string): Promise<string> {
    const tasks = (await this.docker
      .listTasks({ filters: JSON.stringify({ service: [serviceId] }) })
      .catch(() => [])) as TaskInfo[];
    return taskStates(tasks) || 'no task';
  }

  private taskState(serviceId: string): string {
    // Said synchronously in a timeout's message; the state is fetched for the log line after it.
    void this.taskStateNow(serviceId).then((s) =>
      process.stderr.write(`swarm: service ${serviceId.slice(0, 12)}: ${s}\n`),
    );
    return `service ${serviceId.slice(0, 12)}`;
  }

  /**
   * The task's log (the swarm's log stream, from the container's start, followed): the gate's own
   * words and the member's stderr, kept for error messages. The member's stdout, its events, does
   * not come this way (memberStartScript says why).
   */
  private followLogs(s: Slot, taskId: string): void {
    // A former task's stream (a restart's predecessor) ends here: it would hold the harness open.
    closeLogs(s);
    this.docker.modem.dial(
      {
        path: `/tasks/${taskId}/logs?`,
        method: 'GET',
        options: { follow: true, stdout: true, stderr: true },
        isStream: true,
        statusCodes: {
          200: true,
          404: 'no such task',
          500: 'server error',
          503: 'node is not part of a swarm',
        },
      },
      (err, result) => {
        const stream = result as NodeJS.ReadableStream | null;
        if (err || !stream) {
          s.output.keep(`(no log stream: ${err?.message ?? 'none'})`);
          return;
        }
        s.logs = stream;
        const out = new PassThrough();
        const errOut = new PassThrough();
        this.docker.modem.demuxStream(stream, out, errOut);
        // The gate's own words; the member's stdout comes over the gate's connection (release).
        createInterface({ input: out }).on('line', (line) => this.memberLine(s, line));
        createInterface({ input: errOut }).on('line', (line) => s.output.keep(line));
        stream.on('error', () => undefined);
      },
    );
  }

  /** A line of a member's stdout: its events to the book, anything else kept for error messages. */
  private memberLine(s: Slot, line: string): void {
    // Before its plan is made (the gate's own words, if any) a line has no translator.
    const evs = s.member?.translate(line) ?? [];
    if (evs.length === 0 && !line.startsWith('{')) s.output.keep(line);
    for (const e of evs) this.book.push(this.onHarnessClock(e, s.task?.NodeID));
  }

  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    return this.book.waitFor(pred, timeoutMs, since);
  }

  get events(): readonly ClusterEvent[] {
    return this.book.events;
  }

  private containerOf(id: NodeId): { node: string; container: string } {
    const task = this.slot(id).task;
    const container = task?.Status?.ContainerStatus?.ContainerID;
    if (!task?.NodeID || !container) throw new Error(`${id} has no task container`);
    return { node: task.NodeID, container };
  }

  /**
   * SIGKILL through its node's fault helper; the swarm does not restart it (condition none).
   * Resolves with the helper's wall ms of the kill.
   */
  async kill(id: NodeId): Promise<number> {
    const { node, container } = this.containerOf(id);
    // The helper's own stamp: the request's way to it (tens of ms) is not part of the outage.
    const at = await this.helpers.kill(node, container);
    this.slot(id).running = false;
    const c = this.nodeClocks.get(node);
    return c ? at - c.wall.offsetMs : at;
  }

  /**
   * A new task of the member's service, pinned to the node it ran on (its volume, and so its log,
   * is there); resolves once it says `started`.
   */
  async restart(id: NodeId): Promise<void> {
    const s = this.slot(id);
    const previous = s.task;
    const svc = (await s.service!.inspect()) as { Version: { Index: number }; Spec: Docker.ServiceSpec };
    const spec = svc.Spec as Docker.ServiceSpec & { TaskTemplate: Docker.ContainerTaskSpec };
    const pin = `node.id==${previous?.NodeID}`;
    const constraints = spec.TaskTemplate.Placement?.Constraints ?? [];
    spec.TaskTemplate.Placement = {
      ...spec.TaskTemplate.Placement,
      Constraints: previous?.NodeID && !constraints.includes(pin) ? [...constraints, pin] : constraints,
    };
    spec.TaskTemplate.ForceUpdate = (spec.TaskTemplate.ForceUpdate ?? 0) + 1;
    await s.service!.update({ _query: { version: svc.Version.Index }, _body: spec });
    await this.awaitTask(s);
    if (this.netem) {
      // Its new task has a new address: every tree that names it is made again, its own too.
      const running = [...this.slots.values()].filter((x) => x.running).map((x) => x.id);
      await this.netem.apply(this.memberAddresses(), this.execInMember, [...running, id]);
    }
    await this.release(s, this.events.length);
  }

  /** The cgroup freezer on the member's container, by its node's helper. */
  pause(id: NodeId): void {
    const { node, container } = this.containerOf(id);
    void this.helpers.pause(node, container).catch(() => undefined);
  }

  resume(id: NodeId): void {
    const { node, container } = this.containerOf(id);
    void this.helpers.unpause(node, container).catch(() => undefined);
  }

  isRunning(id: NodeId): boolean {
    return this.slot(id).running;
  }

  /**
   * A node's fault helper closed its connection before the teardown: the node is gone (its engine
   * stopped, the host died or left the network), or at least nothing can be done on it any more.
   * Its members are down from now on (no write is read back from them, no fault goes to them) and
   * the run fails, saying when. The helper is the one task on every node, with a connection held
   * for the whole run, so its close is the first sign the harness gets; the swarm marks the node
   * Down only after its own heartbeat timeout, seconds later.
   */
  private helperGone(node: string, hostname: string): void {
    if (this.tornDown) return;
    this.goneNodes.add(node);
    const members = [...this.slots.values()].filter((s) => s.task?.NodeID === node);
    const down = members.filter((s) => s.running).map((s) => s.id);
    for (const s of members) s.running = false;
    const dcs = [...new Set(members.map((s) => this.topology.node(s.id).datacenter))];
    this.lost.push({
      at: harnessWallMs(),
      message:
        `swarm node ${hostname}${dcs.length > 0 ? ` (data center ${dcs.join(', ')})` : ''} went away mid-run: ` +
        `its fault helper's connection to the harness closed` +
        (down.length > 0 ? `; ${down.join(', ')} counted as down from then` : ''),
    });
  }

  troubles(): readonly RuntimeTrouble[] {
    return this.lost;
  }

  /** The member's client port as published on its node: where the harness reaches it. */
  clientAddress(id: NodeId): Address {
    return this.published(id, this.target.members.ports.client);
  }

  httpAddress(id: NodeId): Address | undefined {
    const port = this.target.members.ports.http;
    return port === undefined ? undefined : this.published(id, port);
  }

  /** On the overlay, by the member's name: where the agents (tasks of the run) reach it. */
  agentAddress(id: NodeId): Address {
    return { host: this.sp().memberHost(id), port: this.target.members.ports.client };
  }

  private published(id: NodeId, port: number): Address {
    const s = this.slot(id);
    const p = s.ports.get(port);
    if (!s.nodeAddr || !p) throw new Error(`${id} has no published port for ${port} (not started?)`);
    return { host: s.nodeAddr, port: p };
  }

  /** The data center's agent as a service placed in it: it dials back and waits for `start`. */
  private async createAgent(dc: string): Promise<TaskConnection> {
    const svc = await this.docker.createService(this.sp().agent(dc));
    this.agentServices.set(dc, svc.id);
    return this.rendezvous!.waitFor('agent', dc, TASK_START_MS, () => this.taskState(svc.id));
  }

  /** The data center's agent, started with the members, once it has dialled in and said `ready`. */
  async spawnAgent(dc: string, onInterval: (m: IntervalMessage) => void): Promise<AgentProcess> {
    let dialled = this.agents.get(dc);
    if (!dialled) this.agents.set(dc, (dialled = this.createAgent(dc)));
    const c = await dialled;
    const ready = AgentProcess.overConnection(c.socket, { onInterval, readyTimeoutMs: 30_000 });
    c.socket.resume();
    const agent = await ready;
    // The agent's own clocks (it is a process of its node, started after the node's helper).
    const before = await probeClock((signal) => agent.readClock(signal));
    agent.onClocks(offsetsOf(before));
    this.agentClocks.set(dc, { before, agent });
    // Where it runs, asked now, before the load, not while it runs.
    const node = await this.taskNode(this.agentServices.get(dc));
    if (node !== undefined) this.agentNodes.set(dc, node);
    return agent;
  }

  /** A member's event onto the harness's clocks, by its node's offsets (none probed: as it came). */
  private onHarnessClock(e: ClusterEvent, node: string | undefined): ClusterEvent {
    const c = node === undefined ? undefined : this.nodeClocks.get(node);
    return c ? eventOnHarnessClock(e, offsetsOf(c)) : e;
  }

  /**
   * Every clock whose stamps were moved onto the harness's, measured again now (the run asks a
   * second before the load ends) beside the estimate that moved them: each node's (by its helper)
   * and each agent's that still answers.
   */
  async clockReport(): Promise<ClockReport | null> {
    if (this.nodeClocks.size === 0) return null;
    const after = await this.helpers.probeClocks().catch(() => new Map<string, ClockEstimates>());
    const hosts: Record<string, HostClocks> = {};
    // An agent runs on one of the nodes: its clocks and that node's helper's are one kernel's.
    const sameKernel: Record<string, string> = {};
    for (const [node, before] of this.nodeClocks)
      hosts[this.nodeNames.get(node) ?? node] = hostClocks(before, after.get(node) ?? null);
    for (const [dc, a] of this.agentClocks) {
      const again = await probeClock((signal) => a.agent.readClock(signal), { timeoutMs: 500 }).catch(
        () => null,
      );
      hosts[`agent ${dc}`] = hostClocks(a.before, again);
      const node = this.agentNodes.get(dc);
      if (node !== undefined) sameKernel[`agent ${dc}`] = this.nodeNames.get(node) ?? node;
    }
    return clockReport(hosts, sameKernel);
  }

  /** The node a service's (one) task runs on, if the swarm says. */
  private async taskNode(serviceId: string | undefined): Promise<string | undefined> {
    if (serviceId === undefined) return undefined;
    const filters = JSON.stringify({ service: [serviceId], 'desired-state': ['running'] });
    const tasks = (await this.docker.listTasks({ filters }).catch(() => [])) as TaskInfo[];
    return tasks.find((t) => t.NodeID)?.NodeID;
  }

  /** The members and agents run on the swarm's nodes, not as processes this harness can read. */
  cpuGroups(): CpuGroups {
    return { nodes: () => [], agents: () => [] };
  }

  /**
   * Every container of the run, by its node's Docker (its cgroup: all its processes), through the
   * fault helpers: the members, agents and relay, and the helpers themselves (pole-bench's cost
   * on each node). A node on the harness's kernel (a local swarm's host) counts in this machine's
   * busy share; one elsewhere does not.
   */
  remoteCpu(): RemoteCpuSource {
    const groupOf: Record<string, string> = {
      node: 'nodes',
      agent: 'agents',
      relay: 'relay',
      faults: 'helpers',
    };
    return {
      what: "each swarm node's Docker (the containers' cgroups), through the run's fault helpers, at the load's start, two seconds before its end, and at its end",
      read: async () =>
        (await this.helpers.cpu()).flatMap((c) => {
          const group = groupOf[c.role];
          if (group === undefined) return [];
          const label = c.role === 'relay' ? 'relay' : c.role === 'faults' ? c.host : c.node;
          return [{ key: c.id, group, label, ticks: c.ns / (1e9 / USER_HZ), onThisMachine: c.harnessKernel }];
        }),
    };
  }

  /**
   * The relay task's address on the run's overlay, once it has dialled in: where the members dial
   * their routes. An address, not its name: a target may resolve its peers' names to it (a
   * container's /etc/hosts takes addresses only). The relay is never restarted, so it keeps it.
   */
  private async relayAddress(): Promise<string> {
    await this.relayTask();
    const network = this.sp().networkName;
    const tasks = (await this.docker.listTasks({
      filters: JSON.stringify({ service: [this.relayService!], 'desired-state': ['running'] }),
    })) as TaskInfo[];
    for (const task of tasks) {
      const a = addressOn(task, network);
      if (a) return a;
    }
    throw new Error(`the relay task has no address on the run's network ${network}`);
  }

  private relayTask(): Promise<TaskRpc> {
    if (!this.relayRpc) return Promise.reject(new Error('the relay service has not been started'));
    return this.relayRpc;
  }

  /**
   * Waits (bounded) until the manager lists no network of the run, removing again what it still
   * lists: the swarm refuses to remove a network while a task holds it, and a task of a node that
   * went away mid-run may let go only after the run's first attempt at removing it.
   */
  private async networkGone(filters: string): Promise<void> {
    const deadline = Date.now() + NETWORK_GONE_MS;
    while (Date.now() < deadline) {
      const left = await this.docker.listNetworks({ filters }).catch(() => []);
      if (left.length === 0) return;
      await Promise.allSettled(left.map((n) => this.docker.getNetwork(n.Id).remove()));
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * Waits (bounded) until the swarm has no task of the run's services left, on any node, and the
   * manager's engine no container of the run. A removed service's task leaves the swarm's list once
   * its node has removed its container (seen: both at 1.8 s after a removal), so this covers the
   * nodes this harness has no engine of; a removed service can no longer be named in a task filter,
   * so the tasks are matched by service id.
   */
  private async tasksGone(serviceIds: ReadonlySet<string>): Promise<void> {
    const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${this.runId}`] });
    const deadline = Date.now() + CONTAINERS_GONE_MS;
    while (Date.now() < deadline) {
      // A node that went away mid-run never reports its tasks removed: they are not waited for.
      const tasks = (
        (await this.docker.listTasks().catch(() => [])) as Array<{ ServiceID?: string; NodeID?: string }>
      ).filter((t) => serviceIds.has(t.ServiceID ?? '') && !this.goneNodes.has(t.NodeID ?? ''));
      const left = await this.docker.listContainers({ all: true, filters }).catch(() => []);
      if (tasks.length === 0 && left.length === 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    this.book.clearWaiters();
    for (const s of this.slots.values()) closeLogs(s);
    await this.shaping.close().catch(() => undefined);
    // Members, agents and the relay first (their services, and their containers by each node's
    // helper); then each node's volumes of the run, by its helper; then everything else of the run.
    const filters = JSON.stringify({ label: [`${DOCKER_LABELS.run}=${this.runId}`] });
    type Svc = { ID: string; Spec: { Labels?: Record<string, string> } };
    const services = (await this.docker.listServices({ filters }).catch(() => [])) as unknown as Svc[];
    await Promise.allSettled(
      services
        .filter((s) => s.Spec.Labels?.[DOCKER_LABELS.role] !== 'faults')
        .map((s) => this.docker.getService(s.ID).remove()),
    );
    // Their containers are not waited for: each node's helper removes them now.
    await this.helpers.removeContainers().catch(() => undefined);
    await this.helpers.removeVolumes().catch(() => []);
    this.helpers.close();
    if (this.relayRpc) await this.relayRpc.then((r) => r.close()).catch(() => undefined);
    await cleanSwarm({ docker: this.docker, runId: this.runId }).catch(() => undefined);
    await this.tasksGone(new Set(services.map((s) => s.ID)));
    await this.networkGone(filters);
    await this.rendezvous?.close();
  }
}
