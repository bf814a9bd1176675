// src/election/postgres/: the PostgreSQL server `election --backend db` starts for itself and removes
// afterwards.
//
// The harness's own PostgreSQL, for `election --backend db`: a throwaway cluster per run, made by
// initdb in a temp dir and served on a port of its own on loopback, so a run needs no database set
// up beforehand, shares none with anything else and leaves none behind. Debian's `postgresql`
// package (scripts/install-postgresql.sh) provides the binaries; its own cluster is never used.
//
// Nothing of it may outlive the harness, however the harness ends:
// - the server is started under `setpriv --pdeathsig KILL` (as the ZooKeeper members are): if the
//   harness dies, even by SIGKILL, the kernel kills the postmaster, and its backends, which watch
//   the postmaster, exit by themselves;
// - a process exit (a failed run, Ctrl-C through the run guard, process.exit) kills every server
//   still running and removes its directory, synchronously, from an 'exit' hook;
// - a directory left by a harness that was killed outright is removed by the next start.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync, rmSync } from 'node:fs';
import {
  access,
  chown,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  realpath,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePorts } from '../../util/free-port.js';

const execFileP = promisify(execFile);

export const POSTGRES_INSTALL_HINT = 'run scripts/install-postgresql.sh (Debian: postgresql)';

const HOST = '127.0.0.1';
/** The cluster's superuser, made by initdb: every participant connects as it. */
const USER = 'pb';
const DIR_PREFIX = 'pole-bench-pg-';
/** In each temp dir: the pid of the harness that made it, so a later start knows it is stale. */
const OWNER_FILE = 'owner.pid';
/** Lines of the server's output kept for error messages and logTail(). */
const TAIL_LINES = 50;
/** A fast shutdown (rolls back open transactions, one checkpoint) gets this long before SIGKILL. */
const STOP_GRACE_MS = 10_000;

export interface LocalPostgresOptions {
  /** The TCP port on 127.0.0.1 (default: a free one). */
  readonly port?: number;
  /** The database made for the run (default pole_bench). */
  readonly database?: string;
  /** Default 300: every participant holds a connection, and a run may have many. */
  readonly maxConnections?: number;
  /**
   * A transaction left idle this long is ended by the server (default 5 s): a paused participant
   * holding the VARS lock must not hold it for ever, as it would not in a real deployment.
   */
  readonly idleInTransactionTimeoutMs?: number;
  /** Further server settings, each `name=value` (given as `-c name=value`, after ours). */
  readonly extraConfig?: readonly string[];
  /** How long the server may take to accept connections (default 30 s). */
  readonly startTimeoutMs?: number;
}

export interface LocalPostgres {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** postgresql://pb@127.0.0.1:PORT/DATABASE (no password: see trust below). */
  readonly url: string;
  readonly dataDir: string;
  /** The postmaster's pid. */
  readonly pid: number;
  /** Stops the server (fast shutdown, then SIGKILL) and removes its directory. Idempotent. */
  stop(): Promise<void>;
  /** The server's last output lines. */
  logTail(): string;
}

export interface PgInstall {
  /** The directory holding initdb and postgres. */
  readonly bindir: string;
}

/**
 * Where this machine's PostgreSQL binaries are: POLE_BENCH_PG_BINDIR if set, else the newest
 * /usr/lib/postgresql/<version>/bin (Debian's layout, several versions side by side), else
 * `pg_config --bindir`.
 */
