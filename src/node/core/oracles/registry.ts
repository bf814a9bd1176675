// Oracle specs as written in configuration → oracles. A spec is one oracle ("history"), one oracle
// with an argument ("latency:10ms", the argument is the oracle's own business, e.g. a band width that
// makes scores within 10 ms equivalent), or a priority list of those separated by commas
// ("latency:10ms,history": the paper's "fattest among the fastest", section 5), compared part by part.
// Oracles register themselves in a table so measured ones can be added without touching this file.
import type { NodeId, Score } from '../types.js';
import { createHistoryOracle } from './history.js';
import { scoreGain, type Oracle, type ScoreContext } from './oracle.js';
import { createMeasuredOracle, MEASURED_ORACLE_NAMES, parseBand } from './measured.js';
import { createPreferenceOracle } from './preference.js';
import { createRotatingOracle } from './rotating.js';

export interface CreateOracleOptions {
  /** The preference oracle's list, most preferred first. */
  readonly preference?: readonly NodeId[];
  /** The member the rotating oracle starts from in epoch 1: the configured initial leader. */
  readonly rotationStart?: NodeId;
}

/** The options a cluster's configuration gives its oracles. */
export function oracleOptions(c: {
  readonly preference?: readonly NodeId[] | undefined;
  readonly initialLeader?: NodeId | undefined;
}): CreateOracleOptions {
  return {
    ...(c.preference ? { preference: c.preference } : {}),
    ...(c.initialLeader !== undefined ? { rotationStart: c.initialLeader } : {}),
  };
}

export interface OracleFactoryInput extends CreateOracleOptions {
  /** This oracle's part of the spec, e.g. "latency:10ms": use it as the oracle's name. */
  readonly spec: string;
  /** What follows the first ':' in `spec`, e.g. "10ms"; undefined when there is none. */
  readonly arg: string | undefined;
}

export type OracleFactory = (input: OracleFactoryInput) => Oracle;

/** A spec that cannot be turned into an oracle (bad syntax, bad argument, missing option). */
export class OracleSpecError extends Error {
  constructor(
    readonly spec: string,
    message: string,
  ) {
    super(message);
    this.name = 'OracleSpecError';
  }
}

/** A spec naming an oracle nobody registered. */
export class UnknownOracleError extends OracleSpecError {
  constructor(
    spec: string,
    /** The unknown name itself (one part of a combined spec). */
    readonly oracle: string,
    readonly known: readonly string[],
  ) {
    super(spec, `unknown score oracle "${oracle}" in "${spec}"; known oracles: ${known.join(', ')}`);
    this.name = 'UnknownOracleError';
  }
}

const NAME = /^[a-z][a-z0-9-]*$/;
const factories = new Map<string, OracleFactory>();

/** Adds an oracle to the table. Names are lower-case words; registering one name twice is a bug. */
export function registerOracle(name: string, factory: OracleFactory): void {
  if (!NAME.test(name))
    throw new Error(`oracle name must match ${String(NAME)}, got ${JSON.stringify(name)}`);
  const existing = factories.get(name);
  if (existing !== undefined && existing !== factory)
    throw new Error(`oracle "${name}" is registered already`);
  factories.set(name, factory);
}

export function knownOracleNames(): string[] {
  return [...factories.keys()].sort();
}

export function createOracle(spec: string, opts: CreateOracleOptions = {}): Oracle {
  const parts = spec.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw new OracleSpecError(spec, `empty oracle name in "${spec}"`);
  const oracles = parts.map((part) => createOne(spec, part, opts));
  const [only] = oracles;
  if (oracles.length === 1 && only !== undefined) return only;
  return combine(parts.join(','), oracles);
}

function createOne(spec: string, part: string, opts: CreateOracleOptions): Oracle {
  const colon = part.indexOf(':');
  const name = colon < 0 ? part : part.slice(0, colon).trim();
  const arg = colon < 0 ? undefined : part.slice(colon + 1).trim();
  const factory = factories.get(name);
  if (factory === undefined) throw new UnknownOracleError(spec, name, knownOracleNames());
  return factory({ ...opts, spec: part, arg });
}

/**
 * A priority list of oracles. The combined score is every part's score, each preceded by its length
 * ([len₁, …θ₁, len₂, …θ₂, …]), so compare() can hand each oracle exactly its own slice and apply its
 * own order; the first part that tells the two apart decides.
 */
function combine(name: string, oracles: readonly Oracle[]): Oracle {
  const parts = (s: Score): Score[] => {
    const out: Score[] = [];
    let i = 0;
    for (let k = 0; k < oracles.length; k++) {
      const len = s[i] ?? 0;
      out.push(s.slice(i + 1, i + 1 + len));
      i += 1 + len;
    }
    return out;
  };
  return {
    name,
    measured: oracles.some((o) => o.measured === true),
    gain: (a: Score, b: Score): number => {
      // The part that decides the order decides the margin too.
      const pa = parts(a);
      const pb = parts(b);
      for (const [k, o] of oracles.entries()) {
        const c = Math.sign(o.compare(pa[k] ?? [], pb[k] ?? []));
        if (c > 0) return scoreGain(o, pa[k] ?? [], pb[k] ?? []);
        if (c < 0) return 0;
      }
      return 0;
    },
    score: (ctx: ScoreContext): Score =>
      oracles.flatMap((o) => {
        const s = o.score(ctx);
        return [s.length, ...s];
      }),
    compare: (a: Score, b: Score): number => {
      const pa = parts(a);
      const pb = parts(b);
      for (const [k, o] of oracles.entries()) {
        const c = Math.sign(o.compare(pa[k] ?? [], pb[k] ?? []));
        if (c !== 0 && !Number.isNaN(c)) return c;
      }
      return 0;
    },
  };
}

function noArgument(build: () => Oracle): OracleFactory {
  return ({ spec, arg }) => {
    if (arg !== undefined) throw new OracleSpecError(spec, `oracle "${spec}" takes no argument`);
    return build();
  };
}

registerOracle('history', noArgument(createHistoryOracle));
registerOracle('rotating', ({ spec, arg, rotationStart }) => {
  if (arg !== undefined) throw new OracleSpecError(spec, `oracle "${spec}" takes no argument`);
  return createRotatingOracle(rotationStart);
});
registerOracle('preference', ({ spec, arg, preference }) => {
  if (arg !== undefined)
    throw new OracleSpecError(spec, `oracle "${spec}" takes no argument (give the list as an option)`);
  if (preference === undefined || preference.length === 0) {
    throw new OracleSpecError(
      spec,
      'the preference oracle needs a non-empty preference list (most preferred first)',
    );
  }
  try {
    return createPreferenceOracle(preference);
  } catch (err) {
    throw new OracleSpecError(spec, (err as Error).message);
  }
});

for (const name of MEASURED_ORACLE_NAMES) {
  registerOracle(name, ({ spec, arg }) => {
    if (arg === undefined) return createMeasuredOracle(name, undefined, spec);
    try {
      return createMeasuredOracle(name, parseBand(name, arg), spec);
    } catch (err) {
      throw new OracleSpecError(spec, (err as Error).message);
    }
  });
}
