// How an etcd member gets an /etc/hosts of its own (etcd-members.ts says why it needs one): a
// mount namespace of its own, where its hosts file is bind-mounted over the machine's. Root makes
// one directly (`unshare --mount`); an ordinary user makes it inside a user namespace of its own
// where it is root (`unshare --user --map-root-user --mount`), which most kernels allow. Where
// neither works (a container without those privileges, a kernel that forbids unprivileged user
// namespaces) the etcd target cannot run as local processes here, and the run is refused before
// anything starts, saying so.
//
// Probed once per process by doing exactly what a member does: bind-mount a file over /etc/hosts
// in a new namespace and read it back.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadExeca } from '../../image/docker-cli.js';
import type { EtcdInstall } from './etcd-install.js';

export interface EtcdIsolation {
  /** unshare's arguments before `--`. */
  readonly unshareArgs: readonly string[];
  /** In words, for the report and `doctor`. */
  readonly how: string;
}

export type IsolationProbe = { readonly ok: EtcdIsolation } | { readonly problem: string };

const AS_ROOT: EtcdIsolation = { unshareArgs: ['--mount'], how: 'a mount namespace (root)' };
const AS_USER: EtcdIsolation = {
  unshareArgs: ['--user', '--map-root-user', '--mount'],
  how: 'a user namespace with a mount namespace (no root needed)',
};
/** A probe that has not answered in this long has failed (a machine under load still answers in ms). */
const PROBE_LIMIT_MS = 10_000;

let probed: Promise<IsolationProbe> | undefined;

/** How this user on this machine isolates an etcd member's /etc/hosts, or why it cannot. */
export function etcdIsolation(install: EtcdInstall): Promise<IsolationProbe> {
  probed ??= probeIsolation(install);
  return probed;
}

async function probeIsolation(install: EtcdInstall): Promise<IsolationProbe> {
  const isRoot = process.getuid?.() === 0;
  const ways = isRoot ? [AS_ROOT, AS_USER] : [AS_USER];
  const dir = await mkdtemp(join(tmpdir(), 'pole-bench-etcd-probe-'));
  try {
    const hosts = join(dir, 'hosts');
    const marker = `127.0.0.1 pole-bench-probe-${process.pid}`;
    await writeFile(hosts, `${marker}\n`);
    const failures: string[] = [];
    const { execa } = await loadExeca();
    for (const way of ways) {
      const r = await execa(
        install.unshare,
        [...way.unshareArgs, '--', '/bin/sh', '-c', 'mount --bind "$0" /etc/hosts && cat /etc/hosts', hosts],
        { reject: false, stdin: 'ignore', timeout: PROBE_LIMIT_MS },
      );
      if (r.exitCode === 0 && r.stdout.includes(marker)) return { ok: way };
      const why = r.timedOut ? `no answer in ${PROBE_LIMIT_MS} ms` : r.stderr.trim() || `exit ${r.exitCode}`;
      failures.push(`unshare ${way.unshareArgs.join(' ')}: ${why}`);
    }
    const user = isRoot ? 'root' : `an ordinary user (uid ${process.getuid?.()})`;
    return {
      problem:
        `etcd members need an /etc/hosts of their own, which takes a mount namespace, and ${user} cannot make one here ` +
        `(${failures.join('; ')}). Use --runtime docker (the etcd image), or run where user namespaces are allowed ` +
        `(sysctl kernel.unprivileged_userns_clone=1; in a container, one started with --cap-add SYS_ADMIN or an unconfined seccomp profile)`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
