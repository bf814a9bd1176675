// Can the swarm that DOCKER_HOST (or the local daemon) manages host a topology? Checked before a
// run starts, so that what is missing (a swarm, a manager, the image, the capability API, a node
// carrying a data center) is said by name with exit 2 instead of failing the run half-way. Also
// which address of this machine the swarm's tasks dial the harness back on.
import { connect } from 'node:net';
import Docker from 'dockerode';
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
  o: { datacenters: readonly string[]; place?: ReadonlyMap<string, string>; image: string },
  docker = new Docker(),
): Promise<SwarmReady> {
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
  await docker
    .getImage(o.image)
    .inspect()
    .catch(() => {
      throw new PlacementError(
        `image ${o.image} is missing on the manager (build it: pole-bench image build; every node carrying a data center needs it too)`,
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
 * The address of this machine the swarm's tasks reach: POLE_BENCH_HARNESS_HOST when set; with
 * DOCKER_HOST=tcp://…, the local address of a connection to it (the interface facing the swarm);
 * else the local node's own swarm address (the harness runs on the manager).
 */
export async function harnessHost(docker = new Docker()): Promise<string> {
  const given = process.env.POLE_BENCH_HARNESS_HOST;
  if (given) return given;
  const dh = process.env.DOCKER_HOST;
  const m = dh ? /^tcp:\/\/\[?([^\]/]+?)\]?:(\d+)/.exec(dh) : null;
  if (m) {
    return new Promise((resolve, reject) => {
      const s = connect({ host: m[1]!, port: Number(m[2]) }, () => {
        const a = s.localAddress;
        s.destroy();
        if (a) resolve(a);
        else reject(new Error(`no local address towards ${dh}`));
      });
      s.once('error', reject);
      s.setTimeout(5_000, () => s.destroy(new Error(`no connection to ${dh}`)));
    });
  }
  const info = (await docker.info()) as { Swarm?: { NodeAddr?: string } };
  const addr = info.Swarm?.NodeAddr;
  if (!addr) throw new Error('the local Docker daemon has no swarm address to reach the harness on');
  return addr;
}
