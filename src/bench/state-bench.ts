// `pole-bench bench state`: what the replicated state costs a node per write, in-process and on
// one core: applying a txn to the tree (with the table of applied requests full, as on any node
// past 200,000 writes), and taking a snapshot of it. A restarted follower applies its whole
// recovered log at once; this says how long that takes per txn.
import { DataTree, DEFAULT_DEDUP_WINDOW } from '../node/core/data-tree.js';
import type { Txn } from '../node/core/types.js';
import { zxid } from '../vocabulary/zxid.js';
import { spread, type MinMedianMax } from '../util/spread.js';

export interface StateBenchOptions {
  /** Writes applied before timing (default: enough to fill the dedup window). */
  readonly fill: number;
  /** Writes timed per run. */
  readonly txns: number;
  readonly runs: number;
  /** Distinct paths written over and over (0: a new path per write, the default load). */
  readonly keys: number;
  readonly size: number;
  /** Clients the writes come from, round robin, each with its own request ids counting up. */
  readonly clients: number;
  readonly log?: (line: string) => void;
}

export interface StateBenchResult {
  readonly fill: number;
  readonly txns: number;
  readonly runs: number;
  readonly keys: number;
  readonly size: number;
  readonly clients: number;
  readonly dedupWindow: number;
  /** µs per txn applied, per run. */
  readonly applyUs: MinMedianMax;
  /** ms to freeze the tree as a snapshot after each run (znodes and requests copied). */
  readonly freezeMs: MinMedianMax;
  readonly znodes: number;
}

export function runStateBench(o: StateBenchOptions): StateBenchResult {
  const tree = new DataTree();
  const data = new Uint8Array(o.size).fill(7);
  let counter = 0;
  // Txns are made before the clock starts: only apply() is timed. Their strings are decoded from
  // bytes, one each, as a node's are from the messages it reads: a string the tree has not hashed.
  const fresh = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');
  const make = (n: number): Txn[] =>
    Array.from({ length: n }, () => {
      counter += 1;
      const client = counter % o.clients;
      return {
        zxid: zxid(1, counter),
        path: fresh(`/bench/k${o.keys > 0 ? counter % o.keys : counter}`),
        data,
        clientId: fresh(`bench-${client}`),
        requestId: Math.ceil(counter / o.clients),
      };
    });
  for (const t of make(o.fill)) tree.apply(t);
  const applyUs: number[] = [];
  const freezeMs: number[] = [];
  for (let run = 0; run < o.runs; run++) {
    const batch = make(o.txns);
    const t0 = performance.now();
    for (const t of batch) tree.apply(t);
    const t1 = performance.now();
    tree.freeze();
    const t2 = performance.now();
    applyUs.push(((t1 - t0) * 1000) / o.txns);
    freezeMs.push(t2 - t1);
    o.log?.(
      `run ${run + 1}: ${applyUs.at(-1)!.toFixed(2)} µs per apply, freeze ${freezeMs.at(-1)!.toFixed(1)} ms`,
    );
  }
  return {
    fill: o.fill,
    txns: o.txns,
    runs: o.runs,
    keys: o.keys,
    size: o.size,
    clients: o.clients,
    dedupWindow: DEFAULT_DEDUP_WINDOW,
    applyUs: spread(applyUs),
    freezeMs: spread(freezeMs),
    znodes: tree.size,
  };
}
