// Evaluating the pass/fail conditions on a run's result (--threshold, a topology's
// scenario.thresholds), parsed and checked against the result schema by vocabulary/thresholds.ts.
// Evaluation treats a missing or null value as a failure: a recovery that was never observed must
// not pass `recovery.servingMs < 500`.
import type { ThresholdResult } from './result.js';
import { formatPath, listKeys, type Threshold, type ThresholdOperator } from '../vocabulary/thresholds.js';

/** Check a threshold against a result (any JSON-like object, so a result still being built works too). */
export function evaluateThreshold(threshold: Threshold, result: unknown): ThresholdResult {
  const { expr, path } = threshold;
  let value: unknown = result;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    const here = formatPath(path.slice(0, i));
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) {
      const has = typeof value === 'object' && value !== null ? Object.keys(value) : ([] as string[]);
      const where = here === '' ? 'the result' : here;
      const known = has.length > 0 ? ` (it has: ${listKeys(has)})` : '';
      return { expr, ok: false, actual: null, message: `${where} has no "${key}"${known}` };
    }
    value = (value as Record<string, unknown>)[key];
  }
  const name = formatPath(path);
  if (value === null || value === undefined) {
    return { expr, ok: false, actual: null, message: `${name} was not observed (null)` };
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return { expr, ok: false, actual: null, message: `${name} is not a number` };
  }
  return { expr, ok: compare(value, threshold.op, threshold.value), actual: value };
}

export function evaluateThresholds(thresholds: readonly Threshold[], result: unknown): ThresholdResult[] {
  return thresholds.map((t) => evaluateThreshold(t, result));
}

function compare(actual: number, op: ThresholdOperator, bound: number): boolean {
  switch (op) {
    case '<':
      return actual < bound;
    case '<=':
      return actual <= bound;
    case '>':
      return actual > bound;
    case '>=':
      return actual >= bound;
    case '==':
      return actual === bound;
    case '!=':
      return actual !== bound;
  }
}
