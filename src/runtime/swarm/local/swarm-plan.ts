// What `pole-bench swarm up` is asked for, checked and laid out before anything starts: how many
// hosts, which data center each emulates, which one is the manager, and which images go into them.
// Pure: no Docker, no files (the topology's data centers are read by the caller).
import type { ContainerImage } from '../../../vocabulary/names.js';
import { targetImages } from '../../../targets/registry.js';

/** Bad input to `swarm up`: names the flag; the CLI exits 2. */
export class SwarmInputError extends Error {
  override readonly name = 'SwarmInputError';
  readonly exitCode = 2;
  constructor(
    readonly flag: string,
    problem: string,
  ) {
    super(`${flag}: ${problem}`);
  }
}

/** Images of pole-bench's own that `swarm up` loads into every host (when built here). */
export type SwarmImageKind = ContainerImage;

/** The images a swarm's hosts can be given: the node image and every target's own. */
export function swarmImageKinds(): SwarmImageKind[] {
  return ['node', ...targetImages().map((i) => i.target)];
}

export type SwarmRole = 'manager' | 'worker';

export interface SwarmHostPlan {
  /** The host container's name, its hostname, and so the swarm node's hostname. */
  readonly name: string;
  /** The data center it emulates: the swarm node's pole-bench.dc label. */
  readonly dc: string;
  readonly role: SwarmRole;
  /**
   * Seconds its containers' monotonic and boot-time clocks are ahead of the machine's (a time
   * namespace around its engine; --mono-shift): a host booted at another time, for testing the
   * harness's clock corrections. Absent: the machine's clocks.
   */
  readonly monoShiftS?: number;
}

export interface SwarmPlan {
  readonly hosts: readonly SwarmHostPlan[];
  /** The data centers, in the order given. */
  readonly dcs: readonly string[];
  readonly images: readonly SwarmImageKind[];
}

export interface SwarmUpInput {
  /** --nodes, when given. */
  readonly nodes?: number;
  /** --dcs as typed (comma-separated), when given. */
  readonly dcs?: string;
  /** The data centers of --topology's file, in its order, when given. */
  readonly topologyDcs?: readonly string[];
  /** --images as typed: a comma-separated list of swarmImageKinds(), or `none`. */
  readonly images?: string;
  /** --mono-shift as typed: `dc=seconds`, comma-separated. */
  readonly monoShift?: string;
}

/** With no --nodes, --dcs nor --topology: three hosts, as many as the 3-DC topologies have. */
export const DEFAULT_HOSTS = 3;
/**
 * Each host takes a tmpfs for its engine's images (about 1.1 GB with both images loaded) and a
 * dockerd: more than this is no longer a small local swarm.
 */
export const MAX_HOSTS = 16;

const HOST_PREFIX = 'pole-bench-swarm-';

/** The host container of index i (0-based): pole-bench-swarm-1, -2, … */
export function hostName(i: number): string {
  return `${HOST_PREFIX}${i + 1}`;
}

/**
 * Default data center names d1, d2, … dN: the names the paper's 2- and 3-DC topologies use
 * (paper-fig8-*, paper-fig8b-3dc), so `swarm up --nodes 3` fits them without --dcs.
 */
export function defaultDcs(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `d${i + 1}`);
}

/**
 * A data center's name becomes a node label's value and a placement constraint's operand
 * (node.labels.pole-bench.dc==NAME): letters, digits, '.', '_', '-', starting with a letter or
 * digit, at most 63 characters.
 */
