// `pole-bench election` end to end against real stores: the NewSQL paper's algorithm on the
// harness's own PostgreSQL and ZooKeeper's leader recipe on a real 3-server ensemble, 10 processes,
// the leader killed 3 times, a new leader each time and never two at once; a slow leader paused
// past its lease yielding before anybody else leads; and the database stopped mid-run failing the
// run (exit 3) with the reason, nobody leading without a committed round, nothing left running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ElectionResult } from '../../src/election/election-run.js';
import type { ElectionEvent } from '../../src/election/participant.js';

import { leadIntervals, leaderOverlaps } from '../../src/election/leader-overlaps.js';
import { DbParticipant } from '../../src/election/db/db-participant.js';
import { createSchema, dropSchema } from '../../src/election/db/db-schema.js';
import { startLocalPostgres } from '../../src/election/postgres/local-postgres.js';
import { postgresSkip, zookeeperSkip } from '../support/prerequisites.js';
import { assertRunExit, ROOT, RUN_JS, runCli } from '../support/run-cli.js';
import { wallNowMs } from '../../src/util/wall-clock.js';
import { processesUnder } from '../support/processes.js';

const LAN = join(ROOT, 'topologies', 'lan-5.yaml');

function checkGroup(r: ElectionResult): void {
  assert.deepEqual(r.errors, []);
  const g = r.sizes[0]!;
  assert.equal(g.processes, 10);
  assert.equal(g.kills, 3);
  assert.equal(g.leaderOverlaps, 0, JSON.stringify(g.overlaps));
  for (const k of g.killed) {
    assert.ok(k.next !== null && k.next !== k.participant, JSON.stringify(k));
    assert.ok(k.failoverMs !== null && k.failoverMs > 0 && k.failoverMs < 30_000, JSON.stringify(k));
  }
}

