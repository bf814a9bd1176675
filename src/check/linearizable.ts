// Whether one key's operations are linearizable against a model: a search for an order of them
// that the model allows and that respects real time (an operation that completed before another
// was invoked comes first). Lowe's just-in-time linearization, as Porcupine does it: walk the
// invokes and completions in time order; at an invoke, try to take that operation now (the model
// allows it, and this set of operations taken with this state was never tried before: the cache
// that keeps the search from exploring the same place twice); at a completion whose operation
// was not taken yet, undo the last choice and try the next. An operation in doubt (`info`)
// completes at the end of time: once every other is taken, those left never happened.
import { Random } from '../util/random.js';
import type { Model } from './register-model.js';
import type { Op } from './history-ops.js';

export type Verdict = 'linearizable' | 'violated' | 'unknown';

export interface SearchOutcome {
  readonly verdict: Verdict;
  /** Choices the search made (taken and undone): how far it got, for `unknown`. */
  readonly steps: number;
  /** The most operations it ever had in one order. */
  readonly deepest: number;
}

/** How often the search looks at the clock: often enough to stop near its deadline. */
const CLOCK_EVERY = 4096;

/**
 * The most places the cache keeps for one key (each a string of some 40 bytes, about 100 with the
 * set's own): past this the key is unknown, as at its deadline, so that memory ends the search
 * before the kernel's OOM killer ends the process (about 1 GB of heap).
 */
export const MAX_CACHED = 10_000_000;

/**
 * Searches `ops` (one key's) for a linearization under `model`, until it finds one, shows there is
 * none, or `deadline` (performance.now() ms) passes.
 */
export function searchLinearization<S>(
  given: readonly Op[],
  model: Model<S>,
  deadline = Infinity,
  maxCached = MAX_CACHED,
): SearchOutcome {
  const ops = doubtsWhenSeen(withoutUnseenDoubts(given));
  const n = ops.length;
  if (n === 0) return { verdict: 'linearizable', steps: 0, deepest: 0 };
  // The entries: 2i is op i's invoke, 2i+1 its completion, in time order (invokes before
  // completions at the same instant: the two may then overlap, which never invents a violation).
  const order = Array.from({ length: 2 * n }, (_, e) => e);
  const timeOf = (e: number): number => (e % 2 === 0 ? ops[e >> 1]!.call : ops[e >> 1]!.ret);
  order.sort((a, b) => timeOf(a) - timeOf(b) || (a % 2) - (b % 2) || a - b);
  // A doubly linked list over the entries, with a head at index 2n.
  const HEAD = 2 * n;
  const next = new Int32Array(2 * n + 1).fill(-1);
  const prev = new Int32Array(2 * n + 1).fill(-1);
  let last = HEAD;
  for (const e of order) {
    next[last] = e;
    prev[e] = last;
    last = e;
  }
  const unlink = (e: number): void => {
    next[prev[e]!] = next[e]!;
    if (next[e]! >= 0) prev[next[e]!] = prev[e]!;
  };
  const relink = (e: number): void => {
    if (next[e]! >= 0) prev[next[e]!] = e;
    next[prev[e]!] = e;
  };
  // The set of operations taken, as a Zobrist hash: each operation's three random words XORed in
  // when it is taken and out when undone, so that a step costs the same however long the
  // history. 96 bits: a collision would make the search pass over a place it never explored (and
  // could then call a linearizable key violated); even a billion cache entries collide with a
  // chance under 1e-11.
  const zobrist = new Uint32Array(3 * n);
  const rnd = new Random(0x5eed);
  for (let i = 0; i < zobrist.length; i++) zobrist[i] = Math.floor(rnd.next() * 0x1_0000_0000);
  let h0 = 0;
  let h1 = 0;
  let h2 = 0;
  const flip = (op: number): void => {
    h0 ^= zobrist[3 * op]!;
    h1 ^= zobrist[3 * op + 1]!;
    h2 ^= zobrist[3 * op + 2]!;
  };
  const idOf = model.idsOver(ops);
  const seen = new Set<string>();
  const stack: Array<{ readonly op: number; readonly state: S }> = [];
  let state = model.init;
  let entry = next[HEAD]!;
  let steps = 0;
  let deepest = 0;
  while (next[HEAD]! >= 0) {
    if (++steps % CLOCK_EVERY === 0 && (performance.now() > deadline || seen.size > maxCached))
      return { verdict: 'unknown', steps, deepest };
    const op = entry >> 1;
    if (entry % 2 === 0) {
      const after = model.step(state, ops[op]!);
      if (after !== undefined) {
        flip(op);
        const key = `${h0},${h1},${h2}|${idOf(after)}`;
        if (!seen.has(key)) {
          seen.add(key);
          stack.push({ op, state });
          state = after;
          unlink(2 * op);
          unlink(2 * op + 1);
          if (stack.length > deepest) deepest = stack.length;
          entry = next[HEAD]!;
          continue;
        }
        flip(op);
      }
      entry = next[entry]!;
      continue;
    }
    // A completion at the end of time: every operation that completed is taken; those in doubt
    // that are left never happened.
    if (ops[op]!.ret === Infinity) return { verdict: 'linearizable', steps, deepest };
    // Undo the last choice and try the next entry after it. A read undone is undone with the one
    // before it: a read that agreed with the state when taken could always be taken there (it
    // changes nothing, and whatever had to precede it already had), so no order lacks it there
    // that has it later.
    let undo = stack.pop();
    for (;;) {
      if (!undo) return { verdict: 'violated', steps, deepest };
      state = undo.state;
      flip(undo.op);
      relink(2 * undo.op + 1);
      relink(2 * undo.op);
      if (ops[undo.op]!.f !== 'read') break;
      undo = stack.pop();
    }
    entry = next[2 * undo.op]!;
  }
  return { verdict: 'linearizable', steps, deepest };
}

