// Load a user-written YAML (or JSON, which YAML 1.2 parses too) file and validate it with a zod
// schema, turning the first problem into an InputError that points at the line and column of the
// offending node. Generic: node configs and topology files both go through here.
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import type { Document } from 'yaml';
import type { z } from 'zod';
import { InputError } from './input-error.js';

/** A parsed file that keeps source ranges, so a field path can be traced back to line and column. */
export interface ParsedSource {
  readonly doc: Document.Parsed;
  readonly lineCounter: LineCounter;
}

export type FieldPath = readonly PropertyKey[];

export interface SourcePosition {
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

/** Read, parse and validate `file`; throws InputError for unreadable files, bad YAML and invalid content. */
export function loadValidatedFile<T>(file: string, schema: z.ZodType<T>): T {
  return validateParsed(file, parseSourceFile(file), schema);
}

/** Read and parse `file`, keeping source ranges. Throws InputError on read or syntax errors. */
export function parseSourceFile(file: string): ParsedSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : `cannot read the file${code ? ` (${code})` : ''}`;
    throw new InputError({ file, problem });
  }
  return parseSource(file, text);
}

/** Parse YAML/JSON text (`file` only names it in errors). Throws InputError on syntax errors. */
export function parseSource(file: string, text: string): ParsedSource {
  const lineCounter = new LineCounter();
  // merge: YAML 1.1 `<<` merge keys, handy for repeating node definitions in topology files.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
  const first = doc.errors[0];
  if (first) {
    const pos = lineCounter.linePos(first.pos[0]);
    throw new InputError({
      file,
      line: pos.line,
      column: pos.col,
      problem: `invalid YAML: ${first.message}`,
    });
  }
  // The parser accepts aliases to anchors that do not exist; find them here, where we know the spot.
  let dangling: { range?: [number, number, number] | null; source: string } | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.resolve(doc) === undefined) {
        dangling = node;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (dangling) {
    const pos = lineCounter.linePos(dangling.range?.[0] ?? 0);
    throw new InputError({
      file,
      line: pos.line,
      column: pos.col,
      problem: `invalid YAML: alias *${dangling.source} refers to no anchor`,
    });
  }
  return { doc, lineCounter };
}

/**
 * Validate an already parsed file. Refinements inside `schema` (superRefine, transform issues) get
 * located like any other issue, by their `path`.
 */
export function validateParsed<T>(file: string, parsed: ParsedSource, schema: z.ZodType<T>): T {
  let data: unknown;
  try {
    data = parsed.doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new InputError({ file, problem: `invalid YAML: ${(err as Error).message}` });
  }
  const result = schema.safeParse(data, { error: humanizeIssue });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new InputError({ file, problem: 'invalid content' });
  let path: FieldPath = issue.path;
  let atKey = false;
  // An unknown field is reported by zod on the object holding it; point at the key itself.
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
    path = [...path, issue.keys[0]];
    atKey = true;
  }
  let problem = issue.message;
  if (path.length === 0 && parsed.doc.contents === null) problem = 'the file is empty';
  throw inputErrorAt(file, parsed, path, problem, { atKey });
}

/** An InputError located at `path` in `parsed`, for checks a caller makes after validation. */
export function inputErrorAt(
  file: string,
  parsed: ParsedSource,
  path: FieldPath,
  problem: string,
  opts: { atKey?: boolean } = {},
): InputError {
  const pos = locate(parsed, path, opts.atKey ?? false);
  return new InputError({ file, line: pos.line, column: pos.column, field: formatFieldPath(path), problem });
}

/**
 * Where `path` is in the source: the value node it names (or its key with `atKey`). When the path
 * does not exist (a missing field), the nearest existing parent: the key that names it, or, for a
 * list item or the document root, the node itself.
 */
