// How a member on this machine gets an /etc/hosts of its own (a target whose members resolve
// their peers' names from it: etcd-members.ts says why etcd's do): a mount namespace of its own,
// where its hosts file is bind-mounted over the machine's, which stays untouched. Root makes one
// directly (`unshare --mount`); an ordinary user makes it inside a user namespace of its own where
// it is root (`unshare --user --map-root-user --mount`), which most kernels allow. Where neither
// works (a container without those privileges, a kernel that forbids unprivileged user
// namespaces) such a target cannot run as local processes here, and the run is refused before
// anything starts, saying so.
//
// Probed once per process by doing exactly what a member does: bind-mount a file over /etc/hosts
// in a new namespace and read it back. POLE_BENCH_UNSHARE overrides unshare's path (a test of a
// machine where no namespace can be made).
import { access, constants, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadExeca } from '../../image/docker-cli.js';

export interface OwnEtcHosts {
  readonly unshare: string;
  /** unshare's arguments before `--`. */
  readonly unshareArgs: readonly string[];
  /** In words, for the report and `doctor`. */
  readonly how: string;
}

export type EtcHostsProbe = { readonly ok: OwnEtcHosts } | { readonly problem: string };

const AS_ROOT = { unshareArgs: ['--mount'], how: 'a mount namespace (root)' };
const AS_USER = {
  unshareArgs: ['--user', '--map-root-user', '--mount'],
  how: 'a user namespace with a mount namespace (no root needed)',
};
/** A probe that has not answered in this long has failed (a machine under load still answers in ms). */
const PROBE_LIMIT_MS = 10_000;

let probed: Promise<EtcHostsProbe> | undefined;

/** How this user on this machine gives a member an /etc/hosts of its own, or why it cannot. */
export function ownEtcHosts(env: NodeJS.ProcessEnv = process.env): Promise<EtcHostsProbe> {
  probed ??= probe(env.POLE_BENCH_UNSHARE ?? '/usr/bin/unshare');
  return probed;
}

/**
 * The command line that runs `argv` with `hostsFile` as its /etc/hosts, under the probed way.
 * The member's own process replaces the shell (exec).
 */
export function withOwnEtcHosts(how: OwnEtcHosts, hostsFile: string, argv: readonly string[]): string[] {
  return [
    how.unshare,
    ...how.unshareArgs,
    '--',
    '/bin/sh',
    '-c',
    'mount --bind "$0" /etc/hosts && exec "$@"',
    hostsFile,
    ...argv,
  ];
}

async function probe(unshare: string): Promise<EtcHostsProbe> {
  try {
    await access(unshare, constants.X_OK);
  } catch {
    return {
      problem: `members that need an /etc/hosts of their own need unshare (${unshare} is missing): install util-linux`,
    };
  }
  const isRoot = process.getuid?.() === 0;
  const ways = isRoot ? [AS_ROOT, AS_USER] : [AS_USER];
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-hosts-probe-'));
  try {
    const hosts = join(dir, 'hosts');
    const marker = `127.0.0.1 pole-bench-probe-${process.pid}`;
    await writeFile(hosts, `${marker}\n`);
    const failures: string[] = [];
    const { execa } = await loadExeca();
    for (const way of ways) {
      const [file, ...args] = withOwnEtcHosts({ unshare, ...way }, hosts, ['cat', '/etc/hosts']);
      const r = await execa(file!, args, { reject: false, stdin: 'ignore', timeout: PROBE_LIMIT_MS });
      if (r.exitCode === 0 && r.stdout.includes(marker)) return { ok: { unshare, ...way } };
      const why = r.timedOut ? `no answer in ${PROBE_LIMIT_MS} ms` : r.stderr.trim() || `exit ${r.exitCode}`;
      failures.push(`unshare ${way.unshareArgs.join(' ')}: ${why}`);
    }
    const user = isRoot ? 'root' : `an ordinary user (uid ${process.getuid?.()})`;
    return {
      problem:
        `members need an /etc/hosts of their own, which takes a mount namespace, and ${user} cannot make one here ` +
        `(${failures.join('; ')}). Use --runtime docker (the target's image), or run where user namespaces are allowed ` +
        `(sysctl kernel.unprivileged_userns_clone=1; in a container, one started with --cap-add SYS_ADMIN or an unconfined seccomp profile)`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
