// Docker tests run where a daemon answers and the node image exists (`.ci/run` makes sure of both);
// elsewhere they skip and say why.
import { dockerStatus } from '../../src/image/docker-probe.js';

/** undefined when Docker tests can run, else the reason they skip. */
export async function dockerSkipReason(): Promise<string | undefined> {
  const s = await dockerStatus();
  return s.image ? undefined : `Docker tests skipped: ${s.reason}`;
}

export async function nodeImage(): Promise<string> {
  const s = await dockerStatus();
  if (!s.image) throw new Error(s.reason);
  return s.image;
}
