// Histories made from a model register, from a seed: concurrent processes read and write random
// keys, each operation taking effect at a random instant between its invoke and its completion,
// so every history made is linearizable, until violations are planted in chosen keys. The
// checker's tests hold it to finding exactly those; `bench check` times it on them.
import { Random } from '../util/random.js';
import type { HistoryEvent, RegisterValue } from '../vocabulary/history.js';

export type PlantedKind = 'stale-read' | 'ghost-read';

export interface GeneratedHistory {
  readonly events: HistoryEvent[];
  /** The keys given a violation, with its kind. */
  readonly planted: ReadonlyMap<string, PlantedKind>;
}

export interface GenerateOptions {
  readonly seed: number;
  readonly ops: number;
  readonly keys: number;
  /** Concurrent processes (each has one operation open at a time). */
  readonly processes: number;
  /** Share of operations that are reads (default 0.5). */
  readonly reads?: number;
  /** Share of writes that end in doubt (`info`), half of which never take effect (default 0.01). */
  readonly inDoubt?: number;
  /** Keys given a violation (default 0). */
  readonly violations?: number;
  /**
   * Write values drawn from 0..values-1, as Jepsen's register workload does (so several writes
   * write the same value, and only the search can decide); default: every write its own value.
   * A violation planted is then a read of a value out of that range.
   */
  readonly values?: number;
}

interface GenOp {
  readonly process: string;
  readonly key: string;
  readonly f: 'read' | 'write';
  readonly value: RegisterValue;
  output: RegisterValue;
  readonly call: number;
  readonly ret: number;
  /** When it takes effect; undefined: never (an info that did not happen). */
  readonly at: number | undefined;
  readonly info: boolean;
}

export function generateHistory(o: GenerateOptions): GeneratedHistory {
  const rnd = new Random(o.seed);
  const reads = o.reads ?? 0.5;
  const inDoubt = o.inDoubt ?? 0.01;
  const clock = new Float64Array(o.processes);
  const generation = new Int32Array(o.processes);
  const ops: GenOp[] = [];
  for (let i = 0; i < o.ops; i++) {
    const p = i % o.processes;
    const call = clock[p]! + rnd.next() * 2;
    const ret = call + 1 + rnd.next() * 9;
    const write = !rnd.chance(reads);
    const info = write && rnd.chance(inDoubt);
    const happens = !info || rnd.chance(0.5);
    ops.push({
      process: `p${p}.${generation[p]}`,
      key: `k${rnd.int(0, o.keys - 1)}`,
      f: write ? 'write' : 'read',
      value: write ? (o.values === undefined ? `v${i}` : String(rnd.int(0, o.values - 1))) : null,
      output: null,
      call,
      ret,
      at: happens ? call + rnd.next() * (ret - call) : undefined,
      info,
    });
    clock[p] = ret;
    // A process in doubt issues nothing more: its successor takes its place, as in Jepsen.
    if (info) generation[p]!++;
  }
  // Each key's register, with every operation at its instant: the reads get what it held.
  const byKey = new Map<string, GenOp[]>();
  for (const op of ops) (byKey.get(op.key) ?? byKey.set(op.key, []).get(op.key)!).push(op);
  for (const list of byKey.values()) {
    let value: RegisterValue = null;
    for (const op of list.filter((x) => x.at !== undefined).sort((a, b) => a.at! - b.at!))
      if (op.f === 'write') value = op.value;
      else op.output = value;
  }
  const planted = plant(byKey, o.violations ?? 0, rnd, o.values === undefined);
  return { events: toEvents(ops), planted };
}

/**
 * Violations in `count` keys: a read of a value overwritten before the read began (stale), where
 * a key has one, else a read of a value nobody wrote (ghost).
 */
function plant(
  byKey: Map<string, GenOp[]>,
  count: number,
  rnd: Random,
  unique: boolean,
): Map<string, PlantedKind> {
  const planted = new Map<string, PlantedKind>();
  const keys = [...byKey.keys()];
  for (let tries = 0; planted.size < Math.min(count, keys.length) && tries < 100 * count; tries++) {
    const key = rnd.pick(keys);
    if (planted.has(key)) continue;
    const list = byKey.get(key)!;
    const read = list.filter((x) => x.f === 'read' && !x.info);
    if (read.length === 0) continue;
    const r = rnd.pick(read);
    const done = list.filter((x) => x.f === 'write' && !x.info && x.ret < r.call);
    // Two writes, the first done before the second began, both before the read: the first's
    // value can no longer be read.
    const stale = unique && done.find((w1) => done.some((w2) => w1.ret < w2.call) && w1.value !== r.output);
    if (stale) {
      r.output = stale.value;
      planted.set(key, 'stale-read');
    } else {
      r.output = unique ? `never-written-${key}` : '-1';
      planted.set(key, 'ghost-read');
    }
  }
  return planted;
}

function toEvents(ops: readonly GenOp[]): HistoryEvent[] {
  const events: Array<HistoryEvent & { readonly order: number }> = [];
  for (const op of ops) {
    const base = { process: op.process, f: op.f, key: op.key };
    events.push({ ...base, type: 'invoke', value: op.value, time: op.call, order: 1 });
    events.push({
      ...base,
      type: op.info ? 'info' : 'ok',
      value: op.f === 'read' ? op.output : op.value,
      time: op.ret,
      order: 0,
      ...(op.info ? { error: 'timeout' } : {}),
    });
  }
  // A process's completion before its next invoke at the same instant.
  events.sort((a, b) => a.time - b.time || a.order - b.order);
  return events.map(({ order: _order, ...e }) => e);
}

/**
 * A history as Jepsen writes history.edn: one map per line, processes numbered, values as EDN
 * numbers where they are numbers, times in nanoseconds; each key a file of its own is how Jepsen
 * keeps single-register histories (`keyed`: the key in the value as [key value], as
 * jepsen.independent does).
 */
export function toEdn(events: readonly HistoryEvent[], keyed = false): string {
  const processes = new Map<string, number>();
  const num = (p: string): number => processes.get(p) ?? processes.set(p, processes.size).get(p)!;
  const scalar = (v: RegisterValue): string =>
    v === null ? 'nil' : /^-?\d+$/.test(v) ? v : JSON.stringify(v);
  const value = (e: HistoryEvent): string => {
    const v = Array.isArray(e.value)
      ? `[${scalar(e.value[0] as RegisterValue)} ${scalar(e.value[1] as RegisterValue)}]`
      : scalar(e.value as RegisterValue);
    return keyed ? `[${JSON.stringify(e.key)} ${v}]` : v;
  };
  return events
    .map(
      (e, i) =>
        `{:type :${e.type}, :f :${e.f}, :value ${value(e)}, :process ${num(e.process)}, :time ${Math.round(e.time * 1e6)}, :index ${i}}`,
    )
    .join('\n')
    .concat('\n');
}
