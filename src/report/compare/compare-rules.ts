// What `pole-bench compare` calls a regression: rules over the metrics of run-metrics.ts.
//
//   "latency.*.after.mean +10%"   worse by more than 10 % of the baseline, beyond the noise allowance
//   "recovery.servingMs +50ms"    worse by more than 50 ms, beyond the noise allowance
//   "writes.lost > 0"             the current value alone, whatever the baseline
//
// `*` stands for one dotted segment. "Worse" follows the metric's direction (latency: higher;
// throughput: lower). Pure.
import { InputError } from '../../util/input-error.js';

export type CompareRule =
  | { readonly text: string; readonly pattern: RegExp; readonly kind: 'relative'; readonly fraction: number }
  | { readonly text: string; readonly pattern: RegExp; readonly kind: 'absolute'; readonly amount: number }
  | {
      readonly text: string;
      readonly pattern: RegExp;
      readonly kind: 'limit';
      readonly op: '>' | '>=';
      readonly bound: number;
    };

/** A per-DC mean or p99 more than 10 % worse, a slower recovery, any lost write. */
export const DEFAULT_RULES = [
  'latency.*.*.mean +10%',
  'latency.*.*.p99 +10%',
  'recovery.servingMs +10%',
  'writes.lost > 0',
] as const;

export function parseRule(text: string, where = '--fail-on'): CompareRule {
  const m = /^\s*([A-Za-z0-9_*.-]+)\s+(?:\+\s*(\d+(?:\.\d+)?)\s*(%|ms)?|(>=|>)\s*(-?\d+(?:\.\d+)?))\s*$/.exec(
    text,
  );
  if (!m)
    throw new InputError({
      file: where,
      problem: `expected "METRIC +N%", "METRIC +Nms", "METRIC +N" or "METRIC > N" (METRIC may use * for one segment), got ${JSON.stringify(text)}`,
    });
  const [, metric, amount, unit, op, bound] = m;
  const pattern = new RegExp(
    `^${(metric as string)
      .split('.')
      .map((s) => (s === '*' ? '[^.]+' : escape(s)))
      .join('\\.')}$`,
  );
  if (op !== undefined) return { text, pattern, kind: 'limit', op: op as '>' | '>=', bound: Number(bound) };
  if (unit === '%') return { text, pattern, kind: 'relative', fraction: Number(amount) / 100 };
  return { text, pattern, kind: 'absolute', amount: Number(amount) };
}

function escape(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\-]/g, '\\$&');
}
