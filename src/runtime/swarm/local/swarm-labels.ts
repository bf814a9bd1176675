// The labels of the local swarm: on the machine's Docker (host containers and their network: the
// house's labels, so `pole-bench clean` reaps them, plus `persistent` so a run starting does not)
// and on the swarm's nodes (the data center each host emulates, what placement constraints name).
import { DOCKER_LABELS } from '../../docker/docker-labels.js';
import type { SwarmRole } from './swarm-plan.js';

/** The pole-bench.run value of everything `swarm up` makes (`pole-bench clean` prints it). */
export const SWARM_RUN = 'swarm';

export const SWARM_ROLES = {
  host: 'swarm-host',
  network: 'swarm-network',
} as const;

/**
 * The swarm node label naming the data center a host emulates; a service is placed in data
 * center D with the constraint `node.labels.pole-bench.dc==D`. Also on the host container.
 */
export const DC_LABEL = 'pole-bench.dc';
/** On the host container: manager or worker. */
export const SWARM_ROLE_LABEL = 'pole-bench.swarm-role';

export function dcConstraint(dc: string): string {
  return `node.labels.${DC_LABEL}==${dc}`;
}

function swarmLabels(role: string): Record<string, string> {
  return {
    [DOCKER_LABELS.managed]: 'true',
    [DOCKER_LABELS.run]: SWARM_RUN,
    [DOCKER_LABELS.role]: role,
    [DOCKER_LABELS.persistent]: 'true',
  };
}

export function hostLabels(dc: string, role: SwarmRole): Record<string, string> {
  return { ...swarmLabels(SWARM_ROLES.host), [DC_LABEL]: dc, [SWARM_ROLE_LABEL]: role };
}

export function networkLabels(): Record<string, string> {
  return swarmLabels(SWARM_ROLES.network);
}

/** The `--filter label=…` values that select what `swarm up` made with ROLE (any role if none). */
export function swarmFilters(role?: string): string[] {
  return [
    `label=${DOCKER_LABELS.run}=${SWARM_RUN}`,
    `label=${DOCKER_LABELS.managed}=true`,
    ...(role ? [`label=${DOCKER_LABELS.role}=${role}`] : []),
  ];
}

/** Labels as `--label k=v` arguments of the docker CLI. */
export function labelArgs(labels: Record<string, string>): string[] {
  return Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
}
