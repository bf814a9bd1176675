// Suites of runs: a YAML file names topologies and the parameters to sweep (targets, oracles,
// rates, request shares, durations…), how often to repeat each combination, and a smaller
// `quick` variant. This module reads the file (errors name file, line and field, exit 2) and
// expands it into cells, each a fully specified `pole-bench run`. Pure apart from reading files.
//
//   name: smoke
//   repeats: 3              # runs per cell; repeat r runs with seed + r (the same seeds in every cell)
//   seed: 100
//   runs: { duration: 30s, killAt: 15s, rate: 200 }     # every cell's defaults
//   matrix:                 # every combination is a cell
//     topology: [../topologies/paper-2dc.yaml]          # relative to this file
//     oracle: [history, rotating]
//     share: [{tud: 1, cern: 0}, {tud: 1, cern: 1}]
//   quick: { repeats: 1, runs: { duration: 12s, killAt: 6s } }
import { targetOptions } from '../targets/registry.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { z } from 'zod';
import { TARGET_NAMES } from '../vocabulary/names.js';
import { DURATION_HINT, DURATION_PATTERN } from '../util/duration.js';
import { BYTE_SIZE_HINT, BYTE_SIZE_PATTERN } from '../topology/byte-size.js';
import { loadValidatedFile } from '../util/load-validated.js';
import { InputError } from '../util/input-error.js';

const duration = z
  .string({ error: `expected ${DURATION_HINT} (a number: give it a unit)` })
  .regex(new RegExp(DURATION_PATTERN), { error: `expected ${DURATION_HINT}` });
const share = z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), z.number().min(0));

/** Each target's own option as a key of a suite's runs (Target.option). */
function targetOptionParams(): Record<string, z.ZodOptional<z.ZodString>> {
  return Object.fromEntries(
    targetOptions().map(({ option }) => [
      option.suiteKey,
      z.string().min(1).optional().describe(`${option.description} (--${option.flag})`),
    ]),
  );
}

/** What one run may be given, as `pole-bench run` flags. */
const runParams = z.strictObject({
  target: z.enum(TARGET_NAMES).optional(),
  oracle: z.string().min(1).optional(),
  // Each target's own option (etcd's etcdPrefer), declared by the target (Target.option).
  ...(targetOptionParams() as object),
  electionWaitFor: z
    .enum(['all', 'live'])
    .optional()
    .describe('whom the POLE election waits for before its timeout (--election-wait-for)'),
  rate: z.number().positive().optional(),
  size: z.number().int().min(0).optional(),
  duration: duration.optional(),
  killAt: duration.optional().describe('kill the serving leader then (replaces the topology’s faults)'),
  share: share.optional().describe('each data center’s weight in the load'),
  preload: z
    .string()
    .regex(new RegExp(BYTE_SIZE_PATTERN), { error: `expected ${BYTE_SIZE_HINT}` })
    .optional()
    .describe('state written before the load'),
  poisson: z.boolean().optional(),
  reads: z.number().min(0).max(1).optional().describe('the share of operations that are reads (--reads)'),
  readMode: z.string().min(1).optional().describe("the target's read path (--read-mode)"),
  nemesisSeed: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("the seed the topology's nemesis draws its faults with (--nemesis-seed)"),
});
export type RunParams = z.infer<typeof runParams>;

const axes = {
  target: z.array(z.enum(TARGET_NAMES)).min(1),
  oracle: z.array(z.string().min(1)).min(1),
  rate: z.array(z.number().positive()).min(1),
  size: z.array(z.number().int().min(0)).min(1),
  duration: z.array(duration).min(1),
  killAt: z.array(duration).min(1),
  share: z.array(share).min(1),
  preload: z
    .array(z.string().regex(new RegExp(BYTE_SIZE_PATTERN), { error: `expected ${BYTE_SIZE_HINT}` }))
    .min(1),
  reads: z.array(z.number().min(0).max(1)).min(1),
  readMode: z.array(z.string().min(1)).min(1),
  nemesisSeed: z.array(z.number().int().min(0)).min(1),
};
export const SWEEP_AXES = Object.keys(axes) as (keyof typeof axes)[];

const matrix = z.strictObject({
  topology: z.array(z.string().min(1)).min(1).describe('topology files, relative to the suite file'),
  ...Object.fromEntries(Object.entries(axes).map(([k, v]) => [k, v.optional()])),
}) as z.ZodType<Matrix>;

export interface Matrix {
  readonly topology: readonly string[];
  readonly target?: readonly (typeof TARGET_NAMES)[number][];
  readonly oracle?: readonly string[];
  readonly rate?: readonly number[];
  readonly size?: readonly number[];
  readonly duration?: readonly string[];
  readonly killAt?: readonly string[];
  readonly share?: readonly Record<string, number>[];
  readonly preload?: readonly string[];
  readonly reads?: readonly number[];
  readonly readMode?: readonly string[];
  readonly nemesisSeed?: readonly number[];
}

