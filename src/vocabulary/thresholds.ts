// Owns the threshold language (--threshold, a topology's scenario.thresholds): parsing an expression
// and checking its path against result.json's schema. Imports only shared names and util.
//
// Pass/fail conditions on a run's result, as given with --threshold or in a topology file:
//   recovery.servingMs < 500        latency.caltech.after.p99 <= 120
//   writes.lost == 0                load.achievedRate >= 990         recovery.electedMs < 1.5s
// A threshold is a dotted path into result.json, an operator (< <= > >= == !=) and a number; on a
// duration the number may carry a unit (ms or s; bare numbers are ms). A name with a dot in it is
// written in brackets: latency["us.east"].after.p99.
//
// Parsing checks the path against the result schema as far as the schema knows it (fixed keys like
// `recovery.servingMs`; not data center or node names, which only the run knows), so a typo fails
// before a run of minutes rather than after: a topology's thresholds are checked when it loads.
// Evaluating a parsed threshold against a result is the report's (report/thresholds.ts).
import { z } from 'zod';
import { InputError } from '../util/input-error.js';
import { isMsSchema, runResultSchema } from './result-schema.js';

export const THRESHOLD_OPERATORS = ['<', '<=', '>', '>=', '==', '!='] as const;
export type ThresholdOperator = (typeof THRESHOLD_OPERATORS)[number];

export interface Threshold {
  /** As written (trimmed). */
  readonly expr: string;
  /** The path into the result, one entry per key. */
  readonly path: readonly string[];
  readonly op: ThresholdOperator;
  /** The bound; in ms when the path names a duration. */
  readonly value: number;
}

const EXAMPLE = 'like "recovery.servingMs < 500" or "latency.caltech.after.p99 <= 120ms"';
const UNIT_MS = { ms: 1, s: 1000 } as const;
/**
 * Top-level keys a threshold may not name: the thresholds' own results would be circular, and a
 * model's basis holds the bounds of its windows, not figures of the run.
 */
const NOT_THRESHOLDS = new Set(['thresholds', 'modelBasis']);

/**
 * Parse one threshold expression. `source` names where it came from in errors (the flag by
 * default). Throws InputError (exit code 2) naming the expression and what is wrong with it.
 */
export function parseThreshold(expr: string, source = '--threshold'): Threshold {
  const text = expr.trim();
  const fail = (problem: string): InputError =>
    new InputError({ file: source, problem: `${JSON.stringify(text)}: ${problem}` });
  if (text === '') throw fail(`empty threshold: expected PATH OPERATOR NUMBER, ${EXAMPLE}`);

  const { path, rest } = scanPath(text, fail);
  if (path.length === 0) throw fail(`expected a result path before the operator, ${EXAMPLE}`);

  const afterPath = rest.trimStart();
  const opMatch = /^(<=|>=|==|!=|<|>)/.exec(afterPath);
  if (!opMatch) {
    if (afterPath === '') throw fail(`no comparison: expected PATH OPERATOR NUMBER, ${EXAMPLE}`);
    if (afterPath.startsWith('=')) throw fail('use == to compare for equality');
    throw fail(`expected one of ${THRESHOLD_OPERATORS.join(' ')} after ${formatPath(path)}`);
  }
  const op = opMatch[1] as ThresholdOperator;
  const operand = afterPath.slice(op.length).trim();
  const num = /^([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*([A-Za-zµ]*)$/.exec(operand);
  if (!num) {
    throw fail(
      operand === ''
        ? `expected a number after "${op}"`
        : `expected a number (with an optional unit ms or s) after "${op}", got ${JSON.stringify(operand)}`,
    );
  }

  const leaf = checkPath(path, fail);
  let value = Number(num[1]);
  const unit = num[2] ?? '';
  if (unit !== '') {
    if (!(unit in UNIT_MS)) throw fail(`unknown unit "${unit}": use ms or s (a bare number is ms)`);
    if (!leaf.ms) throw fail(`${formatPath(path)} is not a duration, so its bound takes no unit ("${unit}")`);
    // Round off binary noise (1.1 * 1000 = 1100.0000000000002), keeping microseconds.
    value = Math.round(value * UNIT_MS[unit as keyof typeof UNIT_MS] * 1000) / 1000;
  }
  return { expr: text, path, op, value };
}

/** Parse every expression; the first bad one throws. */
export function parseThresholds(exprs: readonly string[], source = '--threshold'): Threshold[] {
  return exprs.map((e) => parseThreshold(e, source));
}

/** `latency.caltech.after.p99`, with names that are not plain words in brackets: `latency["us.east"]`. */
export function formatPath(path: readonly string[]): string {
  let out = '';
  for (const seg of path) {
    if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

// ------------------------------------------------------------------------------------------ paths

/** Read `a.b["c.d"].e` off the front of `text`; returns the keys and what follows. */
function scanPath(text: string, fail: (problem: string) => InputError): { path: string[]; rest: string } {
  const path: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '[') {
      const m = /^\["((?:[^"\\]|\\.)*)"\]/.exec(text.slice(i));
      if (!m) throw fail(`a bracketed key is written ["name"] (at "${text.slice(i)}")`);
      path.push(JSON.parse(`"${m[1] ?? ''}"`) as string);
      i += m[0].length;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i));
      if (!m) break;
      path.push(m[0]);
      i += m[0].length;
    }
    if (text[i] === '.') {
      i++;
      if (!/^[A-Za-z0-9_-]/.test(text.slice(i)))
        throw fail(`expected a key after the "." in ${text.slice(0, i)}`);
    } else if (text[i] !== '[') {
      break;
    }
  }
  return { path, rest: text.slice(i) };
}