export async function findPostgres(env: NodeJS.ProcessEnv = process.env): Promise<PgInstall> {
  const candidates: string[] = [];
  if (env.POLE_BENCH_PG_BINDIR) candidates.push(env.POLE_BENCH_PG_BINDIR);
  else {
    const versions = await readdir('/usr/lib/postgresql').catch(() => [] as string[]);
    versions
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .forEach((v) => candidates.push(join('/usr/lib/postgresql', v, 'bin')));
    const fromConfig = await execFileP('pg_config', ['--bindir']).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    if (fromConfig && !candidates.includes(fromConfig)) candidates.push(fromConfig);
  }
  for (const dir of candidates) {
    const found = await Promise.all(
      ['initdb', 'postgres'].map((b) =>
        access(join(dir, b)).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (found.every(Boolean)) return { bindir: dir };
  }
  throw new Error(
    `PostgreSQL is not installed here (no initdb and postgres in ${candidates.join(', ') || '/usr/lib/postgresql/*/bin, and no pg_config'}): ${POSTGRES_INSTALL_HINT}`,
  );
}

/** Starts a throwaway PostgreSQL on loopback; resolves once it accepts connections to its database. */
export async function startLocalPostgres(opts: LocalPostgresOptions = {}): Promise<LocalPostgres> {
  const database = opts.database ?? 'pole_bench';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database))
    throw new Error(`database name ${JSON.stringify(database)}: use lower-case letters, digits and _`);
  for (const c of opts.extraConfig ?? [])
    if (!/^[a-z_.]+=/i.test(c)) throw new Error(`extraConfig ${JSON.stringify(c)}: expected name=value`);
  const { bindir } = await findPostgres();
  const runAs = await serverUser();
  await reapStale();
  // The real path: the server reports its data directory, and /proc its cwd, with links resolved.
  const root = await realpath(await mkdtemp(join(tmpdir(), DIR_PREFIX)));
  const server = new Server(root, runAs);
  try {
    await writeFile(join(root, OWNER_FILE), `${process.pid}\n`);
    await mkdir(server.sockDir, { mode: 0o700 });
    if (runAs) {
      await chown(root, runAs.uid, runAs.gid);
      await chown(server.sockDir, runAs.uid, runAs.gid);
    }
    // trust: no password to make and hand to every participant. The cluster lives for one run,
    // holds nothing but the run's election rows and listens on loopback only (its socket in a
    // directory only its user can enter), so only this machine could reach it at all. --no-sync: initdb's files need not
    // survive a crash of the machine, the cluster would not be used again anyway. --locale=C: the
    // same collation on every machine, and PostgreSQL's messages in English for the error texts.
    await server.run(join(bindir, 'initdb'), [
      '-D',
      server.dataDir,
      '-A',
      'trust',
      '-U',
      USER,
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    const port = opts.port ?? (await freePorts(1, HOST))[0]!;
    server.start(join(bindir, 'postgres'), [
      '-D',
      server.dataDir,
      '-p',
      String(port),
      '-k',
      server.sockDir,
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      `max_connections=${opts.maxConnections ?? 300}`,
      // Commits reach the disk, as in any real deployment: a round's latency includes its fsync.
      '-c',
      'fsync=on',
      '-c',
      `idle_in_transaction_session_timeout=${Math.round(opts.idleInTransactionTimeoutMs ?? 5_000)}`,
      ...(opts.extraConfig ?? []).flatMap((c) => ['-c', c]),
    ]);
    await server.waitReady(port, opts.startTimeoutMs ?? 30_000);
    const admin = connection(port, 'postgres', 5_000, 60_000);
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await closeQuietly(admin);
    }
    return {
      host: HOST,
      port,
      database,
      user: USER,
      url: `postgresql://${USER}@${HOST}:${port}/${database}`,
      dataDir: server.dataDir,
      pid: server.pid,
      stop: () => server.stop(),
      logTail: () => server.tail.join('\n'),
    };
  } catch (err) {
    await server.abandon();
    throw err;
  }
}

/** Kills every server this process started and still runs, and removes their directories, at once. */
export function stopAllLocalPostgresSync(): void {
  for (const s of live) s.killSync();
}

/** The servers of this process not stopped yet: the exit hook's list. */
const live = new Set<Server>();
let exitHook = false;

interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/**
 * PostgreSQL refuses to run as root (a superuser's SQL could otherwise run anything as root), so
 * as root initdb and the server run as Debian's `postgres` system user; otherwise as ourselves.
 */
async function serverUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number((await execFileP('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await execFileP('id', ['-g', 'postgres'])).stdout.trim());
    return { uid, gid };
  } catch {
    throw new Error(
      `PostgreSQL will not run as root, and this machine has no "postgres" user to run it as: ${POSTGRES_INSTALL_HINT} (the package makes the user)`,
    );
  }
}

class Server {
  readonly dataDir: string;
  readonly sockDir: string;
  readonly tail: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Resolves once the output is read to its end as well (backends may hold it a little longer). */
  private closed: Promise<void> = Promise.resolve();
  /** How the server ended, once it did. */
  private ended: string | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    readonly root: string,
    private readonly runAs: RunAs | undefined,
  ) {
    this.dataDir = join(root, 'data');
    this.sockDir = join(root, 'sock');
    live.add(this);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', stopAllLocalPostgresSync);
    }
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  /** `bin args` under setpriv: our server user when root, and killed with us whatever happens. */
  private command(bin: string, args: readonly string[]): string[] {
    const as = this.runAs ? ['--reuid=postgres', '--regid=postgres', '--init-groups'] : [];
    // setpriv sets the death signal after changing user (a change of user clears it).
    return [...as, '--pdeathsig', 'KILL', '--', bin, ...args];
  }

  // cwd: our temp dir, which the server user can enter (the harness's own cwd it may not).
  private get spawnOptions(): { cwd: string; env: NodeJS.ProcessEnv } {
    return { cwd: this.root, env: { ...process.env, LC_ALL: 'C' } };
  }

  /** Runs a command to its end (initdb); its output is the error if it fails. */
  async run(bin: string, args: readonly string[]): Promise<void> {
    try {
      await execFileP('setpriv', this.command(bin, args), {
        ...this.spawnOptions,
        timeout: 120_000,
        maxBuffer: 1 << 22,
      });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      const out = `${e.stderr ?? ''}\n${e.stdout ?? ''}`.trim().split('\n').slice(-TAIL_LINES).join(' | ');
      throw new Error(`${bin} failed: ${out || e.message}`);
    }
  }

  start(bin: string, args: readonly string[]): void {
    const child = spawn('setpriv', this.command(bin, args), {
      ...this.spawnOptions,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (line: string): void => {
      this.tail.push(line);
      if (this.tail.length > TAIL_LINES) this.tail.shift();
    };
    createInterface({ input: child.stdout! }).on('line', keep);
    createInterface({ input: child.stderr! }).on('line', keep);
    // An error event is a spawn that failed (no setpriv), with no exit to follow for sure.
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.ended ??= `exited (code ${code}, signal ${signal})`;
        resolve();
      });
      child.once('error', (err) => {
        this.ended ??= `could not be started (${err.message})`;
        resolve();
      });
    });
    this.closed = new Promise((resolve) => {
      child.once('close', () => resolve());
      child.once('error', () => resolve());
    });
  }

  private get running(): boolean {
    return this.child !== undefined && this.ended === undefined;
  }

  /**
   * Waits until the server answers a query on `port` and is the one in our data dir (not some
   * other server that holds the port), or rejects at once if it ends first, or at the deadline.
   */
  async waitReady(port: number, timeoutMs: number): Promise<void> {
    const output = (): string => this.tail.join(' | ') || '(none)';
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const poll = async (): Promise<'ready'> => {
      while (!done) {
        const c = connection(port, 'postgres', 1_000, 2_000);
        let connected = false;
        try {
          await c.connect();
          connected = true;
          const r = await c.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`);
          if (r.rows[0]?.d === this.dataDir) return 'ready';
          throw new Error(`another server answers on ${HOST}:${port} (its data is in ${r.rows[0]?.d})`);
        } catch (err) {
          if (err instanceof Error && err.message.startsWith('another server')) throw err;
        } finally {
          if (connected) await closeQuietly(c);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return 'ready';
    };
    try {
      const outcome = await Promise.race([
        poll(),
        this.exited.then(() => 'ended' as const),
        new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs))),
      ]);
      if (outcome === 'ended') {
        // Its last lines (why it ended) may still be on their way.
        await Promise.race([this.closed, new Promise((r) => setTimeout(r, 500))]);
        throw new Error(`PostgreSQL ${this.ended} before it accepted connections; its output: ${output()}`);
      }
      if (outcome === 'timeout')
        throw new Error(
          `PostgreSQL did not accept connections on ${HOST}:${port} within ${timeoutMs / 1000} s; its output: ${output()}`,
        );
    } finally {
      done = true;
      clearTimeout(timer);
    }
  }

  stop(): Promise<void> {
    return (this.stopping ??= this.stopOnce(true));
  }

  /** A start that failed: the server (if any) has nothing to keep, and may be stuck. */
  abandon(): Promise<void> {
    return (this.stopping ??= this.stopOnce(false));
  }

  private async stopOnce(gracefully: boolean): Promise<void> {
    if (this.running) {
      if (gracefully) {
        // SIGINT is PostgreSQL's fast shutdown: all `pg_ctl stop -m fast` does is send it to the
        // pid in postmaster.pid. Our own child we signal directly: no second process run as the
        // server's user, no pid file to trust.
        this.child!.kill('SIGINT');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, STOP_GRACE_MS)))]);
        clearTimeout(timer);
      }
      if (this.running) this.child!.kill('SIGKILL');
      await this.exited;
    }
    // A postmaster killed outright leaves its backends to notice by themselves: do not wait on it.
    for (let i = 0; i < 50; i++) {
      const strays = await pidsIn(this.dataDir);
      if (strays.length === 0) break;
      for (const pid of strays) killQuietly(pid);
      await new Promise((r) => setTimeout(r, 100));
    }
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
    live.delete(this);
  }

  /** For the exit hook: nothing asynchronous runs any more there. */
  killSync(): void {
    if (this.child?.pid !== undefined && this.ended === undefined) killQuietly(this.child.pid);
    for (const pid of pidsInSync(this.dataDir)) killQuietly(pid);
    try {
      rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A stray still writing into it at this instant: the next start removes the directory.
    }
    live.delete(this);
  }
}

function connection(
  port: number,
  database: string,
  connectTimeoutMs: number,
  queryTimeoutMs: number,
): pg.Client {
  // ssl: false whatever PGSSLMODE says: the server has no certificate, and this is loopback.
  const c = new pg.Client({
    host: HOST,
    port,
    user: USER,
    database,
    ssl: false,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: queryTimeoutMs,
  });
  c.on('error', () => undefined); // a server going away while idle is not the caller's error here
  return c;
}

/** Ends a connection; one whose server is gone may never say it ended, so not waited on long. */
async function closeQuietly(c: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([c.end().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 1_000)))]);
  clearTimeout(timer);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

// The postmaster and every backend run in the data directory (they chdir there at start): the
// processes whose cwd it is are all of this server's, whatever their command line says.
async function pidsIn(dataDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const p of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(p)) continue;
    const cwd = await readlink(`/proc/${p}/cwd`).catch(() => '');
    if (cwd === dataDir) pids.push(Number(p));
  }
  return pids;
}

function pidsInSync(dataDir: string): number[] {
  const pids: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const p of entries) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readlinkSync(`/proc/${p}/cwd`) === dataDir) pids.push(Number(p));
    } catch {
      // gone, or not ours to look at
    }
  }
  return pids;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp dirs of harnesses that died without their exit hook (SIGKILL): the owner is
 * gone and no process runs in the data dir (pdeathsig took the server with its harness).
 */
async function reapStale(): Promise<void> {
  const base = tmpdir();
  for (const name of await readdir(base).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(base, name);
    const owner = Number((await readFile(join(dir, OWNER_FILE), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    if ((await pidsIn(join(dir, 'data'))).length > 0) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
