// --runtime and --shaping: which runtime and shaping a run gets, and why (the report says so).
import { InputError } from '../util/input-error.js';
import type { ShapingChoice } from '../vocabulary/names.js';
import type { RuntimeChoiceName, RuntimeName } from '../vocabulary/runtimes.js';
import { AUTO_ORDER, runtimeKind, runtimeKinds } from './registry.js';
import type { RuntimeAsk, RuntimeChoice } from './runtime-kind.js';

/**
 * The runtime asked for, if it can take the run (else an InputError, exit 2, naming what is
 * missing); auto: the first of AUTO_ORDER that can, with why the ones before it could not.
 */
export async function chooseRuntime(asked: RuntimeChoiceName, ask: RuntimeAsk): Promise<RuntimeChoice> {
  if (asked !== 'auto') {
    const c = await runtimeKind(asked).choose(ask);
    return { ...c, reason: c.reason ? `asked for: ${c.reason}` : 'asked for' };
  }
  const refused: string[] = [];
  for (const name of AUTO_ORDER) {
    try {
      const c = await runtimeKind(name).choose(ask);
      return { ...c, reason: `auto: ${[...refused, c.reason].filter((r) => r !== '').join('; ')}` };
    } catch (err) {
      // The last one's refusal is the run's: nothing else is left to try.
      if (!(err instanceof InputError) || name === AUTO_ORDER.at(-1)) throw err;
      refused.push(err.problem);
    }
  }
  throw new Error('AUTO_ORDER is empty');
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
  const { shaping } = runtimeKind(runtime);
  if (asked === 'none') return { kind: 'none', reason: 'asked for: no added delay' };
  if (asked === 'relay') return { kind: 'relay', reason: 'asked for' };
  if (asked === 'netem') {
    if (shaping.netem === null)
      throw new InputError({
        file: '--shaping',
        problem: `netem needs a runtime that gives each member its own network stack (${netemRuntimes()}), not ${runtime}; use --shaping relay`,
      });
    if (shaping.netem !== 'here') return { kind: 'netem', reason: `asked for: ${shaping.netem}` };
    if (!netem.available) throw new InputError({ file: '--shaping', problem: `netem: ${netem.reason}` });
    return { kind: 'netem', reason: 'asked for' };
  }
  if (dcs < 2) return { kind: 'none', reason: 'auto: one data center, nothing to delay' };
  if (shaping.auto !== 'netem-here') return { kind: 'relay', reason: `auto: ${shaping.auto.relay}` };
  return netem.available
    ? { kind: 'netem', reason: `auto: ${netem.reason}` }
    : { kind: 'relay', reason: `auto: ${netem.reason}; the userspace relay applies the delays` };
}

/** Whether a run on `runtime` asked for `shaping` needs this kernel probed for netem first. */
export function probesNetemHere(runtime: RuntimeName, shaping: 'auto' | 'relay' | 'netem' | 'none'): boolean {
  return (shaping === 'auto' || shaping === 'netem') && runtimeKind(runtime).shaping.netem === 'here';
}

/** The runtimes that can apply netem, for the message that refuses it elsewhere. */
function netemRuntimes(): string {
  return runtimeKinds()
    .filter((k) => k.shaping.netem !== null)
    .map((k) => k.name)
    .join(' or ');
}
