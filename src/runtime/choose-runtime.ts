// --runtime and --shaping: which runtime and shaping a run gets, and why (the report says so).
import { dockerStatus } from '../image/docker-probe.js';
import { InputError } from '../util/input-error.js';
import type { ContainerImage, ShapingChoice, TargetName } from '../vocabulary/names.js';
import type { RuntimeName } from './runtime.js';

export interface RuntimeChoice {
  readonly runtime: RuntimeName;
  readonly reason: string;
  /** The node image (docker only). */
  readonly image?: string;
  /** The target's own images (docker only). */
  readonly images?: Partial<Record<ContainerImage, string>>;
}

export async function chooseRuntime(
  asked: 'auto' | 'process' | 'docker',
  version: string,
  target: TargetName = 'pole',
): Promise<RuntimeChoice> {
  if (asked === 'process') return { runtime: 'process', reason: 'asked for' };
  const status = await dockerStatus(version, target);
  const images = status.images ? { images: status.images } : {};
  if (asked === 'docker') {
    if (!status.image) throw new InputError({ file: '--runtime', problem: `docker: ${status.reason}` });
    return { runtime: 'docker', reason: 'asked for', image: status.image, ...images };
  }
  return status.image
    ? { runtime: 'docker', reason: `auto: ${status.reason}`, image: status.image, ...images }
    : { runtime: 'process', reason: `auto: ${status.reason}` };
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
