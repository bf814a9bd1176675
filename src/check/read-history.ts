// A history's text as events: a run's history.jsonl (one event per line, vocabulary/history.ts)
// or Jepsen's history.edn (one map per line, or one vector of maps), told apart by content. EDN is
// read by edn-data. Jepsen's maps give `:type`, `:f`, `:value`, `:process`, `:time` (or only
// `:index`); a register's values may be numbers, strings, keywords or nil, each kept apart (3 is
// not "3"); the nemesis's events are left out; a history whose every value is a [key value] pair
// is Jepsen's independent keys (jepsen.independent), each key its own register.
import { parseEDNString, type EDNVal } from 'edn-data';
import { z } from 'zod';
import type { EventType, HistoryEvent, OpKind, RegisterValue } from '../vocabulary/history.js';
import { HistoryError, type SourcedEvent } from './history-ops.js';

export const HISTORY_FORMATS = ['jsonl', 'edn'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** jsonl where the first line with anything on it is JSON, else EDN. */
export function detectFormat(text: string): HistoryFormat {
  const first = text.split('\n').find((l) => l.trim() !== '');
  if (first === undefined) return 'jsonl';
  try {
    JSON.parse(first);
    return 'jsonl';
  } catch {
    return 'edn';
  }
}

export function readHistory(text: string, format: HistoryFormat = detectFormat(text)): SourcedEvent[] {
  return format === 'jsonl' ? readJsonl(text) : readEdn(text);
}

const registerValue = z.union([z.string(), z.null()]);
const eventSchema = z
  .object({
    type: z.enum(['invoke', 'ok', 'fail', 'info']),
    process: z.string().min(1),
    f: z.enum(['read', 'write', 'cas']),
    key: z.string(),
    value: z.union([registerValue, z.tuple([registerValue, registerValue])]),
    time: z.number().finite(),
    error: z.string().optional(),
    session: z.string().min(1).optional(),
  })
  .strict();

function readJsonl(text: string): SourcedEvent[] {
  const events: SourcedEvent[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      throw new HistoryError(line, `not JSON: ${(err as Error).message}`);
    }
    const parsed = eventSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new HistoryError(line, `${issue.path.join('.') || 'the event'}: ${issue.message}`);
    }
    events.push({ event: parsed.data as HistoryEvent, line });
  });
  return events;
}

/** Each map with the line it is on: one per line, or the items of one vector, a line each or not. */
function ednMaps(text: string): Array<{ value: EDNVal; line: number }> {
  const lines = text.split('\n');
  const parse = (s: string, line: number): EDNVal => {
    // A form left open parses as nil here, which the map check then refuses with its line.
    try {
      return parseEDNString(s, { listAs: 'array' }) as EDNVal;
    } catch (err) {
      throw new HistoryError(line, `not EDN: ${(err as Error).message}`);
    }
  };
  const body = text.trim();
  if (!body.startsWith('[')) {
    return lines.flatMap((l, i) => (l.trim() === '' ? [] : [{ value: parse(l, i + 1), line: i + 1 }]));
  }
  // One vector: Jepsen writes one map per line, and then each keeps its line; else the whole is
  // read at once and each item is known by the vector's first line.
  const inner = body.slice(1, body.endsWith(']') ? -1 : undefined);
  const start = text.slice(0, text.indexOf('[')).split('\n').length;
  const perLine = inner.split('\n');
  try {
    return perLine.flatMap((l, i) =>
      l.trim() === '' ? [] : [{ value: parseEDNString(l, { listAs: 'array' }) as EDNVal, line: start + i }],
    );
  } catch {
    const all = parse(body, start);
    if (!Array.isArray(all)) throw new HistoryError(start, 'expected a vector of maps');
    return all.map((value) => ({ value, line: start }));
  }
}

function readEdn(text: string): SourcedEvent[] {
  const maps = ednMaps(text).map(({ value, line }) => ({ fields: mapFields(value, line), line }));
  const ops = maps.filter(({ fields }) => display(fields.get('process') ?? null) !== ':nemesis');
  // Jepsen's independent keys: every value a [key value] pair (a read's invoke too: [key nil]).
  const independent =
    ops.length > 0 &&
    ops.every(
      ({ fields }) => Array.isArray(fields.get('value')) && (fields.get('value') as EDNVal[]).length === 2,
    );
  return ops.map(({ fields, line }, i) => {
    const type = keyword(fields, 'type', line) as EventType;
    if (!['invoke', 'ok', 'fail', 'info'].includes(type))
      throw new HistoryError(line, `:type :${type} is none of :invoke :ok :fail :info`);
    const f = keyword(fields, 'f', line) as OpKind;
    if (!['read', 'write', 'cas'].includes(f))
      throw new HistoryError(line, `:f :${f} is none of :read :write :cas (a register's operations)`);
    const raw = fields.get('value') ?? null;
    const [key, value] = independent ? (raw as [EDNVal, EDNVal]) : [null, raw];
    const time = fields.get('time') ?? fields.get('index') ?? i;
    if (typeof time !== 'number' && typeof time !== 'bigint')
      throw new HistoryError(line, ':time (or :index) must be a number');
    return {
      event: {
        type,
        process: display(fields.get('process') ?? null),
        f,
        key: independent ? display(key) : '',
        value: f === 'cas' ? casPair(value, line) : registerOf(value, line),
        time: Number(time),
        ...(fields.has('error') ? { error: display(fields.get('error')!) } : {}),
      } satisfies HistoryEvent,
      line,
    };
  });
}

function mapFields(v: EDNVal, line: number): Map<string, EDNVal> {
  if (!v || typeof v !== 'object' || !('map' in v))
    throw new HistoryError(line, 'expected a map: {:type … :f … :value …}');
  const m = new Map<string, EDNVal>();
  for (const [k, val] of (v as { map: [EDNVal, EDNVal][] }).map)
    if (k && typeof k === 'object' && 'key' in k) m.set((k as { key: string }).key, val);
  return m;
}

function keyword(fields: Map<string, EDNVal>, name: string, line: number): string {
  const v = fields.get(name);
  if (v && typeof v === 'object' && 'key' in v) return (v as { key: string }).key;
  if (typeof v === 'string') return v;
  throw new HistoryError(line, `:${name} must be a keyword`);
}

/** A value as a register holds it: nil as null, everything else as its EDN text. */
function registerOf(v: EDNVal, line: number): RegisterValue {
  if (v === null) return null;
  if (Array.isArray(v) || (typeof v === 'object' && !(v instanceof Date) && ('map' in v || 'set' in v)))
    throw new HistoryError(line, `:value ${display(v)} is not a register's value`);
  return display(v);
}

function casPair(v: EDNVal, line: number): readonly [RegisterValue, RegisterValue] {
  if (!Array.isArray(v) || v.length !== 2) throw new HistoryError(line, 'a cas :value must be [old new]');
  return [registerOf(v[0]!, line), registerOf(v[1]!, line)];
}

/** EDN's text of a value, so that values of different types stay apart (3, "3", :3). */
function display(v: EDNVal): string {
  if (v === null) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return `[${v.map(display).join(' ')}]`;
  if ('key' in v) return `:${(v as { key: string }).key}`;
  if ('sym' in v) return (v as { sym: string }).sym;
  if ('char' in v) return `\\${(v as { char: string }).char}`;
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}