const partialMatrix = z.strictObject({
  topology: z.array(z.string().min(1)).min(1).optional(),
  ...Object.fromEntries(Object.entries(axes).map(([k, v]) => [k, v.optional()])),
}) as z.ZodType<Partial<Matrix>>;

/** A question of its own: a title, a matrix, run flags and quick overrides over the suite's. */
const question = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'expected letters, digits, "_" or "-" (it names directories)' })
    .describe('prefixes the ids of its cells'),
  title: z.string().min(1).describe("heads the question's table in suite.md"),
  runs: runParams.default({}),
  matrix,
  quick: z
    .strictObject({
      runs: runParams.optional(),
      matrix: partialMatrix.optional(),
      skip: z.boolean().optional(),
    })
    .optional()
    .describe('--quick: shorter runs, fewer values, or leave the question out'),
});

const suiteSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .optional()
    .describe('defaults to the file name'),
  description: z.string().optional(),
  repeats: z.number().int().min(1).default(1),
  seed: z.number().int().min(0).default(1),
  runs: runParams.default({}),
  matrix: matrix.optional().describe('one matrix of cells; or questions, each with its own'),
  questions: z.array(question).min(1).optional(),
  thresholds: z.array(z.string().min(1)).default([]).describe('checked on every run'),
  quick: z
    .strictObject({
      repeats: z.number().int().min(1).optional(),
      runs: runParams.optional(),
      matrix: partialMatrix.optional(),
    })
    .optional()
    .describe('--quick: fewer repeats, shorter runs, fewer values'),
});

/** One combination of the matrix: a fully specified run, repeated. */
export interface Cell {
  /** Names the cell's directory: the topology and every swept value that varies. */
  readonly id: string;
  /** The topology file, absolute. */
  readonly topology: string;
  /** Its name (the file's `name:` is not read here: the file name). */
  readonly topologyName: string;
  readonly params: RunParams;
  /** The swept values of this cell (what tells it apart from its neighbours). */
  readonly swept: Readonly<Record<string, string>>;
  /** Changes when anything that shapes the run changes: the topology file's text, the parameters. */
  readonly configHash: string;
  /** The question it answers (suites with `questions`); cells of a plain matrix have none. */
  readonly question?: string;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  readonly file: string;
  readonly quick: boolean;
  readonly repeats: number;
  readonly seed: number;
  readonly thresholds: readonly string[];
  readonly cells: readonly Cell[];
}

/** Read a suite file and expand it; InputError (exit 2) with file, line and field on anything wrong. */
export function loadSuite(file: string, o: { quick?: boolean; reads?: number } = {}): Suite {
  const base = dirname(resolve(file));
  const withFiles = suiteSchema.superRefine((s, ctx) => {
    if ((s.matrix === undefined) === (s.questions === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'give either matrix or questions, not both or neither',
      });
    const checkFiles = (m: Matrix, path: (string | number)[]): void =>
      m.topology.forEach((t, i) => {
        if (!existsSync(resolve(base, t)))
          ctx.addIssue({
            code: 'custom',
            path: [...path, 'topology', i],
            message: `no such topology file: ${resolve(base, t)} (paths are relative to the suite file)`,
          });
      });
    if (s.matrix) checkFiles(s.matrix, ['matrix']);
    if (s.quick?.matrix?.topology) checkFiles(s.quick.matrix as Matrix, ['quick', 'matrix']);
    s.questions?.forEach((q, i) => {
      checkFiles(q.matrix, ['questions', i, 'matrix']);
      if (q.quick?.matrix?.topology)
        checkFiles(q.quick.matrix as Matrix, ['questions', i, 'quick', 'matrix']);
    });
    const ids = s.questions?.map((q) => q.id) ?? [];
    ids.forEach((id, i) => {
      if (ids.indexOf(id) !== i)
        ctx.addIssue({
          code: 'custom',
          path: ['questions', i, 'id'],
          message: `${id} is the id of an earlier question`,
        });
    });
  });
  const s = loadValidatedFile(file, withFiles);
  const quick = o.quick === true && s.quick !== undefined;
  // `suite --reads` is every run's default; a file's own `reads` (runs, questions, matrix) wins.
  const fileRuns: RunParams = quick ? { ...s.runs, ...s.quick?.runs } : s.runs;
  const suiteRuns: RunParams = o.reads !== undefined ? { reads: o.reads, ...fileRuns } : fileRuns;
  let cells: Cell[];
  if (s.matrix) {
    const m: Matrix = quick ? { ...s.matrix, ...s.quick?.matrix } : s.matrix;
    cells = expand(base, m, suiteRuns);
  } else {
    cells = (s.questions ?? [])
      .filter((q) => !(quick && q.quick?.skip))
      .flatMap((q) => {
        const m: Matrix = quick ? { ...q.matrix, ...s.quick?.matrix, ...q.quick?.matrix } : q.matrix;
        const runs: RunParams = { ...suiteRuns, ...q.runs, ...(quick ? q.quick?.runs : {}) };
        return expand(base, m, runs).map((c) => ({ ...c, id: `${q.id}.${c.id}`, question: q.title }));
      });
  }
  const seen = new Set<string>();
  for (const c of cells) {
    // Two topology files with the same base name in different folders would share a directory.
    if (seen.has(c.id))
      throw new InputError({
        file,
        problem: `two cells are both called ${c.id}: give the topology files different names`,
      });
    seen.add(c.id);
  }
  return {
    name: s.name ?? basename(file, extname(file)),
    description: s.description ?? '',
    file,
    quick,
    repeats: quick ? (s.quick?.repeats ?? s.repeats) : s.repeats,
    seed: s.seed,
    thresholds: s.thresholds,
    cells,
  };
}

