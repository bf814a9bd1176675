// The swarm runtime as the registry knows it: members as services of the Docker Swarm that
// DOCKER_HOST (or the local daemon) manages, placed by data center (node labels, or --place), the
// relay as a service on the run's overlay, netem in each member's task by its node's fault helper.
import { InputError } from '../../util/input-error.js';
import { ownImageOf } from '../../targets/registry.js';
import { containerOptions } from '../docker/docker-kind.js';
import type { RuntimeKind } from '../runtime-kind.js';
import { PlacementError, parsePlaceFlag } from './swarm-plan.js';

/** --place as a map, its errors as input errors (exit 2). */
function parsePlace(value: string): Map<string, string> {
  try {
    return parsePlaceFlag(value);
  } catch (err) {
    if (err instanceof PlacementError) throw new InputError({ file: '--place', problem: err.message });
    throw err;
  }
}

export const swarmKind: RuntimeKind = {
  name: 'swarm',
  summary: 'services of the swarm DOCKER_HOST manages (`pole-bench swarm up` makes a local one)',
  shaping: {
    // The members' hosts' kernels decide, not this machine's: each is tried when its members'
    // tasks exist (swarm-netem-shaper.ts), and a host without netem fails the run saying so.
    netem: "in every member's task, by its node's fault helper",
    auto: { relay: 'the swarm runtime runs the userspace relay as a service on the run network' },
  },
  option: {
    flag: 'place',
    description:
      'swarm: data center → node, e.g. tud=node1,cern=node2 (over the nodes’ pole-bench.dc=<dc> labels)',
  },
  async choose(ask) {
    const { nodeImageTag } = await import('../../image/image-name.js');
    const { targetImageTag } = await import('../../image/target-images.js');
    const { harnessHost, probeSwarm } = await import('./swarm-probe.js');
    const image = nodeImageTag(ask.version);
    const kind = ownImageOf(ask.target)?.target;
    const own = kind ? { [kind]: targetImageTag(kind, ask.version) } : undefined;
    try {
      const ready = await probeSwarm({
        datacenters: ask.datacenters,
        images: [image, ...Object.values(own ?? {})],
        ...(ask.option !== undefined ? { place: parsePlace(ask.option) } : {}),
      });
      // Where the tasks will dial back, checked now: a swarm they cannot reach it from is bad input.
      await harnessHost();
      return { runtime: 'swarm', reason: ready.reason, image, ...(own ? { images: own } : {}) };
    } catch (err) {
      if (err instanceof PlacementError)
        throw new InputError({ file: '--runtime swarm', problem: err.message });
      throw err;
    }
  },
  async cannotRun(target, version) {
    const { dockerStatus } = await import('../../image/docker-probe.js');
    const status = await dockerStatus(version, ownImageOf(target)?.target);
    if (!status.image) return status.reason;
    const { default: Docker } = await import('dockerode');
    const { swarmRole } = await import('./swarm-clean.js');
    try {
      const role = await swarmRole(new Docker());
      if (role === 'none')
        return 'the Docker engine is in no swarm: `pole-bench swarm up --topology FILE` makes a local one (docs/swarm.md)';
      if (role === 'worker') return 'the Docker engine is a swarm worker: point DOCKER_HOST at a manager';
      return undefined;
    } catch (err) {
      return `no Docker daemon answers: ${(err as Error).message}`;
    }
  },
  async make(t, r) {
    const { SwarmRuntime } = await import('./swarm-runtime.js');
    return new SwarmRuntime(t, {
      ...containerOptions('swarm', r),
      ...(r.runtimeOption !== undefined ? { place: parsePlace(r.runtimeOption) } : {}),
    });
  },
  reapFirst: true,
  async reap(o) {
    const { cleanSwarm } = await import('./swarm-clean.js');
    const s = await cleanSwarm({ orphansOnly: o.orphansOnly });
    return [
      ...s.services.map((x) => `service ${x}`),
      ...s.networks.map((x) => `network ${x}`),
      ...s.configs.map((x) => `config ${x}`),
      ...s.volumes.map((x) => `volume ${x}`),
    ];
  },
  async leftovers(runId) {
    const { swarmLeftovers } = await import('./swarm-leftovers.js');
    return swarmLeftovers(runId);
  },
};
