// Docker tests run where a daemon answers and the node image exists (`.ci/run` makes sure of both);
// elsewhere they skip and say why.
import { dockerStatus } from '../../src/image/docker-probe.js';
import type { TargetName } from '../../src/targets/target.js';

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
