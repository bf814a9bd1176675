// The backend a `pole-bench election` asked for, opened: the database (db) or a ZooKeeper
// ensemble (zookeeper), with the timers from the command line.
import type { Topology } from '../topology/topology.js';
import { openDbBackend } from './db/db-backend.js';
import type { DbTimers } from './db/db-round.js';
import type { BackendName, ElectionBackend } from './election-run.js';
import { openZkBackend } from './zookeeper/zk-backend.js';

export interface BackendFlags {
  readonly backend: BackendName;
  readonly timers: DbTimers;
  readonly sessionTimeoutMs: number;
  readonly tickMs: number;
  readonly databaseUrl?: string;
}

export function openBackend(
  bf: BackendFlags,
  o: { readonly runId: string; readonly topology: Topology; readonly maxProcesses: number },
): Promise<ElectionBackend> {
  return bf.backend === 'db'
    ? openDbBackend({
        runId: o.runId,
        timers: bf.timers,
        maxConnections: o.maxProcesses + 50,
        ...(bf.databaseUrl !== undefined ? { databaseUrl: bf.databaseUrl } : {}),
      })
    : openZkBackend({ runId: o.runId, tickMs: bf.tickMs, sessionTimeoutMs: bf.sessionTimeoutMs });
}

/** The settings lines of the report. */
export function backendSettings(bf: BackendFlags, seed: number): string[] {
  const t = bf.timers;
  return bf.backend === 'db'
    ? [
        `Timers: Tp ${t.roundMs} ms at the start, Max_mhb ${t.maxMissed}, Δ ${t.deltaMs} ms, μ ${t.muMs} ms (lease Tp × Max_mhb − μ).`,
        'Participants share the harness process, one database connection each; a kill destroys the connection at once (the database sees it end as with a killed process) and the participant does nothing more.',
        `Seed ${seed} (the kills’ timing).`,
      ]
    : [
        `ZooKeeper tickTime ${bf.tickMs} ms; the recipe's session timeout ${bf.sessionTimeoutMs} ms (a participant believes it leads only while its session is certainly alive: until the newest acknowledged ping was sent plus the timeout, less 100 ms).`,
        'Participants share the harness process, one ZooKeeper session each; a kill drops the connection without closing the session, which the ensemble expires after its timeout, as with a killed process.',
        `Seed ${seed} (the kills’ timing).`,
      ];
}
