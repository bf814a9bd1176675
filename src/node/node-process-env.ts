/**
 * The environment a POLE node process starts with, whatever runs it (a local process, a
 * container, a swarm task).
 *
 * A peer learns that a node was killed only when the node's sockets close, and Linux closes them
 * after it has freed the dying process's memory (exit_mm before exit_files). Freeing 4 KiB pages
 * costs about 0.1 ms per MB on the VMs measured here, so a node holding 250 MB under load dies
 * some 30 ms late to its peers. Most of what a node holds under load is buffers Node gets from
 * glibc's malloc (its txns' and state's data, and what malloc keeps of those it freed): asked to
 * back its heaps with transparent huge pages
 * (`glibc.malloc.hugetlb=1`, glibc ≥ 2.35; the kernel's THP mode `madvise` or `always`), that
 * memory is freed in 2 MiB pages, and the same death reaches the peers 7-15 ms sooner
 * (docs/benchmarks.md: scripts/kill-close.js and `bench node`). Where glibc or the kernel lacks
 * it the tunable is ignored. A tunable the caller already set for this glibc option wins, so
 * `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` turns it off.
 */
const HUGETLB = 'glibc.malloc.hugetlb';
const NODE_HUGETLB = `${HUGETLB}=1`;

/** GLIBC_TUNABLES for a node: the inherited ones, with malloc's huge pages unless they say otherwise. */
export function nodeTunables(inherited: string | undefined): string {
  const given = (inherited ?? '').split(':').filter((t) => t !== '');
  if (given.some((t) => t.startsWith(`${HUGETLB}=`))) return given.join(':');
  return [...given, NODE_HUGETLB].join(':');
}

/** A node process's environment: the harness's own, with the node's tunables. */
export function nodeProcessEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GLIBC_TUNABLES: nodeTunables(env['GLIBC_TUNABLES']) };
}

/** The same for a node container ("NAME=value"), from the harness's GLIBC_TUNABLES. */
export function nodeContainerEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return [`GLIBC_TUNABLES=${nodeTunables(env['GLIBC_TUNABLES'])}`];
}
