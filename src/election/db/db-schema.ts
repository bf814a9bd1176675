// The two tables of the NewSQL paper's election in PostgreSQL, in a schema of their own per run so
// that a shared server (--database URL) is touched nowhere else: VARS, one row (max id, Tp, evict
// flag), and DESCRIPTORS, one row per live process (id, counter, address).
//
// The paper used MySQL Cluster (NDB) under READ COMMITTED with row locks; PostgreSQL's default
// isolation is READ COMMITTED too, and `SELECT … FOR SHARE` / `FOR UPDATE` on the VARS row give the
// shared and exclusive locks of Algorithm 1 (a FOR SHARE waits for a FOR UPDATE holder and the
// other way round; FOR SHARE holders share). Descriptors are read without locks, each statement
// seeing what was committed when it started, as in NDB's read committed.
import type pg from 'pg';
import type { DbWrite, DescriptorRow, LockMode, VarsRow } from './db-round.js';

/** A schema name of our own: letters, digits and "_", so it can be quoted plainly. */
export function schemaName(runId: string): string {
  const clean = runId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `pole_bench_${clean}`.slice(0, 63);
}

export async function createSchema(client: pg.Client, schema: string, roundMs: number): Promise<void> {
  const s = quote(schema);
  await client.query(`CREATE SCHEMA ${s}`);
  await client.query(
    `CREATE TABLE ${s}.vars (k integer PRIMARY KEY, max_id integer NOT NULL, round_ms integer NOT NULL, evict_flag boolean NOT NULL)`,
  );
  await client.query(
    `CREATE TABLE ${s}.descriptors (id integer PRIMARY KEY, counter integer NOT NULL, address text NOT NULL)`,
  );
  await client.query(`INSERT INTO ${s}.vars VALUES (1, 0, $1, false)`, [Math.round(roundMs)]);
}

export async function dropSchema(client: pg.Client, schema: string): Promise<void> {
  await client.query(`DROP SCHEMA IF EXISTS ${quote(schema)} CASCADE`);
}

/** Tp as it stands in VARS. */
export async function readRoundMs(client: pg.Client, schema: string): Promise<number> {
  const r = await client.query<{ round_ms: number }>(
    `SELECT round_ms FROM ${quote(schema)}.vars WHERE k = 1`,
  );
  const row = r.rows[0];
  if (!row) throw new Error(`no VARS row in schema ${schema}`);
  return row.round_ms;
}

/** Lines 5-10 of Algorithm 1: the lock on VARS, then every descriptor. Inside a transaction. */
export async function readRegisters(
  client: pg.Client,
  schema: string,
  lock: LockMode,
): Promise<{ vars: VarsRow; descriptors: DescriptorRow[] }> {
  const s = quote(schema);
  const v = await client.query<{ max_id: number; round_ms: number; evict_flag: boolean }>(
    `SELECT max_id, round_ms, evict_flag FROM ${s}.vars WHERE k = 1 ${lock === 'exclusive' ? 'FOR UPDATE' : 'FOR SHARE'}`,
  );
  const row = v.rows[0];
  if (!row) throw new Error(`no VARS row in schema ${schema}`);
  const d = await client.query<{ id: number; counter: number; address: string }>(
    `SELECT id, counter, address FROM ${s}.descriptors`,
  );
  return {
    vars: { maxId: row.max_id, roundMs: row.round_ms, evictFlag: row.evict_flag },
    descriptors: d.rows.map((r) => ({ id: r.id, counter: r.counter, address: r.address })),
  };
}

/** A round's writes, in order, inside its transaction. */
export async function applyWrites(
  client: pg.Client,
  schema: string,
  writes: readonly DbWrite[],
): Promise<void> {
  const s = quote(schema);
  for (const w of writes) {
    switch (w.op) {
      case 'update-counter':
        await client.query(`UPDATE ${s}.descriptors SET counter = $2 WHERE id = $1`, [w.id, w.counter]);
        break;
      case 'insert-descriptor':
        await client.query(`INSERT INTO ${s}.descriptors (id, counter, address) VALUES ($1, 0, $2)`, [
          w.id,
          w.address,
        ]);
        break;
      case 'set-max-id':
        await client.query(`UPDATE ${s}.vars SET max_id = $1 WHERE k = 1`, [w.maxId]);
        break;
      case 'set-evict-flag':
        await client.query(`UPDATE ${s}.vars SET evict_flag = true WHERE k = 1`);
        break;
      case 'set-round-time':
        await client.query(`UPDATE ${s}.vars SET round_ms = $1, evict_flag = false WHERE k = 1`, [
          Math.round(w.roundMs),
        ]);
        break;
      case 'delete-descriptors':
        await client.query(`DELETE FROM ${s}.descriptors WHERE id = ANY($1::integer[])`, [[...w.ids]]);
        break;
    }
  }
}

function quote(schema: string): string {
  if (!/^[a-z0-9_]+$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  return `"${schema}"`;
}
