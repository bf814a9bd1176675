// --runtime and --shaping: which runtime and shaping a run gets, and why (the report says so).
import { dockerStatus } from '../image/docker-probe.js';
import { InputError } from '../util/input-error.js';
import type { ContainerImage, ShapingChoice, TargetName } from '../vocabulary/names.js';
import {
  RUNTIME_SUPPORT,
  runtimeLacks,
  type RuntimeChoiceName,
  type RuntimeName,
} from '../vocabulary/runtimes.js';
import { nodeImageTag } from '../image/image-name.js';
import { ownImageOf, targetImageTag } from '../image/target-images.js';
import { PlacementError } from './swarm/swarm-plan.js';
import { harnessHost, probeSwarm } from './swarm/swarm-probe.js';

export interface RuntimeChoice {
  readonly runtime: RuntimeName;
  readonly reason: string;
  /** The node image (docker and swarm). */
  readonly image?: string;
  /** The target's own images (docker and swarm). */
  readonly images?: Partial<Record<ContainerImage, string>>;
  /** swarm only: each data center's placement constraint. */
  readonly placement?: ReadonlyMap<string, string>;
}

/** What the swarm runtime is checked against: the topology's data centers and --place. */
export interface SwarmAsk {
  readonly datacenters: readonly string[];
  readonly place?: ReadonlyMap<string, string>;
}

export async function chooseRuntime(
  asked: RuntimeChoiceName,
  version: string,
  target: TargetName = 'pole',
  swarm: SwarmAsk = { datacenters: [] },
): Promise<RuntimeChoice> {
  if (asked !== 'auto') {
    const lacks = runtimeLacks(asked, target);
    if (lacks !== undefined) throw new InputError({ file: `--runtime ${asked}`, problem: lacks });
  }
  if (asked === 'process') return { runtime: 'process', reason: 'asked for' };
  if (asked === 'swarm') return chooseSwarm(version, target, swarm);
  const status = await dockerStatus(version, target);
  const images = status.images ? { images: status.images } : {};
  if (asked === 'docker') {
    if (!status.image) throw new InputError({ file: '--runtime', problem: `docker: ${status.reason}` });
    return { runtime: 'docker', reason: 'asked for', image: status.image, ...images };
  }
  return status.image
    ? { runtime: 'docker', reason: `auto: ${status.reason}`, image: status.image, ...images }
    : { runtime: 'process', reason: `auto: ${status.reason}` };
}

/** The swarm DOCKER_HOST (or the local daemon) manages, if it can host the topology; else exit 2 naming why. */
async function chooseSwarm(version: string, target: TargetName, swarm: SwarmAsk): Promise<RuntimeChoice> {
  const image = nodeImageTag(version);
  const kind = ownImageOf(target);
  const own = kind ? { [kind]: targetImageTag(kind, version) } : undefined;
  try {
    const ready = await probeSwarm({
      datacenters: swarm.datacenters,
      images: [image, ...Object.values(own ?? {})],
      ...(swarm.place ? { place: swarm.place } : {}),
    });
    // Where the tasks will dial back, checked now: a swarm they cannot reach it from is bad input.
    await harnessHost();
    return {
      runtime: 'swarm',
      reason: `asked for: ${ready.reason}`,
      image,
      ...(own ? { images: own } : {}),
      placement: ready.placement,
    };
  } catch (err) {
    if (err instanceof PlacementError)
      throw new InputError({ file: '--runtime swarm', problem: err.message });
    throw err;
  }
}

/**
 * auto: netem where the runtime can apply it and the kernel has it, else the relay. `netemProbe`
 * tells whether this kernel has netem and, if not, why.
 */
export function chooseShaping(
  asked: 'auto' | 'relay' | 'netem' | 'none',
  runtime: RuntimeName,
  dcs: number,
  netem: { available: boolean; reason: string },
): ShapingChoice {
  if (asked === 'none') return { kind: 'none', reason: 'asked for: no added delay' };
  if (asked === 'relay') return { kind: 'relay', reason: 'asked for' };
  if (asked === 'netem') {
    if (!RUNTIME_SUPPORT[runtime].shaping.includes('netem'))
      throw new InputError({
        file: '--shaping',
        problem: `netem needs a runtime that gives each member its own network stack (${netemRuntimes()}), not ${runtime}; use --shaping relay`,
      });
    // On a swarm the members' hosts' kernels decide, not this machine's: each is tried when its
    // members' tasks exist (swarm-netem-shaper.ts), and a host without netem fails the run saying so.
    if (runtime === 'swarm')
      return { kind: 'netem', reason: "asked for: in every member's task, by its node's fault helper" };
    if (!netem.available) throw new InputError({ file: '--shaping', problem: `netem: ${netem.reason}` });
    return { kind: 'netem', reason: 'asked for' };
  }
  if (dcs < 2) return { kind: 'none', reason: 'auto: one data center, nothing to delay' };
  if (runtime === 'swarm')
    return {
      kind: 'relay',
      reason: 'auto: the swarm runtime runs the userspace relay as a service on the run network',
    };
  if (runtime === 'process')
    return {
      kind: 'relay',
      reason: 'auto: local processes share one network stack, so delays come from the userspace relay',
    };
  return netem.available
    ? { kind: 'netem', reason: `auto: ${netem.reason}` }
    : { kind: 'relay', reason: `auto: ${netem.reason}; the userspace relay applies the delays` };
}

/** The runtimes that can apply netem, for the message that refuses it elsewhere. */
function netemRuntimes(): string {
  return (Object.keys(RUNTIME_SUPPORT) as RuntimeName[])
    .filter((r) => RUNTIME_SUPPORT[r].shaping.includes('netem'))
    .join(' or ');
}
