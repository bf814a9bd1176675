// The end of the load: every agent's `done`, each awaited on its own. One agent that fails (it
// exited without `done`, said `error`, did not finish in time) costs that data center's data and
// nothing else: the others' latencies, acknowledged writes and traces are what the run measured,
// and the run keeps them, with the reason it lost the one.

export interface Drained<T> {
  /** By data center: the agents that finished. */
  readonly dones: Map<string, T>;
  /** By data center: why the agent's data was lost. */
  readonly lost: Map<string, string>;
}

/**
 * Awaits every agent's done together, each through `bound` (which gives up on one after a while),
 * and sorts them into the finished and the lost.
 */
export async function drainAgents<T>(
  agents: ReadonlyMap<string, { readonly done: Promise<T> }>,
  bound: (done: Promise<T>, dc: string) => Promise<T>,
): Promise<Drained<T>> {
  const names = [...agents.keys()];
  const settled = await Promise.allSettled(names.map((dc) => bound(agents.get(dc)!.done, dc)));
  const dones = new Map<string, T>();
  const lost = new Map<string, string>();
  settled.forEach((s, i) => {
    const dc = names[i]!;
    if (s.status === 'fulfilled') dones.set(dc, s.value);
    else lost.set(dc, s.reason instanceof Error ? s.reason.message : String(s.reason));
  });
  return { dones, lost };
}
