// Docker tests run where a daemon answers and the node image exists (`.ci/run` makes sure of both);
// elsewhere they skip and say why.
import { nodeImageTag, dockerReady } from '../../src/run/choose-runtime.js';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
export const IMAGE = nodeImageTag(pkg.version);

/** undefined when Docker tests can run, else the reason they skip. */
export async function dockerSkipReason(): Promise<string | undefined> {
  const r = await dockerReady(IMAGE);
  return r.ok ? undefined : `Docker tests skipped: ${r.reason}`;
}
