// src/election/: `pole-bench election`, leader election through a store: the participants, the db backend
// (db/, on PostgreSQL: postgres/) and ZooKeeper's recipe (zookeeper/), the overlap check, the report.
//
// `pole-bench election`: a group of N participants electing a leader through a store (a SQL
// database, or ZooKeeper with its leader recipe), placed in the topology's data centers with the
// store in one of them and every connection between data centers through the delay relay. Once
// the group is stable the leader is crashed K times, a fresh participant joining after each; per
// kill, the time to the first participant whose isLeader() holds, and over the whole run, every
// instant two participants believed they led (from their own events). Repeated per group size.
import { DelayRelay, type RelayRoute } from '../shaping/relay/delay-relay.js';
import { dcLinkDelay } from '../shaping/relay/relay-shaping.js';
import type { Topology } from '../topology/topology.js';
import { spread, type MinMedianMax } from '../util/spread.js';
import { Random } from '../util/random.js';
import { failoverMs, leadIntervals, leaderOverlaps, type LeaderOverlap } from './leader-overlaps.js';
import { type ElectionEvent, type Participant } from './participant.js';
import { wallNowMs } from '../util/wall-clock.js';

export const ELECTION_SCHEMA_ID = 'pole-bench/election@1';
export const BACKENDS = ['db', 'zookeeper'] as const;
export type BackendName = (typeof BACKENDS)[number];

export interface Address {
  readonly host: string;
  readonly port: number;
}

/** What elects: the store, how a participant of it is made, and Tp as the store holds it. */
export interface ElectionBackend {
  readonly name: BackendName;
  /** What runs it, for the report ("PostgreSQL 15 (harness's own)", "ZooKeeper 3.8, 3 servers"). */
  readonly describe: string;
  /** Where the store listens; participants of other data centers reach it through the relay. */
  readonly address: Address;
  /** Before a group: a fresh schema or root of its own. */
  prepare(group: string): Promise<void>;
  /**
   * A participant reaching the store at `via`; `phaseMs` shifts its rounds (db) after its first, so
   * that a group joined in a second does not run its rounds in lockstep, as processes started at
   * different times would not.
   */
  participant(name: string, via: Address, emit: (e: ElectionEvent) => void, phaseMs: number): Participant;
  /** The round time Tp in force (db), null where the backend has none. */
  roundMs(): Promise<number | null>;
  /** After a group: its schema or root removed. */
  finish(group: string): Promise<void>;
  close(): Promise<void>;
}

export interface ElectionOptions {
  readonly topology: Topology;
  readonly backend: ElectionBackend;
  readonly sizes: readonly number[];
  readonly kills: number;
  /** The store's data center. */
  readonly storeDc: string;
  /** The time a failover may take before the run gives up on it (and fails). */
  readonly failoverBoundMs: number;
  /** Tp, to space the kills at random phases of a round. */
  readonly roundMs: number;
  readonly seed: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (line: string) => void;
}

export interface KillRecord {
  readonly participant: string;
  readonly datacenter: string;
  /** Seconds from the group's start. */
  readonly atS: number;
  /** The first participant that believed it led afterwards, and where it runs. */
  readonly next: string | null;
  readonly nextDatacenter: string | null;
  readonly failoverMs: number | null;
}

export interface GroupResult {
  readonly processes: number;
  readonly kills: number;
  readonly failoverMs: MinMedianMax | null;
  readonly killed: readonly KillRecord[];
  /** Tp at the start and the end of the group (db); null where the backend has no round time. */
  readonly roundMs: { readonly start: number; readonly end: number } | null;
  readonly leaderOverlaps: number;
  /** The first (up to 20) overlaps: two participants that believed they led at once, ms from the group start. */
  readonly overlaps: readonly {
    readonly a: string;
    readonly b: string;
    readonly fromMs: number;
    readonly ms: number;
  }[];
  /** Errors participants reported (a failed round, a lost session), counted. */
  readonly participantErrors: number;
  readonly durationS: number;
}

export interface ElectionResult {
  readonly schema: typeof ELECTION_SCHEMA_ID;
  readonly backend: BackendName;
  readonly store: string;
  readonly topology: string;
  readonly storeDatacenter: string;
  readonly datacenters: readonly string[];
  readonly sizes: readonly GroupResult[];
  readonly errors: readonly string[];
  readonly startedAt: string;
  readonly finishedAt: string;
}

export interface ElectionRunOutput {
  readonly result: ElectionResult;
  /** Every participant event of every group, for events.jsonl. */
  readonly events: readonly (ElectionEvent & { readonly group: number })[];
}

export async function runElection(o: ElectionOptions): Promise<ElectionRunOutput> {
  const t = o.topology;
  const dcs = t.datacenters.map((d) => d.name);
  const startedAt = new Date().toISOString();
  const errors: string[] = [];
  const groups: GroupResult[] = [];
  const all: (ElectionEvent & { group: number })[] = [];
  // One relay route per other data center to the store, with that pair's delays both ways.
  const routes: RelayRoute[] = dcs
    .filter((dc) => dc !== o.storeDc)
    .map((dc) => ({
      name: `${dc}>store`,
      target: o.backend.address,
      forward: dcLinkDelay(t, dc, o.storeDc),
      backward: dcLinkDelay(t, o.storeDc, dc),
    }));
  const relay = routes.length > 0 ? await DelayRelay.start({ routes, seed: o.seed }) : undefined;
  const via = (dc: string): Address =>
    dc === o.storeDc || !relay ? o.backend.address : { host: '127.0.0.1', port: relay.port(`${dc}>store`) };
  try {
    for (const [i, n] of o.sizes.entries()) {
      const events: ElectionEvent[] = [];
      try {
        groups.push(await runGroup(o, i, n, via, events));
      } catch (err) {
        errors.push(`${n} processes: ${(err as Error).message}`);
        if (o.signal?.aborted) break;
      } finally {
        all.push(...events.map((e) => ({ ...e, group: n })));
      }
      if (errors.length > 0) break;
    }
  } finally {
    await relay?.close();
  }
  return {
    result: {
      schema: ELECTION_SCHEMA_ID,
      backend: o.backend.name,
      store: o.backend.describe,
      topology: t.name,
      storeDatacenter: o.storeDc,
      datacenters: dcs,
      sizes: groups,
      errors,
      startedAt,
      finishedAt: new Date().toISOString(),
    },
    events: all,
  };
}

