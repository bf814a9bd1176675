// The runtimes by name, once, and what each can run: the flags of `run`, `suite` and `bench`, the
// result's schema and the capability checks all read them from here. How each is made is the
// runtime layer's (runtime/registry.ts); what they can do is vocabulary, so that a command can
// refuse a request before anything is loaded or started.
import type { ShapingName, TargetName } from './names.js';

/** Where a run's members live: local processes, Docker containers, services on a Docker Swarm. */
export const RUNTIME_NAMES = ['process', 'docker', 'swarm'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

/** What `--runtime` accepts: a runtime, or `auto` (docker where its images exist, else processes). */
export const RUNTIME_CHOICES = ['auto', ...RUNTIME_NAMES] as const;
export type RuntimeChoiceName = (typeof RUNTIME_CHOICES)[number];

export interface RuntimeSupport {
  /** The targets it runs; any other is refused with `why` below. */
  readonly targets: readonly TargetName[];
  /** Why a target it does not run is not run there, and what to use instead. */
  readonly lacks?: Partial<Record<TargetName, string>>;
  /**
   * The shapings it can apply. netem needs a network stack per member (a container), which local
   * processes share.
   */
  readonly shaping: readonly ShapingName[];
}

export const RUNTIME_SUPPORT: Readonly<Record<RuntimeName, RuntimeSupport>> = {
  process: { targets: ['pole', 'zookeeper', 'etcd'], shaping: ['none', 'relay'] },
  docker: { targets: ['pole', 'zookeeper', 'etcd'], shaping: ['none', 'relay', 'netem'] },
  swarm: {
    targets: ['pole', 'zookeeper'],
    lacks: {
      // Its peer URLs would need the relay's by-source routes, which the swarm's services lack.
      etcd: 'the etcd target runs as local processes or docker containers, not on a swarm yet: use --runtime process or docker',
    },
    shaping: ['none', 'relay', 'netem'],
  },
};

/** Why `runtime` cannot run `target`, or undefined when it can. */
export function runtimeLacks(runtime: RuntimeName, target: TargetName): string | undefined {
  const s = RUNTIME_SUPPORT[runtime];
  if (s.targets.includes(target)) return undefined;
  return s.lacks?.[target] ?? `the ${runtime} runtime does not run the ${target} target`;
}
