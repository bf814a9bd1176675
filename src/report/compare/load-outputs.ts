// What `compare` compares: a run's output directory (its result.json), a result.json itself, or a
// suite's output directory (its suite.json and every finished run it lists). Each becomes scopes
// of metric spreads: one scope "run" for a run, one per cell for a suite. Bad input is an
// InputError naming the file (exit 2).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { loadValidatedFile } from '../../util/load-validated.js';
import { InputError } from '../../util/input-error.js';
import { readResultFile, type RunResult } from '../result.js';
import { metricSpreads, type MetricSpread } from '../run-metrics.js';
import { SUITE_SCHEMA_ID } from '../../vocabulary/result-schema.js';

export const RUN_SCOPE = 'run';

export interface LoadedOutputs {
  readonly kind: 'run' | 'suite';
  readonly path: string;
  readonly scopes: Map<string, Map<string, MetricSpread>>;
  /** The results behind each scope (for the benchmark JSON's extra data). */
  readonly results: Map<string, RunResult[]>;
  /** Every run whose verdict is suspect (its cross-checks disagree), as a path. */
  readonly suspect: readonly string[];
}

/** What compare reads of a suite.json. */
const suiteRuns = z.object({
  schema: z.literal(SUITE_SCHEMA_ID),
  cells: z.array(
    z.object({
      id: z.string(),
      runs: z.array(z.object({ dir: z.string(), status: z.enum(['done', 'resumed', 'failed', 'not-run']) })),
    }),
  ),
});

export function loadOutputs(path: string): LoadedOutputs {
  if (!existsSync(path)) throw new InputError({ file: path, problem: 'no such file or directory' });
  if (statSync(path).isFile()) return single(path, readResultFile(path));
  const suiteFile = join(path, 'suite.json');
  if (existsSync(suiteFile)) {
    const doc = loadValidatedFile(suiteFile, suiteRuns);
    const scopes = new Map<string, Map<string, MetricSpread>>();
    const results = new Map<string, RunResult[]>();
    const suspect: string[] = [];
    for (const cell of doc.cells) {
      const dirs = cell.runs.filter((r) => r.status === 'done' || r.status === 'resumed').map((r) => r.dir);
      const rs = dirs.map((dir) => readResultFile(join(path, dir, 'result.json')));
      rs.forEach((r, i) => {
        if (r.verdict === 'suspect') suspect.push(join(path, dirs[i]!));
      });
      if (rs.length === 0) continue;
      scopes.set(cell.id, metricSpreads(rs));
      results.set(cell.id, rs);
    }
    return { kind: 'suite', path, scopes, results, suspect };
  }
  const resultFile = join(path, 'result.json');
  if (existsSync(resultFile)) return single(path, readResultFile(resultFile));
  throw new InputError({
    file: path,
    problem: 'neither a run (result.json) nor a suite (suite.json) output directory',
  });
}

function single(path: string, r: RunResult): LoadedOutputs {
  return {
    kind: 'run',
    path,
    scopes: new Map([[RUN_SCOPE, metricSpreads([r])]]),
    results: new Map([[RUN_SCOPE, [r]]]),
    suspect: r.verdict === 'suspect' ? [path] : [],
  };
}