export function locate(parsed: ParsedSource, path: FieldPath, atKey = false): SourcePosition {
  const { doc } = parsed;
  let node: unknown = doc.contents;
  // The best spot for the node reached so far, and the map key that named it (none for the root or a list item).
  let spot: unknown = doc.contents;
  let namedBy: unknown = null;
  let missing = false;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let key: unknown = null;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) {
        missing = true;
        break;
      }
      key = pair.key;
      if (atKey && i === path.length - 1) {
        spot = key;
        break;
      }
      next = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
      next = node.items[seg];
    } else {
      missing = true;
      break;
    }
    // `key:` with nothing after it has no (or an empty) value node: then its key is the place to point at.
    spot = hasRange(next) && next.range[1] > next.range[0] ? next : (key ?? next);
    namedBy = key;
    node = next;
  }
  // A missing field: point at the key naming its parent (the `timers:` line) rather than the
  // parent's first child.
  const target = missing && hasRange(namedBy) ? namedBy : spot;
  const pos = parsed.lineCounter.linePos(hasRange(target) ? target.range[0] : 0);
  return { line: pos.line, column: pos.col };
}

function hasRange(n: unknown): n is { range: [number, number, number] } {
  return typeof n === 'object' && n !== null && Array.isArray((n as { range?: unknown }).range);
}

/** `peers[2].id`, `cluster.timers.tickMs`, `labels["a b"]`. */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

// Messages for people editing a file, rather than zod's defaults ("Too small: expected number to
// be >0"). Schema-level messages still win over these (zod's precedence), and any code not handled
// here keeps zod's default message.
type RawIssue = Parameters<NonNullable<z.core.$ZodErrorMap>>[0];

function humanizeIssue(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = nounFor(String(issue.expected));
      if (issue.input === undefined) return `required (expected ${expected})`;
      return `expected ${expected}, got ${describeValue(issue.input)}`;
    }
    case 'too_small':
      return boundMessage(
        'at least',
        'more than',
        issue.origin,
        Number(issue.minimum),
        issue.inclusive,
        issue.input,
      );
    case 'too_big':
      return boundMessage(
        'at most',
        'less than',
        issue.origin,
        Number(issue.maximum),
        issue.inclusive,
        issue.input,
      );
    case 'invalid_value': {
      const values = issue.values.map((v) => JSON.stringify(v));
      const want = values.length === 1 ? values[0] : `one of ${values.join(', ')}`;
      return `expected ${want}, got ${describeValue(issue.input)}`;
    }
    case 'unrecognized_keys':
      return issue.keys.length > 1
        ? `unknown field (also unknown: ${issue.keys.slice(1).join(', ')})`
        : 'unknown field';
    case 'not_multiple_of':
      return `expected a multiple of ${String(issue.divisor)}`;
    case 'invalid_format':
      return `expected ${issue.format === 'regex' ? 'a value matching the required pattern' : `a valid ${issue.format}`}`;
    case 'invalid_union':
      return `does not match any allowed form, got ${describeValue(issue.input)}`;
    default:
      return undefined;
  }
}

function boundMessage(
  inclusiveWord: string,
  exclusiveWord: string,
  origin: string,
  bound: number,
  inclusive: boolean | undefined,
  input: unknown,
): string | undefined {
  const got = input === undefined ? '' : `, got ${describeValue(input)}`;
  if (origin === 'number' || origin === 'bigint') {
    if (bound === 0 && inclusive === false && exclusiveWord === 'more than')
      return `expected a positive number${got}`;
    if (bound === 0 && inclusive === true && inclusiveWord === 'at least')
      return `expected a number >= 0${got}`;
    const op = inclusiveWord === 'at least' ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
    return `expected a number ${op} ${bound}${got}`;
  }
  const unit =
    origin === 'string' ? 'characters' : origin === 'array' || origin === 'set' ? 'items' : undefined;
  if (!unit) return undefined;
  if (bound === 1 && inclusive !== false && inclusiveWord === 'at least') return 'must not be empty';
  return `expected ${inclusive === false ? exclusiveWord : inclusiveWord} ${bound} ${unit}`;
}

function nounFor(expected: string): string {
  switch (expected) {
    case 'number':
      return 'a number';
    case 'int':
      return 'an integer';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'bigint':
      return 'an integer';
    default:
      return expected;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}
