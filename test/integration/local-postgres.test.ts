// The harness's own PostgreSQL (Debian's package, scripts/install-postgresql.sh): a throwaway
// cluster on a port of its own, the row locks the db election is built on (a FOR UPDATE waits for
// a FOR SHARE holder, FOR SHARE holders share), and nothing left behind, neither after stop() nor
// after a start that failed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { startLocalPostgres } from '../../src/election/postgres/local-postgres.js';
import { freePorts } from '../../src/util/free-port.js';
// Only a machine without PostgreSQL skips; anything else that keeps it from starting fails.
import { postgresSkip as missing } from '../support/prerequisites.js';
import { commandLines } from '../support/processes.js';

/** The running processes (pid and full command line) that mention `text`. */
function processesWith(text: string): string[] {
  return commandLines().filter((l) => l.includes(text));
}

const tempDirs = (): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith('pole-bench-pg-'));

async function until(cond: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('FOR UPDATE waits for a FOR SHARE holder until it commits; stop() leaves nothing', async (t) => {
  if (missing) {
    t.skip(missing);
    return;
  }
  const db = await startLocalPostgres();
  assert.equal(db.url, `postgresql://pb@127.0.0.1:${db.port}/pole_bench`);
  const clients: pg.Client[] = [];
  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: db.url, ssl: false });
    c.on('error', () => undefined);
    await c.connect();
    clients.push(c);
    // A lock that is never granted fails the test instead of hanging it.
    await c.query(`SET statement_timeout = '10s'`);
    return c;
  };
  try {
    const [a, b, c] = [await connect(), await connect(), await connect()];
    await a.query('CREATE TABLE vars (k integer PRIMARY KEY, v integer NOT NULL)');
    await a.query('INSERT INTO vars VALUES (1, 0)');
    const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

    await a.query('BEGIN');
    await a.query('SELECT v FROM vars WHERE k = 1 FOR SHARE');
    // Another FOR SHARE is granted at once beside it.
    await c.query('BEGIN');
    await c.query('SELECT v FROM vars WHERE k = 1 FOR SHARE');
    await c.query('COMMIT');

    await b.query('BEGIN');
    let grantedAt: number | undefined;
    const update = b.query<{ v: number }>('SELECT v FROM vars WHERE k = 1 FOR UPDATE').then((r) => {
      grantedAt = performance.now();
      return r;
    });
    // The server itself says b waits for a lock (not merely that b is slow).
    await until(
      async () =>
        (
          await c.query<{ w: string | null }>(
            'SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1',
            [bPid],
          )
        ).rows[0]?.w === 'Lock',
      5_000,
      'b waiting on a lock',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(grantedAt, undefined, 'FOR UPDATE was granted while a FOR SHARE was held');
    const committedAt = performance.now();
    await a.query('COMMIT');
    const r = await update;
    assert.ok(grantedAt !== undefined && grantedAt >= committedAt);
    assert.equal(r.rows[0]?.v, 0);
    await b.query('UPDATE vars SET v = 1 WHERE k = 1');
    await b.query('COMMIT');
    assert.equal((await a.query<{ v: number }>('SELECT v FROM vars WHERE k = 1')).rows[0]?.v, 1);
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await db.stop();
  }
  assert.deepEqual(processesWith(db.dataDir), []);
  assert.throws(() => process.kill(db.pid, 0), { code: 'ESRCH' });
  assert.equal(existsSync(dirname(db.dataDir)), false, `${dirname(db.dataDir)} is still there`);
  await db.stop(); // idempotent
});

test("a start on a port already taken fails within seconds with PostgreSQL's reason, leaving nothing", async (t) => {
  if (missing) {
    t.skip(missing);
    return;
  }
  const port = (await freePorts(1))[0]!;
  const holder = createServer((s) => s.destroy());
  await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r));
  const before = tempDirs();
  const t0 = performance.now();
  try {
    await assert.rejects(startLocalPostgres({ port }), (err: Error) => {
      assert.match(err.message, /could not bind IPv4 address "127\.0\.0\.1": Address already in use/);
      return true;
    });
  } finally {
    await new Promise((r) => holder.close(r));
  }
  const took = performance.now() - t0;
  assert.ok(took < 10_000, `the failed start took ${Math.round(took)} ms`);
  assert.deepEqual(
    tempDirs().filter((d) => !before.includes(d)),
    [],
  );
  assert.deepEqual(processesWith(`-p ${port} `), []);
});
