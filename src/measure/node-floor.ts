// The node floor: what a write costs when the network adds nothing (disk, batching, processing,
// the client's own part), measured, so that the paper's model (forwarding RTT + θc, pure network)
// can be shown with and without it and never mixed with it. It is calibrated on the run's own
// members with every delay between data centers taken out, after the load (so the calibration's
// delay-free round trips never reach the RTTs a measured oracle elects by): writes at the run's
// rate go to every node in turn, and the mean latency of those the leader took itself and of those
// a follower forwarded are the two floors. A data center's floor is the mix of the two that its
// clients see: the share of its live servers that is the leader.
import type { NodeId } from '../node/core/types.js';
import { PoleClient } from '../node/net/client.js';
import type { Topology } from '../topology/topology.js';

export interface NodeFloor {
  /** How the floor was obtained, in words (shown in the report). */
  readonly method: string;
  /** Mean latency of a write sent to the leader itself, ms; null when not measured. */
  readonly leaderMs: number | null;
  /** Mean latency of a write sent to a follower (which forwards it), ms; null when not measured. */
  readonly followerMs: number | null;
  /** Writes the figures are means of (after the warm-up third). */
  readonly writes: number;
}

/** A data center's floor with `leader` leading and `alive` up: null where nothing was measured. */
export function floorOfDc(
  topology: Topology,
  floor: NodeFloor,
  dc: string,
  leader: NodeId,
  alive?: readonly NodeId[],
): number | null {
  const servers = topology.datacenters
    .find((d) => d.name === dc)
    ?.nodes.filter((n) => alive === undefined || alive.includes(n.id));
  if (!servers || servers.length === 0) return null;
  const leaderShare = servers.some((n) => n.id === leader) ? 1 / servers.length : 0;
  if (leaderShare > 0 && floor.leaderMs === null) return null;
  if (leaderShare < 1 && floor.followerMs === null) return null;
  return (floor.leaderMs ?? 0) * leaderShare + (floor.followerMs ?? 0) * (1 - leaderShare);
}

export interface CalibrateOptions {
  readonly leader: NodeId;
  /** Every node and where its clients connect. */
  readonly nodes: ReadonlyArray<{ readonly id: NodeId; readonly host: string; readonly port: number }>;
  /** Writes per second (the run's rate), bytes per write. */
  readonly rate: number;
  readonly size: number;
  readonly durationMs: number;
  readonly clientId: string;
}

/** Writes at `rate` to each node in turn for `durationMs`; the first third is warm-up. */
export async function calibrateFloor(o: CalibrateOptions): Promise<NodeFloor> {
  const clients = await Promise.all(
    o.nodes.map(async (n) => ({
      id: n.id,
      client: await PoleClient.connect(n.host, n.port, { requestTimeoutMs: 5_000 }),
    })),
  );
  try {
    const data = new Uint8Array(o.size);
    const gap = 1000 / Math.max(1, o.rate);
    const count = Math.max(3 * clients.length, Math.round(o.durationMs / gap));
    const atLeader: number[] = [];
    const viaFollower: number[] = [];
    const start = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 1; i <= count; i++) {
      const due = start + i * gap;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const target = clients[i % clients.length]!;
      pending.push(
        target.client.write(`/pb/floor/${i}`, data, { clientId: o.clientId, requestId: i }).then(() => {
          // The first third pays for connections and JIT warm-up: not the steady cost.
          if (i <= count / 3) return;
          // From the intended send time, like the agents' corrected latency.
          (target.id === o.leader ? atLeader : viaFollower).push(performance.now() - due);
        }),
      );
    }
    // Settle every write before judging: a rejection left pending would surface later unhandled.
    const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const mean = (xs: number[]): number | null =>
      xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    return {
      method:
        `calibrated after the load on the run's live members with every delay between data centers ` +
        `set to zero (the relay still in the path): ${count} writes of ${o.size} bytes at ${o.rate}/s, ` +
        `to each node in turn, by the harness's client`,
      leaderMs: mean(atLeader),
      followerMs: mean(viaFollower),
      writes: atLeader.length + viaFollower.length,
    };
  } finally {
    await Promise.allSettled(clients.map((c) => c.client.close()));
  }
}

/** What the report says when no floor could be measured. */
export function unmeasuredFloor(reason: string): NodeFloor {
  return { method: `not measured: ${reason}`, leaderMs: null, followerMs: null, writes: 0 };
}