/**
 * Follow `path` through the result schema. Fixed keys must exist; record keys (data center and node
 * names) and array indexes are anything. The end must be a number. Returns whether it holds ms.
 */
function checkPath(path: readonly string[], fail: (problem: string) => InputError): { ms: boolean } {
  let schema: z.ZodType = runResultSchema;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    const here = formatPath(path.slice(0, i));
    schema = unwrap(schema);
    if (schema instanceof z.ZodObject) {
      const shape = schema.shape as Record<string, z.ZodType>;
      const allowed = (k: string): boolean => !(i === 0 && NOT_THRESHOLDS.has(k));
      const next = allowed(key) ? shape[key] : undefined;
      if (!next) {
        const known = listKeys(
          Object.keys(shape).filter((k) => allowed(k) && holdsNumbers(shape[k] as z.ZodType)),
        );
        throw fail(
          i === 0 ? `unknown key "${key}"; known: ${known}` : `${here} has no key "${key}"; known: ${known}`,
        );
      }
      schema = next;
    } else if (schema instanceof z.ZodRecord) {
      schema = schema.valueType as z.ZodType;
    } else if (schema instanceof z.ZodArray) {
      if (!/^\d+$/.test(key)) throw fail(`${here} is a list: expected an index (0, 1, …), got "${key}"`);
      schema = schema.element as z.ZodType;
    } else {
      throw fail(`${here} is a single value, it has no "${key}"`);
    }
  }
  const leaf = unwrap(schema);
  const name = formatPath(path);
  if (leaf instanceof z.ZodNumber) return { ms: isMsSchema(leaf) };
  if (leaf instanceof z.ZodObject) {
    const known = listKeys(
      Object.entries(leaf.shape as Record<string, z.ZodType>)
        .filter(([, s]) => holdsNumbers(s))
        .map(([k]) => k),
    );
    throw fail(`${name} is a group of values, not a number: add one of ${known}`);
  }
  if (leaf instanceof z.ZodRecord) throw fail(`${name} is a group of values, not a number: add a name to it`);
  if (leaf instanceof z.ZodArray) throw fail(`${name} is a list, not a number: add an index and a key`);
  throw fail(`${name} is not a number, so it cannot be compared`);
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodNullable || s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
  return s;
}

/** Whether a threshold can reach a number somewhere under this schema (for lists of known keys). */
function holdsNumbers(schema: z.ZodType): boolean {
  const s = unwrap(schema);
  if (s instanceof z.ZodNumber) return true;
  if (s instanceof z.ZodObject) return Object.values(s.shape as Record<string, z.ZodType>).some(holdsNumbers);
  if (s instanceof z.ZodRecord) return holdsNumbers(s.valueType as z.ZodType);
  if (s instanceof z.ZodArray) return holdsNumbers(s.element as z.ZodType);
  return false;
}

/** Names for an error message: the first 20, then "…". */
export function listKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, 20).join(', ');
  return keys.length > 20 ? `${shown}, …` : shown;
}
