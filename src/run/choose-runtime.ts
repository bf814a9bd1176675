// --runtime and --shaping: which runtime and shaping a run gets, and why (the report says so).
import Docker from 'dockerode';
import { InputError } from '../util/input-error.js';
import type { RuntimeName, ShapingChoice } from './runtime.js';

export interface RuntimeChoice {
  readonly runtime: RuntimeName;
  readonly reason: string;
  /** The node image (docker only). */
  readonly image?: string;
}

export function nodeImageTag(version: string): string {
  return `pole-bench-node:${version}`;
}

/** Whether a daemon answers and the node image exists; never throws. */
export async function dockerReady(
  image: string,
  docker = new Docker(),
): Promise<{ ok: boolean; reason: string }> {
  try {
    await docker.ping();
  } catch (err) {
    return { ok: false, reason: `no Docker daemon answers (${(err as Error).message.split('\n')[0]})` };
  }
  try {
    await docker.getImage(image).inspect();
    return { ok: true, reason: `a Docker daemon answers and ${image} exists` };
  } catch {
    return {
      ok: false,
      reason: `the image ${image} does not exist (build it with \`pole-bench image build\`)`,
    };
  }
}

export async function chooseRuntime(
  asked: 'auto' | 'process' | 'docker',
  version: string,
): Promise<RuntimeChoice> {
  if (asked === 'process') return { runtime: 'process', reason: 'asked for' };
  const image = nodeImageTag(version);
  const ready = await dockerReady(image);
  if (asked === 'docker') {
    if (!ready.ok) throw new InputError({ file: '--runtime', problem: `docker: ${ready.reason}` });
    return { runtime: 'docker', reason: 'asked for', image };
  }
  return ready.ok
    ? { runtime: 'docker', reason: `auto: ${ready.reason}`, image }
    : { runtime: 'process', reason: `auto: ${ready.reason}` };
}

/**
 * auto: netem where the runtime can apply it and the kernel has it, else the relay. `netemProbe`
 * tells whether this kernel has netem and, if not, why.
 */
export function chooseShaping(
  asked: 'auto' | 'relay' | 'netem' | 'none',
  runtime: RuntimeName,
  dcs: number,
  netem: { available: boolean; reason: string },
): ShapingChoice {
  if (asked === 'none') return { kind: 'none', reason: 'asked for: no added delay' };
  if (asked === 'relay') return { kind: 'relay', reason: 'asked for' };
  if (asked === 'netem') {
    if (runtime !== 'docker')
      throw new InputError({
        file: '--shaping',
        problem: 'netem needs the docker runtime (each node its own network stack); use --shaping relay',
      });
    if (!netem.available) throw new InputError({ file: '--shaping', problem: `netem: ${netem.reason}` });
    return { kind: 'netem', reason: 'asked for' };
  }
  if (dcs < 2) return { kind: 'none', reason: 'auto: one data center, nothing to delay' };
  if (runtime === 'process')
    return {
      kind: 'relay',
      reason: 'auto: local processes share one network stack, so delays come from the userspace relay',
    };
  return netem.available
    ? { kind: 'netem', reason: `auto: ${netem.reason}` }
    : { kind: 'relay', reason: `auto: ${netem.reason}; the userspace relay applies the delays` };
}
