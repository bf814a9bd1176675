// Where this machine's etcd is: Debian 12's `etcd-server` package (3.4), run in a mount namespace
// of its own (util-linux's unshare) under a parent-death signal (setpriv). scripts/install-etcd.sh
// installs exactly these. POLE_BENCH_ETCD overrides the binary's path (another build, a test), and
// POLE_BENCH_UNSHARE unshare's (a test of a machine where no namespace can be made).
import { access, constants } from 'node:fs/promises';

export interface EtcdInstall {
  readonly etcd: string;
  readonly unshare: string;
  readonly setpriv: string;
}

export const ETCD_INSTALL_HINT = 'run scripts/install-etcd.sh (Debian: etcd-server, util-linux)';

export async function findEtcd(env: NodeJS.ProcessEnv = process.env): Promise<EtcdInstall> {
  const found = {
    etcd: env.POLE_BENCH_ETCD ?? '/usr/bin/etcd',
    unshare: env.POLE_BENCH_UNSHARE ?? '/usr/bin/unshare',
    setpriv: '/usr/bin/setpriv',
  };
  const missing: string[] = [];
  for (const f of Object.values(found)) await access(f, constants.X_OK).catch(() => missing.push(f));
  if (missing.length > 0)
    throw new Error(`etcd is not installed here (missing ${missing.join(', ')}): ${ETCD_INSTALL_HINT}`);
  return found;
}
