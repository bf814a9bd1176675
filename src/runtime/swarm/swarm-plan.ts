// The swarm runtime's pure planning: from a topology, a run id and where each data center is placed,
// the specs of every service, network, volume and config a run creates. Nothing here talks to
// Docker, so the specs are what the unit tests check (placement, labels, dnsrr, volumes).
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_IMAGE_ROOT, shellWord } from '../container-command.js';
import type Docker from 'dockerode';
import type { NodeId } from '../../vocabulary/names.js';
import type { Topology } from '../../topology/topology.js';
import { DOCKER_LABELS, runLabels } from '../docker/docker-labels.js';

/** The node label that says which data center a node carries: `pole-bench.dc=<dc>`. */
export const DC_LABEL = 'pole-bench.dc';
/** A node carrying several data centers: one label per data center, `pole-bench.dc.<dc>=true`. */
export const dcFlagLabel = (dc: string): string => `${DC_LABEL}.${dc}`;

/** Where every swarm task finds the harness (swarm-rendezvous.ts): `host:port` and the run's token. */
export const TASK_ENV = {
  harness: 'POLE_BENCH_HARNESS',
  token: 'POLE_BENCH_TOKEN',
  run: 'POLE_BENCH_RUN',
  dc: 'POLE_BENCH_DC',
  node: 'POLE_BENCH_SWARM_NODE',
} as const;

/** What the swarm says of one of its nodes, as planning needs it. */
/** What a task of the run serves (swarm-task.ts). */
export const TASK_ROLES = ['agent', 'relay', 'faults'] as const;
export type TaskRole = (typeof TASK_ROLES)[number];

/**
 * A task's command in the node image: node on swarm-task-main.js, found where this package keeps it
 * (dist/…), under the image's copy of the package.
 */
export function taskCommand(role: TaskRole): string[] {
  const main = fileURLToPath(new URL('./swarm-task-main.js', import.meta.url));
  const inPackage = relative(fileURLToPath(new URL('../../../../', import.meta.url)), main);
  return ['node', `${NODE_IMAGE_ROOT}/${inPackage}`, role];
}

export interface SwarmNodeView {
  readonly id: string;
  readonly hostname: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Ready and active: the scheduler places tasks on it. */
  readonly usable: boolean;
}

/** Why the swarm cannot host a topology (the run command exits 2 with it). */
export class PlacementError extends Error {
  override readonly name = 'PlacementError';
}

/**
 * The placement constraint of each data center. `place` (--place dc=node,…) names a node by
 * hostname or id and wins; else the nodes labelled `pole-bench.dc=<dc>`; else those labelled
 * `pole-bench.dc.<dc>` (one node carrying several data centers, as a one-node swarm must).
 */
export function resolvePlacement(
  dcs: readonly string[],
  nodes: readonly SwarmNodeView[],
  place: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const usable = nodes.filter((n) => n.usable);
  for (const dc of place.keys())
    if (!dcs.includes(dc))
      throw new PlacementError(`--place: the topology has no data center ${dc} (it has ${dcs.join(', ')})`);
  const out = new Map<string, string>();
  for (const dc of dcs) {
    const named = place.get(dc);
    if (named !== undefined) {
      const node = usable.find((n) => n.hostname === named || n.id === named);
      if (!node)
        throw new PlacementError(
          `--place: no ready, active node of the swarm is named ${named} (for data center ${dc}); ` +
            `nodes: ${usable.map((n) => n.hostname).join(', ') || 'none'}`,
        );
      out.set(dc, `node.id==${node.id}`);
    } else if (usable.some((n) => n.labels[DC_LABEL] === dc)) {
      out.set(dc, `node.labels.${DC_LABEL}==${dc}`);
    } else if (usable.some((n) => n.labels[dcFlagLabel(dc)] === 'true')) {
      out.set(dc, `node.labels.${dcFlagLabel(dc)}==true`);
    } else {
      throw new PlacementError(
        `no ready node of the swarm carries data center ${dc}: label one ` +
          `(docker node update --label-add ${DC_LABEL}=${dc} NODE, or ${dcFlagLabel(dc)}=true on a node ` +
          `carrying several) or place it with --place ${dc}=NODE`,
      );
    }
  }
  return out;
}

