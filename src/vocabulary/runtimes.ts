// The runtimes by name, once, and what each can run: the flags of `run`, `suite` and `bench`, the
// result's schema and the capability checks all read them from here. How each is made is the
// runtime layer's (runtime/registry.ts); what they can do is vocabulary, so that a command can
// refuse a request before anything is loaded or started.
import { TARGET_NAMES, type ShapingName, type TargetName } from './names.js';

/** Where a run's members live: local processes, Docker containers, services on a Docker Swarm. */
export const RUNTIME_NAMES = ['process', 'docker', 'swarm'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

/** What `--runtime` accepts: a runtime, or `auto` (docker where its images exist, else processes). */
export const RUNTIME_CHOICES = ['auto', ...RUNTIME_NAMES] as const;
export type RuntimeChoiceName = (typeof RUNTIME_CHOICES)[number];

export interface RuntimeSupport {
  /**
   * The targets it runs: every one, since a target plans its members once and each runtime runs
   * any plan (targets/member-plan.ts); a runtime that could not would say why here.
   */
  readonly targets: readonly TargetName[];
  /**
   * The shapings it can apply. netem needs a network stack per member (a container), which local
   * processes share.
   */
  readonly shaping: readonly ShapingName[];
}

export const RUNTIME_SUPPORT: Readonly<Record<RuntimeName, RuntimeSupport>> = {
  process: { targets: TARGET_NAMES, shaping: ['none', 'relay'] },
  docker: { targets: TARGET_NAMES, shaping: ['none', 'relay', 'netem'] },
  swarm: { targets: TARGET_NAMES, shaping: ['none', 'relay', 'netem'] },
};

/** Why `runtime` cannot run `target`, or undefined when it can. */
export function runtimeLacks(runtime: RuntimeName, target: TargetName): string | undefined {
  const s = RUNTIME_SUPPORT[runtime];
  if (s.targets.includes(target)) return undefined;
  return `the ${runtime} runtime does not run the ${target} target`;
}
