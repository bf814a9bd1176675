// Docker tests run where a daemon answers and the node image exists (`.ci/run` makes sure of both);
// elsewhere they skip and say why.
import Docker from 'dockerode';
import { dockerStatus } from '../../src/image/docker-probe.js';
import { DOCKER_LABELS } from '../../src/runtime/docker/docker-labels.js';
import type { TargetName } from '../../src/vocabulary/names.js';

/** undefined when Docker tests of `target` can run (its images exist), else the reason they skip. */
export async function dockerSkipReason(target: TargetName = 'pole'): Promise<string | undefined> {
  const s = await dockerStatus(undefined, target);
  return s.image ? undefined : `Docker tests skipped: ${s.reason}`;
}

export async function nodeImage(): Promise<string> {
  const s = await dockerStatus();
  if (!s.image) throw new Error(s.reason);
  return s.image;
}

/** Every container and network labelled pole-bench that is still there. */
export async function dockerLeftovers(): Promise<string[]> {
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.managed}=true`] });
  const cs = await docker.listContainers({ all: true, filters });
  const ns = await docker.listNetworks({ filters });
  return [...cs.map((c) => `container ${c.Names[0]}`), ...ns.map((n) => `network ${n.Name}`)];
}