/** Parses `--place dc=node,dc=node`. */
export function parsePlaceFlag(value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of value.split(',').map((p) => p.trim())) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(part);
    if (!m) throw new PlacementError(`--place: expected dc=node[,dc=node…], got '${part}'`);
    if (out.has(m[1]!)) throw new PlacementError(`--place: data center ${m[1]} placed twice`);
    out.set(m[1]!, m[2]!);
  }
  return out;
}

/**
 * A file a member's command reads (the target's config directory), written in its container by
 * its start script (memberStartScript) before the command runs. Not a swarm config: a task with a
 * config gets a tmpfs the daemon remounts read-only after writing it, and that remount fails now
 * and then with EBUSY ("unable to remount dir as readonly", moby issue 48783), which failed a
 * member's task, and with it a CI run, here.
 */
export interface MemberFile {
  /** Absolute path in the container. */
  readonly path: string;
  readonly data: Buffer;
}

/** What a member runs once its gate opens: its files, its /etc/hosts lines, its command. */
export interface MemberStart {
  /** The whole command line, the image's entrypoint included. */
  readonly cmd: readonly string[];
  /** Variables the command runs with ("NAME=value"). */
  readonly env?: readonly string[];
  readonly files: readonly MemberFile[];
  /** Lines for its /etc/hosts ("address name"): the target's peers abroad at the relay. */
  readonly hosts?: readonly string[];
}

// A path goes into the start script as it is: only characters needing no quoting.
const PLAIN_PATH = /^\/[A-Za-z0-9._/-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The script a member's gate runs (sh): writes each file (base64 in the script, decoded; readable
 * by all, writable by none, as a swarm config would be), appends the hosts lines, then becomes the
 * command, its stdout on the gate's connection to the harness (fd 3, gatedCommand): what the member
 * says there (its events, a target's log lines) reaches the harness directly, not through the
 * swarm's log stream, which stops passing on a task's output from other nodes now and then (moby
 * issue 33183; a CI run here saw no `elected` within 30 s of a kill, most likely so). Its stderr
 * stays in the task's log, for error messages.
 */
export function memberStartScript(m: MemberStart): string {
  const lines = ['set -e'];
  for (const f of m.files) {
    if (!PLAIN_PATH.test(f.path) || f.path.includes('..'))
      throw new Error(
        `a member's file path must be absolute and plain (letters, digits, . _ - /): '${f.path}'`,
      );
    const dir = f.path.slice(0, f.path.lastIndexOf('/')) || '/';
    lines.push(
      `mkdir -p ${dir}`,
      `printf %s '${f.data.toString('base64')}' | base64 -d > ${f.path}`,
      `chmod 444 ${f.path}`,
    );
  }
  if (m.hosts && m.hosts.length > 0)
    lines.push(`printf '%s\\n' ${m.hosts.map(shellWord).join(' ')} >> /etc/hosts`);
  for (const v of m.env ?? []) {
    const name = v.slice(0, Math.max(0, v.indexOf('=')));
    if (!ENV_NAME.test(name)) throw new Error(`a member's variable must be NAME=value: '${v}'`);
    lines.push(`export ${name}=${shellWord(v.slice(name.length + 1))}`);
  }
  lines.push(`exec ${m.cmd.map(shellWord).join(' ')} >&${GATE_FD} ${GATE_FD}>&-`);
  return `${lines.join('\n')}\n`;
}

/** Where the relay runs (SwarmPlan.relay says why). */
export const RELAY_PLACEMENT = 'node.role==manager';

/** The gate's connection to the harness, kept open for the member's stdout (memberStartScript). */
export const GATE_FD = 3;

/** Where the gate keeps the script it was sent, in the member's own file system. */
export const START_SCRIPT = '/tmp/pole-bench-start.sh';

/**
 * A member's command before it is known: a gate that dials the harness (bash's /dev/tcp: every
 * image here has bash, not every one has a client), says it is member `id`, reads its start
 * script until the harness closes its side of the connection, and runs it, the member's stdout
 * going back over that connection (memberStartScript). The harness sends every member's
 * script at one instant: the swarm starts tasks one by one over seconds, and the gate lets every
 * member start together, as the docker runtime does (a POLE node that starts seconds after its
 * peers loses the first election it should have won). And the service can be made before the
 * script exists: the relay it names, the shaping, are not waited for (the swarm takes seconds to
 * run a task).
 */
export function gatedCommand(id: NodeId, script = START_SCRIPT): string[] {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`a member id for the gate must be plain: '${id}'`);
  const h = TASK_ENV.harness;
  const hello = `{"token":"%s","role":"gate","key":"${id}"}\n`;
  return [
    'bash',
    '-c',
    [
      `exec ${GATE_FD}<>"/dev/tcp/\${${h}%:*}/\${${h}##*:}"`,
      `printf '${hello}' "$${TASK_ENV.token}" >&${GATE_FD}`,
      // Until the harness half-closes; the connection stays open the other way, for the member.
      `cat <&${GATE_FD} > ${script}`,
      `exec sh ${script}`,
    ].join(' && '),
  ];
}

