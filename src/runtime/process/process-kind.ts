// The process runtime as the registry knows it: members as local processes of this machine, the
// relay for delay (processes share one network stack, so netem cannot tell their traffic apart).
import { InputError } from '../../util/input-error.js';
import type { RuntimeKind } from '../runtime-kind.js';

export const processKind: RuntimeKind = {
  name: 'process',
  summary: 'local processes of this machine',
  shaping: {
    netem: null,
    auto: { relay: 'local processes share one network stack, so delays come from the userspace relay' },
  },
  async choose(ask) {
    const cannot = await this.cannotRun(ask.target, ask.version);
    if (cannot !== undefined)
      throw new InputError({ file: `--target ${ask.target.name} --runtime process`, problem: cannot });
    return { runtime: 'process', reason: '' };
  },
  async cannotRun(target) {
    const { cannotRunHere } = await import('./planned-processes.js');
    return cannotRunHere(target);
  },
  async make(t, r) {
    const { ProcessRuntime } = await import('./process-runtime.js');
    return new ProcessRuntime(t, {
      shaping: r.shaping,
      seed: r.seed,
      target: r.target,
      ...(r.targetOption !== undefined ? { targetOption: r.targetOption } : {}),
    });
  },
};
