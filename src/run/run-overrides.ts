// Command-line flags that override parts of a topology file for one run (--oracle, --rate,
// --size, --share, --duration, --kill-at). Applied to the checked file before it is resolved, so the
// derived values (per-dc rates, fault times) follow, and checked like the file itself.
import { createOracle } from '../node/core/oracles/registry.js';
import { parseDuration } from '../util/duration.js';
import { parseByteSize } from '../topology/byte-size.js';
import { topologySchema } from '../topology/topology-checks.js';
import {
  LEADER,
  type Arrival,
  type FaultSpec,
  type NemesisSpec,
  type ScenarioSpec,
  type TopologyFile,
} from '../topology/topology-schema.js';
import { drawNemesis } from '../topology/nemesis-draw.js';
import { resolveTopology, type Topology } from '../topology/topology.js';
import { InputError } from '../util/input-error.js';
import { targetNamed } from '../targets/registry.js';
import type { TargetName } from '../vocabulary/names.js';
import { parseSourceFile, validateParsed } from '../util/load-validated.js';

export interface RunOverrides {
  /** --target: the system under test, instead of the file's `target:`. */
  readonly target?: TargetName;
  readonly oracle?: string;
  /** --election-wait-for: whom the POLE election waits for before T, instead of the file's. */
  readonly electionWaitFor?: 'all' | 'live';
  readonly rate?: number;
  readonly size?: number;
  readonly arrival?: Arrival;
  /** e.g. "60s". */
  readonly duration?: string;
  /** e.g. "25s": replaces the faults with one `kill: leader` at that time. */
  readonly killAt?: string;
  /** Drop the scenario's faults: the load runs under the initial leader throughout. */
  readonly noFaults?: boolean;
  /** --nemesis-seed: the nemesis draws its faults with this seed instead of the file's. */
  readonly nemesisSeed?: number;
  /** --share: each data center's weight in the load (a data center left out gets none). */
  readonly share?: Readonly<Record<string, number>>;
  /** --reads: the share of operations that are reads. */
  readonly reads?: number;
  /** --read-mode: the target's read path the reads take. */
  readonly readMode?: string;
  /** --preload: state written before the load, e.g. "50MB" (replaces the file's scenario.preload). */
  readonly preload?: string;
}

/** "--share tud=1,cern=3" as weights; InputError (exit 2) naming the flag on anything else. */
export function parseShareFlag(text: string): Record<string, number> {
  const share: Record<string, number> = {};
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z0-9_.-]+)\s*=\s*([0-9]*\.?[0-9]+)\s*$/.exec(part);
    if (!m)
      throw new InputError({
        file: '--share',
        problem: `expected DC=WEIGHT[,DC=WEIGHT…], got ${JSON.stringify(part)}`,
      });
    share[m[1] as string] = Number(m[2]);
  }
  return share;
}

/**
 * The faults of a run of `durationMs`: a fault repeated with `every` or undoing another repeats
 * while inside the run, also when --duration shortens it (and an undoing goes with the fault it
 * undoes); the nemesis draws again over the run's own length, from its seed.
 */
function faultsWithin(spec: TopologyFile, durationMs: number, n: NemesisSpec | undefined): FaultSpec[] {
  const written = spec.scenario.faults.filter((f) => f.drawn !== true);
  const kept = written.filter(
    (f) => (f.everyMs === undefined && f.undoes === undefined) || f.atMs < durationMs,
  );
  const refs = new Set(kept.map((f) => f.ref).filter((r) => r !== undefined));
  const drawn = n
    ? drawNemesis(
        {
          members: spec.datacenters.flatMap((d) => d.nodes.map((m) => m.id)),
          datacenters: spec.datacenters.map((d) => d.name),
          warmupMs: spec.scenario.warmupMs,
          durationMs,
          settleMs: spec.scenario.settleMs,
        },
        n,
        Math.max(0, ...written.map((f) => f.ref ?? 0)),
      )
    : [];
  return [...kept.filter((f) => f.undoes === undefined || refs.has(f.undoes)), ...drawn].sort(
    (a, b) => a.atMs - b.atMs,
  );
}

/** The file's nemesis, with the seed --nemesis-seed gives; exit 2 where the file has none. */
function nemesisOf(file: string, spec: TopologyFile, o: RunOverrides): NemesisSpec | undefined {
  const n = spec.scenario.nemesis;
  if (o.nemesisSeed === undefined) return n;
  if (n === undefined)
    throw flag('--nemesis-seed', `${file} has no scenario.nemesis to draw faults with this seed`);
  if (o.killAt !== undefined || o.noFaults)
    throw flag(
      '--nemesis-seed',
      `${o.killAt !== undefined ? '--kill-at' : '--no-faults'} replaces the nemesis's faults`,
    );
  return { ...n, seed: o.nemesisSeed };
}

/** The scenario with the nemesis the run draws from: none where the flags replaced its faults. */
function withNemesis(s: ScenarioSpec, n: NemesisSpec | undefined, replaced: boolean): ScenarioSpec {
  const { nemesis: _file, ...rest } = s;
  return replaced || n === undefined ? rest : { ...rest, nemesis: n };
}