/**
 * How long a task's container has between SIGTERM and SIGKILL when its service is removed (ns).
 * Its service goes at the run's teardown, when nothing it holds is wanted any more (a member's log
 * is fsynced as it goes): the swarm's default 10 s was most of a teardown.
 */
export const STOP_GRACE_NS = 1_000_000_000;

/** Docker object names: the run's prefix and a DNS-safe suffix (service names are DNS names). */
export function swarmName(runId: string, ...parts: string[]): string {
  const safe = parts.map((p) => p.toLowerCase().replace(/[^a-z0-9-]/g, '-'));
  return ['pb', runId, ...safe].join('-').slice(0, 63);
}

export interface SwarmPlanInput {
  readonly topology: Topology;
  readonly runId: string;
  /** The node image: members (POLE), agents, relay and the fault helper run it. */
  readonly image: string;
  /** Per data center, its placement constraint (resolvePlacement). */
  readonly placement: ReadonlyMap<string, string>;
  /** Where the tasks dial the harness back, and the run's token. */
  readonly harness: { readonly host: string; readonly port: number; readonly token: string };
}

/** A member's service before the target's plan gives its command and image. */
export interface MemberServiceInput {
  readonly id: NodeId;
  readonly image: string;
  /** Container ports the harness reaches (client, status page): published on the node, mode host. */
  readonly ports: readonly number[];
  /** Extra placement constraint (the node the member first ran on, kept across restarts). */
  readonly pinnedNode?: string;
}

export class SwarmPlan {
  constructor(private readonly i: SwarmPlanInput) {}

  get networkName(): string {
    return swarmName(this.i.runId);
  }

  labels(role: string, node?: NodeId): Record<string, string> {
    return {
      ...runLabels(this.i.runId),
      [DOCKER_LABELS.role]: role,
      ...(node ? { [DOCKER_LABELS.node]: node } : {}),
    };
  }

  /** The run's overlay: attachable (a task of any service, or a container, may join it). */
  network(): Docker.NetworkCreateOptions {
    return {
      Name: this.networkName,
      Driver: 'overlay',
      Attachable: true,
      CheckDuplicate: true,
      Labels: this.labels('network'),
    };
  }

  /** A member's stable DNS name on the overlay (its service's name, dnsrr: the task's own address). */
  memberHost(id: NodeId): string {
    return swarmName(this.i.runId, id);
  }

  volumeName(id: NodeId): string {
    return swarmName(this.i.runId, id, 'data');
  }

  get relayHost(): string {
    return swarmName(this.i.runId, 'relay');
  }

  private constraint(dc: string): string {
    const c = this.i.placement.get(dc);
    if (c === undefined) throw new PlacementError(`data center ${dc} has no placement`);
    return c;
  }

  private harnessEnv(): string[] {
    const h = this.i.harness;
    return [
      `${TASK_ENV.harness}=${h.host}:${h.port}`,
      `${TASK_ENV.token}=${h.token}`,
      `${TASK_ENV.run}=${this.i.runId}`,
    ];
  }

