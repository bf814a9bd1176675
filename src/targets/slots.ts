// The load's logical paths on targets that keep one value per key (ZooKeeper's znodes, etcd's
// keys): a path `${dir}/${n}` (what the agents, the warm-up, the calibration and the benches
// write) maps to the slot `${dir}/s${n mod SLOTS}`, so that a long run rewrites a bounded set of
// keys instead of growing the store by one key per write, as an operator's benchmark would.

/** Slots per directory: an agent at 500 writes/s comes back to a slot every 2 s. */
export const SLOTS = 1000;

/** The slot of a logical path `${dir}/${n}`: `${dir}/s${n mod SLOTS}`. */
export function slotOf(path: string): string {
  const cut = path.lastIndexOf('/');
  const n = Number(path.slice(cut + 1));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a load path (dir/number): ${path}`);
  return `${path.slice(0, cut)}/s${n % SLOTS}`;
}