export function loadTopologyForRun(file: string, o: RunOverrides): Topology {
  const spec = validateParsed(file, parseSourceFile(file), topologySchema);
  const target = o.target ?? spec.target;
  checkOracleFlag(spec, target, o.oracle);
  const durationMs = o.duration !== undefined ? ms('--duration', o.duration) : spec.scenario.durationMs;
  if (durationMs <= spec.scenario.warmupMs)
    throw flag(
      '--duration',
      `the run (${durationMs} ms) must be longer than its warm-up (${spec.scenario.warmupMs} ms)`,
    );
  const nemesis = nemesisOf(file, spec, o);
  const faults = o.noFaults
    ? []
    : o.killAt !== undefined
      ? [{ atMs: ms('--kill-at', o.killAt), action: 'kill' as const, target: LEADER }]
      : faultsWithin(spec, durationMs, nemesis);
  for (const f of faults) {
    if (f.atMs <= spec.scenario.warmupMs || f.atMs >= durationMs)
      throw flag(
        o.killAt !== undefined ? '--kill-at' : '--duration',
        `a fault at ${f.atMs} ms must fall after the warm-up (${spec.scenario.warmupMs} ms) and before the end (${durationMs} ms)`,
      );
  }
  const preloadBytes = preloadFor(file, spec, target, o);
  if (o.rate !== undefined && !(o.rate > 0))
    throw flag('--rate', 'must be a positive number of writes per second');
  if (o.size !== undefined && !(Number.isInteger(o.size) && o.size >= 0))
    throw flag('--size', 'must be a whole number of bytes');
  if (o.share !== undefined) checkShareFlag(file, spec, o.share);
  const share =
    o.share === undefined
      ? undefined
      : Object.fromEntries(spec.datacenters.map((d) => [d.name, o.share?.[d.name] ?? 0]));
  const out: TopologyFile = {
    ...spec,
    target,
    cluster: {
      ...spec.cluster,
      ...(o.oracle !== undefined ? { oracle: o.oracle } : {}),
      ...(o.electionWaitFor !== undefined ? { election: { waitFor: o.electionWaitFor } } : {}),
    },
    workload: {
      ...spec.workload,
      ...(o.rate !== undefined ? { rate: o.rate } : {}),
      ...(o.reads !== undefined ? { reads: o.reads } : {}),
      ...(o.readMode !== undefined ? { readMode: o.readMode } : {}),
      ...(o.size !== undefined ? { size: o.size } : {}),
      ...(o.arrival !== undefined ? { arrival: o.arrival } : {}),
      ...(share !== undefined ? { share } : {}),
    },
    scenario: {
      ...withNemesis(spec.scenario, nemesis, o.noFaults === true || o.killAt !== undefined),
      durationMs,
      faults,
      ...(preloadBytes !== undefined ? { preloadBytes } : {}),
    },
  };
  return resolveTopology(file, out);
}

function flag(name: string, problem: string): InputError {
  return new InputError({ file: name, problem });
}

function ms(name: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw flag(name, (err as Error).message);
  }
}

/** --oracle: only for a target that elects by POLE's oracles, and an oracle spec that builds. */
function checkOracleFlag(spec: TopologyFile, target: TargetName, oracle: string | undefined): void {
  if (oracle === undefined) return;
  if (!targetNamed(target).hasOracles)
    throw flag(
      '--oracle',
      `the ${target} target elects by its own rule (${targetNamed(target).electionRule}), not by POLE's oracles; --oracle needs --target pole`,
    );
  try {
    createOracle(oracle, spec.cluster.preference ? { preference: spec.cluster.preference } : {});
  } catch (err) {
    throw flag('--oracle', (err as Error).message);
  }
}

/** The bytes to preload: --preload, else the file's; the pole target's load only. */
function preloadFor(
  file: string,
  spec: TopologyFile,
  target: TargetName,
  o: RunOverrides,
): number | undefined {
  let preloadBytes = spec.scenario.preloadBytes;
  if (o.preload !== undefined) {
    try {
      preloadBytes = parseByteSize(o.preload);
    } catch (err) {
      throw flag('--preload', (err as Error).message);
    }
  }
  if (preloadBytes !== undefined && target !== 'pole')
    throw flag(
      o.target !== undefined ? '--target' : file,
      `scenario.preload writes new znodes, which the ${target} target's load does not (its writes set znodes made before the run); preload needs the pole target`,
    );
  return preloadBytes;
}

/** --share: only the file's data centers, and at least one with a positive weight. */
function checkShareFlag(file: string, spec: TopologyFile, share: Readonly<Record<string, number>>): void {
  const dcs = new Set(spec.datacenters.map((d) => d.name));
  for (const dc of Object.keys(share))
    if (!dcs.has(dc))
      throw flag('--share', `${JSON.stringify(dc)} is not a data center of ${file} (${[...dcs].join(', ')})`);
  if (Object.values(share).every((v) => !(v > 0)))
    throw flag('--share', 'at least one data center needs a positive weight');
}

/** --reads as a share, 0 to 1; anything else is bad input (exit 2). */
export function parseReadShare(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InputError({
      file: '--reads',
      problem: `expected a share from 0 to 1, e.g. 0.2, got ${JSON.stringify(value)}`,
    });
  return n;
}