test('db: 10 processes on PostgreSQL, the leader killed 3 times, a new leader each time, no overlap, nothing left', async (t) => {
  if (postgresSkip) return t.skip(postgresSkip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-election-db-'));
  const tmp = await mkdtemp(join(tmpdir(), 'pole-bench-election-db-tmp-'));
  // PostgreSQL runs as the postgres user when the harness is root: it must be able to enter TMPDIR.
  await chmod(tmp, 0o711);
  try {
    const r = await runCli(
      [
        'election',
        LAN,
        '--backend',
        'db',
        '--processes',
        '10',
        '--kills',
        '3',
        '--round',
        '1s',
        '--seed',
        '3',
        '--out',
        out,
        '--json',
      ],
      { ...process.env, TMPDIR: tmp },
    );
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as ElectionResult;
    assert.equal(result.backend, 'db');
    checkGroup(result);
    // Tp did not move: nobody was evicted wrongly.
    assert.deepEqual(result.sizes[0]!.roundMs, { start: 1_000, end: 1_000 });
    // Within the algorithm's range: a kill just before the leader's next commit is noticed after
    // about Tp, one just after a commit after about 3 Tp (and a retry with the exclusive lock).
    for (const k of result.sizes[0]!.killed) assert.ok(k.failoverMs! < 6_000, JSON.stringify(k));
    await checkLeasesRespected(out);
    const report = await readFile(join(out, 'report.md'), 'utf8');
    assert.match(report, /Failover against the number of processes/);
    assert.match(report, /At no instant did two participants believe they led/);
    assert.deepEqual(processesUnder(tmp), [], 'PostgreSQL stopped');
    assert.deepEqual(await readdir(tmp), [], 'its data dir removed');
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});

test('zookeeper: the leader recipe with 10 processes, the leader killed 3 times, a new leader each time, no overlap', async (t) => {
  if (zookeeperSkip) return t.skip(zookeeperSkip);
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-election-zk-'));
  try {
    const r = await runCli([
      'election',
      LAN,
      '--backend',
      'zookeeper',
      '--processes',
      '10',
      '--kills',
      '3',
      '--tick',
      '500ms',
      '--session-timeout',
      '2s',
      '--seed',
      '3',
      '--out',
      out,
      '--json',
    ]);
    assertRunExit(r, 0);
    const result = JSON.parse(r.stdout) as ElectionResult;
    assert.equal(result.backend, 'zookeeper');
    checkGroup(result);
    // The successor takes over when the dead session expires: the 2 s timeout from the last time
    // the server heard from it, which was at most a third of it before the kill.
    for (const k of result.sizes[0]!.killed) assert.ok(k.failoverMs! >= 1_000, JSON.stringify(k));
    await checkLeasesRespected(out);
    assert.equal(result.sizes[0]!.roundMs, null);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('db: a slow leader paused past its lease stops believing it leads before anybody else does', async (t) => {
  if (postgresSkip) return t.skip(postgresSkip);
  const db = await startLocalPostgres({});
  const admin = new pg.Client({ host: db.host, port: db.port, user: db.user, database: db.database });
  await admin.connect();
  const schema = 'pole_bench_slow_leader';
  const timers = { roundMs: 500, maxMissed: 2, deltaMs: 50, muMs: 100 };
  const events: ElectionEvent[] = [];
  const ps: DbParticipant[] = [];
  try {
    await createSchema(admin, schema, timers.roundMs);
    for (const name of ['a', 'b', 'c']) {
      const p = new DbParticipant(name, {
        endpoint: { host: db.host, port: db.port, user: db.user, database: db.database },
        schema,
        timers,
        emit: (e) => events.push(e),
      });
      ps.push(p);
      await p.start();
    }
    const [a, b] = ps as [DbParticipant, DbParticipant];
    await waitUntil(() => a.isLeader(), 5_000);
    // Right after one of its rounds commits, a stalls for three leases' worth.
    await waitUntil(() => events.at(-1)?.participant === 'a' && events.at(-1)?.ev === 'lead', 5_000);
    const pausedAt = wallNowMs();
    a.pause(3 * 1_900);
    await waitUntil(() => b.isLeader(), 10_000);
    const iv = leadIntervals(events, wallNowMs());
    const aEnd = Math.max(...iv.filter((i) => i.participant === 'a').map((i) => i.to));
    const bStart = Math.min(...iv.filter((i) => i.participant === 'b').map((i) => i.from));
    assert.ok(aEnd <= pausedAt + 1_900, `a's lease ended ${aEnd - pausedAt} ms after the pause`);
    assert.ok(aEnd < bStart, `a believed it led until ${aEnd}, b from ${bStart}`);
    assert.equal(a.isLeader(), false, 'a knows its lease ran out, paused or not');
    assert.deepEqual(leaderOverlaps(iv), []);
    // Back from its stall, a finds itself evicted, rejoins with a new id, and the leader raises Tp by Δ.
    await waitUntil(
      () => events.some((e) => e.participant === 'a' && e.ev === 'joined' && e.id !== '1'),
      15_000,
    );
    await waitUntil(() => events.some((e) => e.ev === 'round-time' && e.ms === 550), 10_000);
    assert.deepEqual(leaderOverlaps(leadIntervals(events, wallNowMs())), []);
  } finally {
    await Promise.allSettled(ps.map((p) => p.stop()));
    await dropSchema(admin, schema).catch(() => undefined);
    await admin.end();
    await db.stop();
  }
});

test('db: the database stopped mid-run fails the run with exit 3 and the reason; nobody leads without a committed round; nothing left', async (t) => {
  if (postgresSkip) return t.skip(postgresSkip);
  const db = await startLocalPostgres({});
  const out = await mkdtemp(join(tmpdir(), 'pole-bench-election-down-'));
  let stoppedAt = 0;
  try {
    const url = `postgres://${db.user}@${db.host}:${db.port}/${db.database}`;
    const child = spawn(
      process.execPath,
      [
        RUN_JS,
        'election',
        LAN,
        '--backend',
        'db',
        '--database',
        url,
        '--processes',
        '10',
        '--kills',
        '3',
        '--round',
        '500ms',
        '--out',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const killed = new Promise<void>((resolve) => {
      const see = (b: Buffer): void => {
        output += b.toString();
        if (/kill 1\/3/.test(output)) resolve();
      };
      child.stdout.on('data', see);
      child.stderr.on('data', see);
    });
    await Promise.race([killed, exited]);
    // Stopping takes a moment (a commit in flight may still land): the clock starts once it is down.
    await db.stop();
    stoppedAt = wallNowMs();
    const code = await exited;
    assert.equal(code, 3, output);
    assert.match(output, /no new leader within|no leader before kill|cannot reach the database/);
    const events = (await readFile(join(out, 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ElectionEvent);
    assert.ok(
      events.some((e) => e.ev === 'error' && e.t > stoppedAt),
      'participants report the failed rounds',
    );
    assert.deepEqual(
      events.filter((e) => e.ev === 'lead' && e.t > stoppedAt),
      [],
      'no lead without a committed round',
    );
    assert.ok(
      leadIntervals(events, Infinity).every((i) => i.to <= stoppedAt + 2 * 500),
      'every lease ran out within Tp × Max_mhb of the database going away',
    );
  } finally {
    await db.stop();
    await rm(out, { recursive: true, force: true });
  }
});

/**
 * The paper's integrity argument: after a crash, nobody leads before the lease the dead leader last
 * announced has run out (its own belief ended at the crash; the store must not elect earlier).
 */
async function checkLeasesRespected(out: string): Promise<void> {
  const events = (await readFile(join(out, 'events.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ElectionEvent);
  const crashes = events.filter((e) => e.ev === 'crashed');
  assert.equal(crashes.length, 3);
  for (const c of crashes) {
    const until = Math.max(
      ...events.map((e) =>
        e.participant === c.participant && e.ev === 'lead' && e.t <= c.t ? (e.until ?? Infinity) : 0,
      ),
    );
    const next = events.find((e) => e.ev === 'lead' && e.t > c.t && e.participant !== c.participant);
    assert.ok(
      next && next.t >= until,
      `${c.participant}'s lease ran to ${until}; ${next?.participant} led at ${next?.t}`,
    );
  }
}

async function waitUntil(cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
