// src/election/db/: the NewSQL paper's election on PostgreSQL: the round as a pure function (db-round.ts),
// its two tables (db-schema.ts), a participant driving it (db-participant.ts), and this backend.
//
// The db backend of `pole-bench election`: PostgreSQL (the harness's own, started in a temp dir and
// removed afterwards, or an existing one given as --database URL, where only a schema of our own
// is created and dropped), a schema per group, and a DbParticipant per process.
import pg from 'pg';
import type { ElectionBackend } from '../election-run.js';
import { startLocalPostgres } from '../postgres/local-postgres.js';
import { DbParticipant, type DbEndpoint } from './db-participant.js';
import type { DbTimers } from './db-round.js';
import { createSchema, dropSchema, readRoundMs, schemaName } from './db-schema.js';

export async function openDbBackend(o: {
  readonly runId: string;
  readonly timers: DbTimers;
  readonly databaseUrl?: string;
  /** Connections the harness's own server must take: every participant's, and some to spare. */
  readonly maxConnections?: number;
}): Promise<ElectionBackend> {
  const local =
    o.databaseUrl === undefined
      ? await startLocalPostgres({ maxConnections: o.maxConnections ?? 300 })
      : undefined;
  const endpoint: DbEndpoint = local
    ? { host: local.host, port: local.port, user: local.user, database: local.database }
    : endpointOf(o.databaseUrl as string);
  const admin = new pg.Client({
    ...endpoint,
    application_name: 'pole-bench election',
    query_timeout: 10_000,
  });
  admin.on('error', () => undefined);
  try {
    await admin.connect();
  } catch (err) {
    await local?.stop();
    throw new Error(
      `cannot reach the database at ${endpoint.host}:${endpoint.port}: ${(err as Error).message}`,
    );
  }
  const version = (await admin.query<{ v: string }>('SHOW server_version')).rows[0]?.v ?? '?';
  const schemas = new Map<string, string>();
  let current: string | undefined;
  return {
    name: 'db',
    describe: `PostgreSQL ${version} (${local ? "the harness's own, in a temp dir" : `at ${endpoint.host}:${endpoint.port}, schema of our own`}), READ COMMITTED, row locks on VARS`,
    address: { host: endpoint.host, port: endpoint.port },
    async prepare(group) {
      const schema = schemaName(`${o.runId}_${group}`);
      schemas.set(group, schema);
      current = schema;
      await createSchema(admin, schema, o.timers.roundMs);
    },
    participant(name, via, emit, phaseMs) {
      if (current === undefined) throw new Error('no group prepared');
      return new DbParticipant(name, {
        endpoint: { ...endpoint, host: via.host, port: via.port },
        schema: current,
        timers: o.timers,
        emit,
        phaseMs,
      });
    },
    async roundMs() {
      return current === undefined ? null : readRoundMs(admin, current);
    },
    async finish(group) {
      const schema = schemas.get(group);
      if (schema) await dropSchema(admin, schema);
      schemas.delete(group);
    },
    async close() {
      for (const schema of schemas.values()) await dropSchema(admin, schema).catch(() => undefined);
      await admin.end().catch(() => undefined);
      await local?.stop();
    },
  };
}

export function endpointOf(url: string): DbEndpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--database: not a URL: ${url} (expected postgres://user@host:port/database)`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new Error(`--database: expected a postgres:// URL, got ${u.protocol}`);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    database: decodeURIComponent(u.pathname.replace(/^\//, '') || 'postgres'),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
}