/**
 * The operations less those in doubt whose outcome nobody saw: a write or cas in doubt whose
 * value no read returned and no cas expected. Taking one changes the value to one that no
 * operation after it can depend on until the next write, so "it never happened" (always allowed
 * for an operation in doubt) fits wherever it would; and each one left would double the places the
 * search must try.
 */
export function withoutUnseenDoubts(ops: readonly Op[]): readonly Op[] {
  if (!ops.some((o) => o.status === 'info')) return ops;
  const seen = new Set<string | null>();
  for (const o of ops)
    if (o.f === 'read') seen.add(o.output);
    else if (o.f === 'cas') seen.add((o.input as readonly [string | null, string | null])[0]);
  return ops.filter((o) => {
    if (o.status !== 'info') return true;
    const wrote = o.f === 'cas' ? (o.input as readonly [string | null, string | null])[1] : o.input;
    return seen.has(wrote as string | null);
  });
}

/**
 * A write in doubt moved to take effect no sooner than the first invoke of an operation that saw
 * its value: until then nothing can depend on it. Were it taken at p, before that, the first
 * operation after p that depends on the value either saw it (so was invoked no sooner than that
 * first invoke, and the write can move to just before it) or comes after another write (so the
 * write in doubt changed nothing anyone saw, and "never happened" fits). Without this the search
 * tries every write in doubt at every step from its invoke on, and undoes each of those choices
 * only at the first read that contradicts it.
 */
export function doubtsWhenSeen(ops: readonly Op[]): readonly Op[] {
  if (!ops.some((o) => o.status === 'info' && o.f === 'write')) return ops;
  const firstSeen = new Map<string | null, number>();
  const saw = (v: string | null, at: number): void => {
    const was = firstSeen.get(v);
    if (was === undefined || at < was) firstSeen.set(v, at);
  };
  for (const o of ops)
    if (o.f === 'read') saw(o.output, o.call);
    else if (o.f === 'cas') saw((o.input as readonly [string | null, string | null])[0], o.call);
  return ops.map((o) => {
    if (o.status !== 'info' || o.f !== 'write') return o;
    const at = firstSeen.get(o.input as string | null);
    return at !== undefined && at > o.call ? { ...o, call: at } : o;
  });
}
