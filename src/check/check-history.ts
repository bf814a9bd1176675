// A whole history checked against a model, key by key (the keys are independent registers, so a
// history is linearizable exactly when each key's operations are): each key comes out
// linearizable, violated (with its shortest counterexample), or unknown (its time ran out). A key
// whose writes all wrote different values and has no cas is decided by its zones
// (register-zones.ts); any other by the search (linearizable.ts).
import { HistoryError, byKey, type Op } from './history-ops.js';
import { searchLinearization, type Verdict } from './linearizable.js';
import { shortestCounterexample, type Counterexample } from './counterexample.js';
import { modelNamed, type ModelName } from './register-model.js';
import { zoneVerdict } from './register-zones.js';

export interface KeyResult {
  readonly key: string;
  readonly ops: number;
  readonly verdict: Verdict;
  /** The search's choices: how far it got where the verdict is unknown. */
  readonly steps: number;
  readonly counterexample?: Counterexample;
}

export interface HistoryCheck {
  readonly model: ModelName;
  readonly ops: number;
  readonly keys: number;
  /** Keys by verdict. */
  readonly ok: number;
  readonly violated: number;
  readonly unknown: number;
  /** The keys that are not linearizable or not known to be, in key order. */
  readonly problems: readonly KeyResult[];
  readonly seconds: number;
}

export interface CheckOptions {
  readonly model: ModelName;
  /** The whole check's time (ms); keys not reached in it are unknown. */
  readonly budgetMs: number;
  /** One key's search may take at most this long (ms); default: the whole budget. */
  readonly keyBudgetMs?: number;
  /** A violated key's counterexample may take at most this long to make shortest (ms). */
  readonly counterexampleMs?: number;
  /**
   * 'search' decides every key by the search, even where the zones apply (what a history with cas
   * or repeated values gets; for measuring it, and for checking the one method by the other).
   */
  readonly method?: 'auto' | 'search';
}

const DEFAULT_COUNTEREXAMPLE_MS = 2_000;

export function checkHistory(ops: readonly Op[], o: CheckOptions): HistoryCheck {
  const started = performance.now();
  const deadline = started + o.budgetMs;
  const model = modelNamed(o.model);
  if (o.model === 'register') {
    const cas = ops.find((x) => x.f === 'cas');
    if (cas) throw new HistoryError(cas.line, 'a cas in a register history: check it as a cas-register');
  }
  const keys = [...byKey(ops).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const problems: KeyResult[] = [];
  let ok = 0;
  for (const [key, list] of keys) {
    const now = performance.now();
    const keyDeadline = Math.min(deadline, now + (o.keyBudgetMs ?? Infinity));
    const zones = now > deadline || o.method === 'search' ? undefined : zoneVerdict(list);
    const found = zones
      ? { verdict: zones.verdict, steps: list.length }
      : now > deadline
        ? { verdict: 'unknown' as const, steps: 0 }
        : searchLinearization(list, model, keyDeadline);
    if (found.verdict === 'linearizable') {
      ok++;
      continue;
    }
    const result: KeyResult = { key, ops: list.length, verdict: found.verdict, steps: found.steps };
    if (found.verdict === 'violated') {
      // The counterexample's time is its own: a violation found is said even at the budget's end.
      const until = performance.now() + (o.counterexampleMs ?? DEFAULT_COUNTEREXAMPLE_MS);
      problems.push({
        ...result,
        counterexample: shortestCounterexample(list, model, until, zones?.witness),
      });
    } else problems.push(result);
  }
  const violated = problems.filter((p) => p.verdict === 'violated').length;
  return {
    model: o.model,
    ops: ops.length,
    keys: keys.length,
    ok,
    violated,
    unknown: problems.length - violated,
    problems,
    seconds: (performance.now() - started) / 1000,
  };
}

/** A check's counts as results carry them: operations, keys by verdict, seconds (to the ms). */
export interface CheckCounts {
  readonly ops: number;
  readonly keys: number;
  readonly ok: number;
  readonly violated: number;
  readonly unknown: number;
  readonly seconds: number;
}

export function checkCounts(c: HistoryCheck): CheckCounts {
  const { ops, keys, ok, violated, unknown } = c;
  return { ops, keys, ok, violated, unknown, seconds: Math.round(c.seconds * 1000) / 1000 };
}