function expand(base: string, m: Matrix, defaults: RunParams): Cell[] {
  // The axes in a fixed order, so that cell ids and the run order do not depend on the file's.
  const swept = SWEEP_AXES.filter((k) => m[k] !== undefined).map(
    (k) => [k, m[k] as readonly unknown[]] as const,
  );
  let combos: Record<string, unknown>[] = [{}];
  for (const [key, values] of swept) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [key]: v })));
  const texts = new Map<string, string>();
  const cells: Cell[] = [];
  for (const topo of m.topology) {
    const path = resolve(base, topo);
    const text = texts.get(path) ?? readFileSync(path, 'utf8');
    texts.set(path, text);
    const topologyName = basename(path, extname(path));
    for (const combo of combos) {
      const params = { ...defaults, ...combo } as RunParams;
      const label: Record<string, string> = {};
      for (const [key, values] of swept) if (values.length > 1) label[key] = valueText(combo[key]);
      const id = [topologyName, ...Object.entries(label).map(([k, v]) => `${k}-${v}`)]
        .join('.')
        .replace(/[^A-Za-z0-9_.=-]/g, '_');
      const configHash = createHash('sha256')
        .update(JSON.stringify({ topology: text, params: sortedKeys(params) }))
        .digest('hex')
        .slice(0, 16);
      cells.push({ id, topology: path, topologyName, params, swept: label, configHash });
    }
  }
  return cells;
}

/** A swept value as it appears in a cell id and in the tables: 200, history, tud1-cern3. */
export function valueText(v: unknown): string {
  if (v !== null && typeof v === 'object')
    return Object.entries(v as Record<string, number>)
      .map(([k, w]) => `${k}${w}`)
      .join('-');
  return String(v);
}

function sortedKeys<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))) as T;
}

/** The `pole-bench run` arguments of one repeat of a cell. */
export function runArgs(
  cell: Cell,
  o: { seed: number; out: string; runtime?: string; thresholds: readonly string[] },
): string[] {
  const p = cell.params;
  const args = ['run', cell.topology, '--out', o.out, '--seed', String(o.seed), '--quiet'];
  if (o.runtime !== undefined) args.push('--runtime', o.runtime);
  if (p.target !== undefined) args.push('--target', p.target);
  if (p.oracle !== undefined) args.push('--oracle', p.oracle);
  for (const { option } of targetOptions()) {
    const v = (p as Record<string, unknown>)[option.suiteKey];
    if (typeof v === 'string') args.push(`--${option.flag}`, v);
  }
  if (p.electionWaitFor !== undefined) args.push('--election-wait-for', p.electionWaitFor);
  if (p.rate !== undefined) args.push('--rate', String(p.rate));
  if (p.size !== undefined) args.push('--size', String(p.size));
  if (p.duration !== undefined) args.push('--duration', p.duration);
  if (p.killAt !== undefined) args.push('--kill-at', p.killAt);
  if (p.share !== undefined)
    args.push(
      '--share',
      Object.entries(p.share)
        .map(([dc, w]) => `${dc}=${w}`)
        .join(','),
    );
  if (p.preload !== undefined) args.push('--preload', p.preload);
  if (p.poisson) args.push('--poisson');
  if (p.reads !== undefined) args.push('--reads', String(p.reads));
  if (p.readMode !== undefined) args.push('--read-mode', p.readMode);
  if (p.nemesisSeed !== undefined) args.push('--nemesis-seed', String(p.nemesisSeed));
  for (const t of o.thresholds) args.push('--threshold', t);
  return args;
}