async function runGroup(
  o: ElectionOptions,
  index: number,
  n: number,
  via: (dc: string) => Address,
  events: ElectionEvent[],
): Promise<GroupResult> {
  const dcs = o.topology.datacenters.map((d) => d.name);
  const group = `g${index + 1}-${n}`;
  const random = new Random(o.seed * 1_000 + index);
  const progress = (line: string): void => o.onProgress?.(`[${n} processes] ${line}`);
  const emit = (e: ElectionEvent): void => {
    events.push(e);
  };
  await o.backend.prepare(group);
  const t0 = wallNowMs();
  const live: { p: Participant; dc: string }[] = [];
  let serial = 0;
  const spawn = (dc: string): { p: Participant; dc: string } => {
    serial++;
    const entry = {
      p: o.backend.participant(`${dc}-${serial}`, via(dc), emit, random.next() * o.roundMs),
      dc,
    };
    live.push(entry);
    return entry;
  };
  const killed: KillRecord[] = [];
  try {
    // Placed round-robin over the data centers, in the topology's order, and joined one after
    // another: ids (and the recipe's sequence numbers) follow that order whatever each data
    // center's delay to the store, so the leaders the kills take out alternate between data
    // centers (with the store in the second, the first leader sits in the far one).
    progress(`joining (store in ${o.storeDc})`);
    const joinBy = wallNowMs() + o.failoverBoundMs + n * 200;
    for (let i = 0; i < n; i++)
      await bounded(
        spawn(dcs[i % dcs.length]!).p.start(),
        Math.max(1, joinBy - wallNowMs()),
        `${n} participants did not all join`,
        o.signal,
      );
    await until(
      () => leaders(live).length === 1,
      o.failoverBoundMs,
      'no stable leader after joining',
      o.signal,
    );
    const roundStart = await o.backend.roundMs();
    for (let k = 1; k <= o.kills; k++) {
      // At a random phase of the round, so that kills do not line up with the leader's rounds.
      await sleep(o.roundMs * (1 + random.next()), o.signal);
      await until(
        () => leaders(live).length === 1,
        o.failoverBoundMs,
        `no leader before kill ${k}`,
        o.signal,
      );
      const victim = leaders(live)[0]!;
      const at = wallNowMs();
      victim.p.crash();
      live.splice(live.indexOf(victim), 1);
      progress(`kill ${k}/${o.kills}: ${victim.p.name}`);
      await until(
        () => leaders(live).length > 0,
        o.failoverBoundMs,
        `no new leader within ${o.failoverBoundMs / 1000} s of kill ${k} (${victim.p.name})`,
        o.signal,
      );
      const iv = leadIntervals(events, wallNowMs());
      const next = iv.find((x) => x.participant !== victim.p.name && x.from >= at)?.participant ?? null;
      killed.push({
        participant: victim.p.name,
        datacenter: victim.dc,
        atS: (at - t0) / 1000,
        next,
        nextDatacenter: next === null ? null : (live.find((e) => e.p.name === next)?.dc ?? null),
        failoverMs: failoverMs(iv, victim.p.name, at),
      });
      // A fresh process in the killed one's data center takes its place.
      const fresh = spawn(victim.dc);
      await bounded(fresh.p.start(), o.failoverBoundMs, `${fresh.p.name} did not join`, o.signal);
    }
    await sleep(o.roundMs, o.signal);
    const roundEnd = await o.backend.roundMs();
    const end = wallNowMs();
    const overlaps: LeaderOverlap[] = leaderOverlaps(leadIntervals(events, end));
    const times = killed.flatMap((x) => (x.failoverMs === null ? [] : [x.failoverMs]));
    return {
      processes: n,
      kills: killed.length,
      failoverMs: times.length > 0 ? spread(times) : null,
      killed,
      roundMs: roundStart !== null && roundEnd !== null ? { start: roundStart, end: roundEnd } : null,
      leaderOverlaps: overlaps.length,
      overlaps: overlaps
        .slice(0, 20)
        .map((x) => ({ a: x.a, b: x.b, fromMs: x.from - t0, ms: x.to - x.from })),
      participantErrors: events.filter((e) => e.ev === 'error').length,
      durationS: (end - t0) / 1000,
    };
  } finally {
    progress('stopping');
    await Promise.allSettled(live.map((e) => e.p.stop()));
    await o.backend.finish(group).catch(() => undefined);
  }
}

function leaders(live: readonly { p: Participant; dc: string }[]): { p: Participant; dc: string }[] {
  return live.filter((e) => e.p.isLeader());
}

/** Polls `cond` every 20 ms; rejects after `ms` with `what`, or when aborted. */
async function until(cond: () => boolean, ms: number, what: string, signal?: AbortSignal): Promise<void> {
  const deadline = wallNowMs() + ms;
  while (!cond()) {
    if (wallNowMs() > deadline) throw new Error(what);
    await sleep(20, signal);
  }
}

async function bounded<T>(p: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} within ${Math.round(ms / 1000)} s`)), ms);
        onAbort = () => reject(new Error('interrupted'));
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('interrupted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('interrupted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
