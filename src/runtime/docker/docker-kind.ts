// The docker runtime as the registry knows it: members in containers of the local Docker daemon,
// each with a network stack of its own, so netem applies where this kernel has it.
import { InputError } from '../../util/input-error.js';
import { ownImageOf } from '../../targets/registry.js';
import type { RuntimeKind, RuntimeRequest } from '../runtime-kind.js';

/** What both container runtimes take: the node image they cannot start without, and the target's own. */
export function containerOptions(name: string, r: RuntimeRequest) {
  if (r.image === undefined) throw new Error(`the ${name} runtime needs the node image`);
  return {
    shaping: r.shaping,
    seed: r.seed,
    target: r.target,
    image: r.image,
    ...(r.images ? { images: r.images } : {}),
    ...(r.targetOption !== undefined ? { targetOption: r.targetOption } : {}),
  };
}

export const dockerKind: RuntimeKind = {
  name: 'docker',
  summary: 'containers of the local Docker daemon',
  shaping: { netem: 'here', auto: 'netem-here' },
  async choose(ask) {
    const { dockerStatus } = await import('../../image/docker-probe.js');
    const status = await dockerStatus(ask.version, ownImageOf(ask.target)?.target);
    if (!status.image) throw new InputError({ file: '--runtime docker', problem: status.reason });
    return {
      runtime: 'docker',
      reason: status.reason,
      image: status.image,
      ...(status.images ? { images: status.images } : {}),
    };
  },
  async cannotRun(target, version) {
    const { dockerStatus } = await import('../../image/docker-probe.js');
    const status = await dockerStatus(version, ownImageOf(target)?.target);
    return status.image ? undefined : status.reason;
  },
  async make(t, r) {
    const { DockerRuntime } = await import('./docker-runtime.js');
    const { planNetem } = await import('../../shaping/netem/netem-plan.js');
    return new DockerRuntime(t, {
      ...containerOptions('docker', r),
      tcPlan: (addresses) => planNetem(t, addresses),
    });
  },
  async reap(o) {
    const { cleanDocker } = await import('./docker-clean.js');
    const r = await cleanDocker({ orphansOnly: o.orphansOnly });
    return [...r.containers.map((c) => `container ${c}`), ...r.networks.map((n) => `network ${n}`)];
  },
  async leftovers(runId) {
    const { runLeftovers } = await import('./docker-clean.js');
    return runLeftovers(runId);
  },
};
