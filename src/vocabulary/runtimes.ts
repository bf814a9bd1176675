// The runtimes by name, once: the flags of `run`, `suite` and `bench` and the result's schema
// read them from here. What each one is and does (how it is chosen, shapes delay, is made, is
// cleaned after) its own folder declares, registered in runtime/registry.ts.

/** Where a run's members live: local processes, Docker containers, services on a Docker Swarm. */
export const RUNTIME_NAMES = ['process', 'docker', 'swarm'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

/** What `--runtime` accepts: a runtime, or `auto` (the first that can run here: runtime/registry.ts AUTO_ORDER). */
export const RUNTIME_CHOICES = ['auto', ...RUNTIME_NAMES] as const;
export type RuntimeChoiceName = (typeof RUNTIME_CHOICES)[number];
