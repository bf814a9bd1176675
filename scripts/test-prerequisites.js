#!/usr/bin/env node
// Before the integration tests: make sure what some of them need besides Node is installed,
// ZooKeeper (the zookeeper target and election backend), etcd (the etcd target), PostgreSQL (the
// db election backend) and libfaketime (the clock-offset test's shifted clock), so that `npm test` on a fresh Debian 12
// machine needs no step of its own.
//
// Each is looked for exactly as the harness (or the test) looks for it (findZookeeper, findEtcd,
// findPostgres, findLibfaketime in dist/). One that is missing is installed with the project's own
// script (scripts/install-zookeeper.sh, scripts/install-etcd.sh, scripts/install-postgresql.sh,
// scripts/install-libfaketime.sh: Debian's packages) when that can work: as root, with apt-get,
// within POLE_BENCH_TEST_INSTALL_TIMEOUT seconds (default 600). Otherwise, or when the install
// fails, the tests that need it skip, each saying why (test/support/prerequisites.ts), and this
// prints one line saying what is skipped, why, and the command that would run them.
//
//   POLE_BENCH_TEST_INSTALL=0   never install; only say what is missing
//
// scripts/run-tests.js calls ensureTestPrerequisites() before the integration tests;
// `node scripts/test-prerequisites.js` does the same on its own (after a build).
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const fromDist = (path) => import(new URL(`../dist/src/${path}`, import.meta.url).href);
const fromDistTest = (path) => import(new URL(`../dist/test/${path}`, import.meta.url).href);
const say = (line) => console.log(`test prerequisites: ${line}`);

const PREREQUISITES = [
  {
    name: 'ZooKeeper',
    tests: 'the tests that need ZooKeeper (--target zookeeper, election --backend zookeeper)',
    script: 'scripts/install-zookeeper.sh',
    find: async () => {
      const z = await (await fromDist('targets/zookeeper/zk-install.js')).findZookeeper();
      return `${z.java}, ${z.classpath.split(':')[0]}`;
    },
    elsewhere: 'install ZooKeeper 3.8 and a JRE, and set POLE_BENCH_JAVA and POLE_BENCH_ZOOKEEPER_CLASSPATH',
    overrides: ['POLE_BENCH_JAVA', 'POLE_BENCH_ZOOKEEPER_CLASSPATH'],
  },
  {
    name: 'etcd',
    tests: 'the tests that need etcd (--target etcd)',
    script: 'scripts/install-etcd.sh',
    find: async () => (await (await fromDist('targets/etcd/etcd-install.js')).findEtcd()).etcd,
    elsewhere: 'install etcd 3.4 and set POLE_BENCH_ETCD to its binary',
    overrides: ['POLE_BENCH_ETCD'],
  },
  {
    name: 'PostgreSQL',
    tests: 'the tests that need PostgreSQL (election --backend db, the local PostgreSQL)',
    script: 'scripts/install-postgresql.sh',
    find: async () => (await (await fromDist('election/postgres/local-postgres.js')).findPostgres()).bindir,
    elsewhere: 'install PostgreSQL and set POLE_BENCH_PG_BINDIR to the directory of its initdb and postgres',
    overrides: ['POLE_BENCH_PG_BINDIR'],
  },
  {
    name: 'libfaketime',
    tests: 'the test that measures a shifted clock (clock-offset)',
    script: 'scripts/install-libfaketime.sh',
    find: async () => (await fromDistTest('support/faketime.js')).findLibfaketime(),
    elsewhere: 'install libfaketime and set POLE_BENCH_LIBFAKETIME to its libfaketime.so.1',
    overrides: ['POLE_BENCH_LIBFAKETIME'],
  },
];

/** Whether `command` is an executable on PATH. */
function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Why the install scripts cannot be run here, or null when they can. */
function cannotInstall(env) {
  if (env.POLE_BENCH_TEST_INSTALL === '0') return 'installing is turned off (POLE_BENCH_TEST_INSTALL=0)';
  if (!onPath('apt-get') || !onPath('dpkg-query'))
    return "there is no apt-get here (the install scripts take Debian's packages)";
  if (process.getuid?.() !== 0)
    return `this is not root (uid ${process.getuid?.()}), and installing needs root`;
  return null;
}

/**
 * Runs an install script in a process group of its own, so that a timeout (or Ctrl-C here) ends
 * apt-get and dpkg as well, not only the shell. Resolves with how it ended.
 */
function runInstall(script, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('sh', [join(ROOT, script)], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
      detached: true,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let timedOut = false;
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
    }, timeoutMs);
    const onSignal = (signal) => {
      killGroup('SIGTERM');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const finish = (outcome) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve({ ...outcome, timedOut, seconds: Math.round((Date.now() - started) / 1000) });
    };
    child.once('error', (e) => finish({ error: e.message }));
    child.once('exit', (code, signal) => finish({ code, signal }));
  });
}

/**
 * Makes sure ZooKeeper, PostgreSQL and libfaketime are there, installing what is missing where it can.
 * Returns one line per prerequisite still missing (what its tests skip and why), already printed.
 */
export async function ensureTestPrerequisites(env = process.env) {
  const timeoutS =
    Number(env.POLE_BENCH_TEST_INSTALL_TIMEOUT) > 0 ? Number(env.POLE_BENCH_TEST_INSTALL_TIMEOUT) : 600;
  const skipped = [];
  for (const p of PREREQUISITES) {
    const found = await p.find().then(
      (where) => ({ where }),
      (e) => ({ missing: e.message }),
    );
    if (found.where) {
      say(`${p.name}: installed (${found.where})`);
      continue;
    }
    // Where the harness was told to look elsewhere, Debian's package would not be used.
    const override = p.overrides.find((v) => env[v]);
    let why = override
      ? `${override}=${env[override]} points where it is not (so Debian's package is not installed for it)`
      : cannotInstall(env);
    let enable;
    if (override) {
      enable = `correct or unset ${override}, then npm test`;
    } else if (why === null) {
      say(`${p.name} is not installed here: installing it with ${p.script} (apt-get; at most ${timeoutS} s)`);
      const r = await runInstall(p.script, timeoutS * 1000);
      const again = await p.find().then(
        (where) => ({ where }),
        (e) => ({ missing: e.message }),
      );
      if (again.where) {
        say(`${p.name}: installed by ${p.script} in ${r.seconds} s (${again.where})`);
        continue;
      }
      why = r.timedOut
        ? `${p.script} did not finish within ${timeoutS} s and was stopped (dpkg may need \`dpkg --configure -a\`)`
        : r.error
          ? `${p.script} could not be started (${r.error})`
          : r.code !== 0
            ? `${p.script} failed (exit ${r.code ?? r.signal}; its output is above)`
            : `${p.script} exited 0, yet: ${again.missing}`;
      enable = `${p.script}, once it works here, then npm test`;
    } else if (why.startsWith('there is no apt-get')) {
      enable = `${p.elsewhere}, then npm test`;
    } else if (why.startsWith('installing is turned off')) {
      enable = `${p.script}, then npm test`;
    } else {
      enable = `${p.script} (it uses sudo), then npm test`;
    }
    const line = `SKIPPING ${p.tests}: ${p.name} is not installed here and ${why}. To run them: ${enable}`;
    say(line);
    skipped.push(line);
  }
  return skipped;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await ensureTestPrerequisites();
}
