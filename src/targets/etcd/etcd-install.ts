// Where this machine's etcd is: Debian 12's `etcd-server` package (3.4). scripts/install-etcd.sh
// installs it. POLE_BENCH_ETCD overrides the binary's path (another build, a test).
import { access, constants } from 'node:fs/promises';

export interface EtcdInstall {
  readonly etcd: string;
}

export const ETCD_INSTALL_HINT = 'run scripts/install-etcd.sh (Debian: etcd-server, util-linux)';

export async function findEtcd(env: NodeJS.ProcessEnv = process.env): Promise<EtcdInstall> {
  const etcd = env.POLE_BENCH_ETCD ?? '/usr/bin/etcd';
  try {
    await access(etcd, constants.X_OK);
  } catch {
    throw new Error(`etcd is not installed here (missing ${etcd}): ${ETCD_INSTALL_HINT}`);
  }
  return { etcd };
}
