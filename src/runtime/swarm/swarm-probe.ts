// Can the swarm that DOCKER_HOST (or the local daemon) manages host a topology? Checked before a
// run starts, so that what is missing (a swarm, a manager, the image, the capability API, a node
// carrying a data center) is said by name with exit 2 instead of failing the run half-way. Also
// which address of this machine the swarm's tasks dial the harness back on.
import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type Docker from 'dockerode';
import { PlacementError, resolvePlacement, type SwarmNodeView } from './swarm-plan.js';

/** Services with CapabilityAdd (NET_ADMIN, SYS_NICE) and Init need the Engine API 1.41 (Docker 20.10). */
const MIN_API = [1, 41] as const;

export interface SwarmReady {
  readonly reason: string;
  /** Per data center, its placement constraint. */
  readonly placement: Map<string, string>;
  readonly nodes: SwarmNodeView[];
}

interface RawNode {
  ID: string;
  Description?: { Hostname?: string };
  Spec?: { Labels?: Record<string, string>; Availability?: string };
  Status?: { State?: string; Addr?: string };
}

export function nodeView(n: RawNode): SwarmNodeView {
  return {
    id: n.ID,
    hostname: n.Description?.Hostname ?? n.ID,
    labels: n.Spec?.Labels ?? {},
    usable: n.Status?.State === 'ready' && n.Spec?.Availability === 'active',
  };
}

/** Throws PlacementError naming what is missing; else the placement of every data center. */
export async function probeSwarm(
  o: {
    datacenters: readonly string[];
    place?: ReadonlyMap<string, string>;
    /** Every image the run's tasks need (the node image; a target's own). */
    images: readonly string[];
  },
  given?: Docker,
): Promise<SwarmReady> {
  const docker = given ?? (await localEngine());
  const where = process.env.DOCKER_HOST ?? 'the local Docker daemon';
  const info = (await docker.info().catch((err: Error) => {
    throw new PlacementError(`no Docker daemon answers at ${where}: ${err.message}`);
  })) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  if (info.Swarm?.LocalNodeState !== 'active')
    throw new PlacementError(
      `${where} is in no swarm (state ${info.Swarm?.LocalNodeState ?? 'unknown'}): docker swarm init, or point DOCKER_HOST at a manager`,
    );
  if (!info.Swarm.ControlAvailable)
    throw new PlacementError(`${where} is a swarm worker, not a manager: point DOCKER_HOST at a manager`);
  const version = (await docker.version()) as { ApiVersion?: string };
  const [major, minor] = (version.ApiVersion ?? '0.0').split('.').map(Number);
  if ((major ?? 0) < MIN_API[0] || ((major ?? 0) === MIN_API[0] && (minor ?? 0) < MIN_API[1]))
    throw new PlacementError(
      `${where} speaks Engine API ${version.ApiVersion}; services with the NET_ADMIN capability (CapabilityAdd) need ${MIN_API.join('.')} (Docker 20.10)`,
    );
  for (const image of o.images)
    await docker
      .getImage(image)
      .inspect()
      .catch(() => {
        throw new PlacementError(
          `image ${image} is missing on the manager (build it: pole-bench image build; every node carrying a data center needs it too)`,
        );
      });
  const nodes = ((await docker.listNodes()) as RawNode[]).map(nodeView);
  const placement = resolvePlacement(o.datacenters, nodes, o.place);
  const used = nodes.filter((n) => n.usable).length;
  return {
    reason: `swarm of ${nodes.length} node${nodes.length === 1 ? '' : 's'} (${used} usable) at ${where}`,
    placement,
    nodes,
  };
}

/**
 * The address of this machine the swarm's tasks reach: POLE_BENCH_HARNESS_HOST when set; else this
 * machine's own address on the route to the manager: towards DOCKER_HOST=tcp://… when given, else
 * towards the manager's swarm address. When the harness runs on the manager that is the manager's
 * own address; when the manager is a container on this machine (`pole-bench swarm up`'s hosts, whose
 * API comes as a unix socket) it is this machine's address on the hosts' bridge, where the manager's
 * own address is not one the harness can listen on.
 */
export async function harnessHost(engine?: Docker): Promise<string> {
  const given = process.env.POLE_BENCH_HARNESS_HOST;
  if (given) return given;
  const dh = process.env.DOCKER_HOST;
  const m = dh ? /^tcp:\/\/\[?([^\]/]+?)\]?:(\d+)/.exec(dh) : null;
  if (m) return localAddressTowards(m[1]!);
  const docker = engine ?? (await localEngine());
  const info = (await docker.info()) as { Swarm?: { NodeAddr?: string } };
  const addr = info.Swarm?.NodeAddr;
  if (!addr) throw new Error('the Docker daemon has no swarm address to reach the harness on');
  // A swarm advertised on loopback (`docker swarm init --advertise-addr 127.0.0.1`) would have the
  // harness listen on loopback, where no task in a container reaches it: every task would then be
  // waited for until its deadline. Said at once instead.
  const local = await localAddressTowards(addr);
  if (isLoopback(local))
    throw new PlacementError(
      `the swarm's own address is ${addr}, on loopback: its tasks cannot dial the harness back there. Make the swarm with --advertise-addr on an address its nodes reach (docker swarm init --advertise-addr ADDR), or set POLE_BENCH_HARNESS_HOST to this machine's address the tasks reach`,
    );
  return local;
}

/** 127.0.0.0/8, ::1 and IPv4 loopback written as IPv6. */
function isLoopback(addr: string): boolean {
  return /^127\./.test(addr) || addr === '::1' || /^::ffff:127\./i.test(addr);
}

/**
 * The local address the kernel would send from towards `host`: a connected UDP socket is given its
 * source by the routing table, without a packet sent (so a firewall or a closed port cannot stall it).
 */
async function localAddressTowards(host: string): Promise<string> {
  const s = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.connect(9, host, () => resolve());
    });
    return s.address().address;
  } catch (err) {
    throw new Error(`no route from this machine towards the swarm at ${host}: ${(err as Error).message}`);
  } finally {
    s.close();
  }
}

/**
 * The engine DOCKER_HOST names. dockerode is loaded here, when a swarm is asked about: with its
 * dependencies it is a third of `pole-bench run`'s start-up, which a run on processes never needs.
 */
async function localEngine(): Promise<Docker> {
  const { default: Dockerode } = await import('dockerode');
  return new Dockerode();
}