  /**
   * One member: its command behind the start gate; one replica, never restarted by the swarm (a killed leader stays dead until the
   * scenario restarts it), NET_ADMIN, dnsrr (its name resolves to its task's own address, so it
   * has no virtual IP in front of it), its data on a named volume (a restart keeps its log),
   * its client and status ports published on its node for the harness.
   */
  member(m: MemberServiceInput): Docker.CreateServiceOptions {
    const dc = this.i.topology.node(m.id).datacenter;
    const labels = this.labels('node', m.id);
    return {
      Name: this.memberHost(m.id),
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: m.image,
          Command: gatedCommand(m.id),
          Env: this.harnessEnv(),
          Labels: labels,
          Hostname: this.memberHost(m.id),
          StopGracePeriod: STOP_GRACE_NS,
          Init: true,
          CapabilityAdd: ['NET_ADMIN'],
          Mounts: [
            {
              Type: 'volume',
              Source: this.volumeName(m.id),
              Target: '/data',
              VolumeOptions: { NoCopy: false, Labels: labels, DriverConfig: { Name: 'local', Options: {} } },
            },
          ],
        },
        RestartPolicy: { Condition: 'none' },
        Placement: {
          Constraints: [this.constraint(dc), ...(m.pinnedNode ? [`node.id==${m.pinnedNode}`] : [])],
        },
        Networks: [{ Target: this.networkName, Aliases: [] }],
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: {
        Mode: 'dnsrr',
        // Mode host, no published port: the node picks a free one (read back from the task), so
        // members on one node never collide.
        Ports: m.ports.map((p) => ({ Protocol: 'tcp', TargetPort: p, PublishMode: 'host' })),
      },
    };
  }

  /**
   * The load agent of a data center: placed in it, it dials the harness back and waits for
   * `start` (started paused; every agent's start names one common t = 0). SYS_NICE lets it raise
   * its priority, as in the docker runtime.
   */
  agent(dc: string): Docker.CreateServiceOptions {
    // The data center it loads, in the node label: the self-check names its CPU by it.
    const labels = this.labels('agent', dc);
    return {
      Name: swarmName(this.i.runId, 'agent', dc),
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: this.i.image,
          Command: taskCommand('agent'),
          StopGracePeriod: STOP_GRACE_NS,
          Env: [...this.harnessEnv(), `${TASK_ENV.dc}=${dc}`],
          Labels: labels,
          Init: true,
          CapabilityAdd: ['SYS_NICE'],
        },
        RestartPolicy: { Condition: 'none' },
        Placement: { Constraints: [this.constraint(dc)] },
        Networks: [{ Target: this.networkName }],
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' },
    };
  }

  /**
   * The delay relay as a service on the overlay (where the kernel has no netem): members dial it
   * by name, it dials them by theirs; the harness drives it over its dial-back connection. It
   * carries every link between data centers, so it runs on a manager: a run already depends on
   * its manager, and the loss of a worker host (a data center) must not take every link with it.
   * Placed anywhere, it once landed on the host the 3-host test kills, and the two data centers
   * left could no longer reach each other: no leader for the rest of the run.
   */
  relay(): Docker.CreateServiceOptions {
    const labels = this.labels('relay');
    return {
      Name: this.relayHost,
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: this.i.image,
          Command: taskCommand('relay'),
          StopGracePeriod: STOP_GRACE_NS,
          Env: this.harnessEnv(),
          Labels: labels,
          Hostname: this.relayHost,
          Init: true,
          CapabilityAdd: ['SYS_NICE'],
        },
        RestartPolicy: { Condition: 'none' },
        Placement: { Constraints: [RELAY_PLACEMENT] },
        Networks: [{ Target: this.networkName }],
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'dnsrr' },
    };
  }

  /**
   * The fault helper: one task on every node (global), with that node's Docker socket, which
   * kills, pauses and resumes the run's member containers there and removes the run's volumes
   * (fault-helper.ts says why a helper and not the node's Docker API). It needs no overlay: it
   * dials the harness from the node's own network.
   */
  faultHelper(): Docker.CreateServiceOptions {
    const labels = this.labels('faults');
    return {
      Name: swarmName(this.i.runId, 'faults'),
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: this.i.image,
          Command: taskCommand('faults'),
          Env: [...this.harnessEnv(), `${TASK_ENV.node}={{.Node.ID}}`],
          Labels: labels,
          Init: true,
          Mounts: [{ Type: 'bind', Source: '/var/run/docker.sock', Target: '/var/run/docker.sock' }],
        },
        RestartPolicy: { Condition: 'none' },
      },
      Mode: { Global: {} },
    };
  }
}
