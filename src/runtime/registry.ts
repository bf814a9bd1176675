// How each runtime is made, by name (the names and what each runs: vocabulary/runtimes.ts). The
// container runtimes are loaded only when chosen: with dockerode they are a third of a command's
// start-up, which a run on local processes (the quick start, most tests) never uses.
import type { Topology } from '../topology/topology.js';
import type { Target } from '../targets/target.js';
import type { ContainerImage, ShapingChoice } from '../vocabulary/names.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';
import type { Runtime } from './runtime.js';
import { planNetem } from '../shaping/netem/netem-plan.js';

/** What every runtime is made from; each takes what applies to it. */
export interface RuntimeRequest {
  readonly shaping: ShapingChoice;
  readonly seed: number;
  readonly target: Target;
  /** The node image (docker and swarm). */
  readonly image?: string;
  /** The target's own images (docker and swarm). */
  readonly images?: Partial<Record<ContainerImage, string>>;
  /** The value of the target's own run option (Target.option). */
  readonly targetOption?: string;
  /** swarm: the node each data center's tasks are placed on. */
  readonly place?: ReadonlyMap<string, string>;
}

type Maker = (t: Topology, r: RuntimeRequest) => Promise<Runtime>;

/** What both container runtimes take: the node image they cannot start without, and the target's own. */
function containerOptions(name: RuntimeName, r: RuntimeRequest) {
  if (r.image === undefined) throw new Error(`the ${name} runtime needs the node image`);
  return {
    shaping: r.shaping,
    seed: r.seed,
    target: r.target,
    image: r.image,
    ...(r.images ? { images: r.images } : {}),
  };
}

const MAKERS: Readonly<Record<RuntimeName, Maker>> = {
  process: async (t, r) =>
    new (await import('./process/process-runtime.js')).ProcessRuntime(t, {
      shaping: r.shaping,
      seed: r.seed,
      target: r.target,
      ...(r.targetOption !== undefined ? { targetOption: r.targetOption } : {}),
    }),
  docker: async (t, r) =>
    new (await import('./docker/docker-runtime.js')).DockerRuntime(t, {
      ...containerOptions('docker', r),
      ...(r.targetOption !== undefined ? { targetOption: r.targetOption } : {}),
      tcPlan: (addresses) => planNetem(t, addresses),
    }),
  swarm: async (t, r) =>
    new (await import('./swarm/swarm-runtime.js')).SwarmRuntime(t, {
      ...containerOptions('swarm', r),
      ...(r.targetOption !== undefined ? { targetOption: r.targetOption } : {}),
      ...(r.place ? { place: r.place } : {}),
    }),
};

/** The runtime `name`, made for topology `t` (nothing is started until its start()). */
export function makeRuntime(name: RuntimeName, t: Topology, r: RuntimeRequest): Promise<Runtime> {
  return MAKERS[name](t, r);
}
