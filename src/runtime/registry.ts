// The runtimes by name (the names: vocabulary/runtimes.ts), each as its folder declares it
// (runtime-kind.ts): `run`, `suite`, `doctor`, `clean` and the benches take them from here. The
// kind modules are light; what a runtime runs is loaded only when it is chosen.
import type { Topology } from '../topology/topology.js';
import { RUNTIME_NAMES, type RuntimeName } from '../vocabulary/runtimes.js';
import { dockerKind } from './docker/docker-kind.js';
import { processKind } from './process/process-kind.js';
import type { Runtime } from './runtime.js';
import type { RuntimeKind, RuntimeOption, RuntimeRequest } from './runtime-kind.js';
import { swarmKind } from './swarm/swarm-kind.js';

const KINDS: Readonly<Record<RuntimeName, RuntimeKind>> = {
  process: processKind,
  docker: dockerKind,
  swarm: swarmKind,
};

/**
 * `--runtime auto` tries these in order and takes the first this machine can run the target on:
 * containers where their images are built (each member its own network stack, netem where the
 * kernel has it), else local processes, which every machine with the target installed has.
 */
export const AUTO_ORDER: readonly RuntimeName[] = ['docker', 'process'];

export function runtimeKind(name: RuntimeName): RuntimeKind {
  return KINDS[name];
}

/** Every runtime, in the vocabulary's order. */
export function runtimeKinds(): readonly RuntimeKind[] {
  return RUNTIME_NAMES.map((n) => KINDS[n]);
}

/** The runtimes' own run options (the flag `run` builds for each), with the runtime each belongs to. */
export function runtimeOptions(): ReadonlyArray<{
  readonly runtime: RuntimeName;
  readonly option: RuntimeOption;
}> {
  return runtimeKinds().flatMap((k) => (k.option ? [{ runtime: k.name, option: k.option }] : []));
}

/** The runtime `name`, made for topology `t` (nothing is started until its start()). */
export function makeRuntime(name: RuntimeName, t: Topology, r: RuntimeRequest): Promise<Runtime> {
  return KINDS[name].make(t, r);
}
