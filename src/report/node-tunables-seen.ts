// What each POLE node's own process read of the glibc tunables its runtime set: the second reading
// of the report's "POLE nodes' glibc tunables" (environment.ts), which the self-check holds it to.
import { isEvent, type ClusterEvent } from '../vocabulary/node-events.js';

/**
 * The GLIBC_TUNABLES each member's own process read at its last start (`started` events that say;
 * a ZooKeeper or etcd member's do not); undefined where none said.
 */
export function nodeTunablesSeen(
  events: readonly ClusterEvent[],
): Readonly<Record<string, string | null>> | undefined {
  const seen: Record<string, string | null> = {};
  for (const e of events.filter(isEvent('started')))
    if (e.glibcTunables !== undefined) seen[e.node] = e.glibcTunables;
  return Object.keys(seen).length > 0 ? seen : undefined;
}