const DC_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export function planSwarm(input: SwarmUpInput): SwarmPlan {
  const images = parseImages(input.images);
  const given =
    input.dcs !== undefined
      ? { flag: '--dcs', names: parseDcs(input.dcs) }
      : input.topologyDcs !== undefined
        ? { flag: '--topology', names: checkDcs('--topology', [...input.topologyDcs]) }
        : undefined;
  if (input.nodes !== undefined && (!Number.isInteger(input.nodes) || input.nodes < 1)) {
    throw new SwarmInputError('--nodes', `expected a whole number of hosts, 1 or more, got ${input.nodes}`);
  }
  const nodes = input.nodes ?? given?.names.length ?? DEFAULT_HOSTS;
  if (nodes > MAX_HOSTS) {
    throw new SwarmInputError('--nodes', `at most ${MAX_HOSTS} hosts on one machine, got ${nodes}`);
  }
  const dcs = given?.names ?? defaultDcs(nodes);
  if (given && nodes < dcs.length) {
    throw new SwarmInputError(
      '--nodes',
      `${nodes} host${nodes === 1 ? '' : 's'} cannot hold the ${dcs.length} data centers of ${given.flag} ` +
        `(${dcs.join(', ')}): every data center needs a host`,
    );
  }
  // Host i emulates data center i mod k: one data center per host when there are as many hosts
  // as data centers (the default), round robin when there are more. The first host, in the first
  // data center, is the one manager (docs/swarm.md says why one).
  const shifts =
    input.monoShift !== undefined ? parseMonoShift(input.monoShift, dcs) : new Map<string, number>();
  const hosts = Array.from({ length: nodes }, (_, i) => {
    const dc = dcs[i % dcs.length]!;
    const shift = shifts.get(dc);
    return {
      name: hostName(i),
      dc,
      role: (i === 0 ? 'manager' : 'worker') as SwarmRole,
      ...(shift !== undefined ? { monoShiftS: shift } : {}),
    };
  });
  return { hosts, dcs, images };
}

/**
 * `dc=seconds,…`: whole seconds, 1 to 10^7 (a time namespace's offset must keep the clock
 * positive, and a forward shift always does), each data center named once and one of `dcs`.
 */
export function parseMonoShift(text: string, dcs: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of text.split(',').map((s) => s.trim())) {
    const m = /^([^=]+)=(\d+)s?$/.exec(part);
    if (!m) throw new SwarmInputError('--mono-shift', `expected dc=seconds (comma-separated), got "${part}"`);
    const [, dc, secs] = m;
    const s = Number(secs);
    if (!dcs.includes(dc!))
      throw new SwarmInputError(
        '--mono-shift',
        `no host emulates data center "${dc}" (hosts: ${dcs.join(', ')})`,
      );
    if (out.has(dc!)) throw new SwarmInputError('--mono-shift', `data center "${dc}" is named twice`);
    if (s < 1 || s > 10_000_000)
      throw new SwarmInputError('--mono-shift', `"${part}": a shift of 1 to 10000000 seconds`);
    out.set(dc!, s);
  }
  return out;
}

export function parseDcs(text: string): string[] {
  const names = text.split(',').map((s) => s.trim());
  if (names.some((n) => n.length === 0)) {
    throw new SwarmInputError('--dcs', `expected comma-separated data center names, got "${text}"`);
  }
  return checkDcs('--dcs', names);
}

function checkDcs(flag: string, names: string[]): string[] {
  if (names.length === 0) throw new SwarmInputError(flag, 'no data center named');
  for (const n of names) {
    if (!DC_NAME.test(n)) {
      throw new SwarmInputError(
        flag,
        `data center "${n}" cannot be a swarm node label: use letters, digits, '.', '_' and '-' ` +
          `(starting with a letter or digit, at most 63 characters)`,
      );
    }
  }
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new SwarmInputError(flag, `data center "${twice}" is named twice`);
  return names;
}

export function parseImages(text: string | undefined): SwarmImageKind[] {
  const all = swarmImageKinds();
  if (text === undefined) return all;
  const trimmed = text.trim();
  if (trimmed === 'none') return [];
  const kinds = trimmed.split(',').map((s) => s.trim());
  const known = new Set<string>(all);
  for (const k of kinds) {
    if (!known.has(k)) {
      throw new SwarmInputError(
        '--images',
        `unknown image "${k}": expected a comma-separated list of ${all.join(', ')}, or none`,
      );
    }
  }
  return all.filter((k) => kinds.includes(k));
}

/** Whether an existing swarm has the shape a plan asks for (same hosts, same data centers). */
export function sameShape(
  plan: SwarmPlan,
  existing: readonly {
    readonly name: string;
    readonly dc: string;
    readonly role: SwarmRole;
    readonly monoShiftS?: number | undefined;
  }[],
): boolean {
  return (
    plan.hosts.length === existing.length &&
    plan.hosts.every((h, i) => {
      const e = existing[i];
      return (
        e !== undefined &&
        e.name === h.name &&
        e.dc === h.dc &&
        e.role === h.role &&
        e.monoShiftS === h.monoShiftS
      );
    })
  );
}
