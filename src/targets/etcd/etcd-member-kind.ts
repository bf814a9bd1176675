// What etcd's members are, before any is planned: light, since every command that lists the
// targets loads it (the plan, etcd-plan.ts, is loaded when a run plans them).
import { fileURLToPath } from 'node:url';
import type { MemberKind } from '../member-plan.js';
import { findEtcd } from './etcd-install.js';

export const ETCD_MEMBERS: MemberKind = {
  image: {
    // The source tree's folder, from the compiled module (dist/src/targets/etcd/): the package
    // ships it (package.json files).
    folder: fileURLToPath(new URL('../../../../src/targets/etcd/image/', import.meta.url)),
    what: "Debian's etcd-server package; once per base",
  },
  ports: { client: 2379, peer: 2380 },
  keptPorts: ['peer'],
  stop: 'SIGTERM',
  // A member that has not joined its cluster and served clients in this long has failed.
  startTimeoutMs: 30_000,
  missingHere: () =>
    findEtcd().then(
      () => undefined,
      (err: Error) => err.message,
    ),
  ownEtcHosts: true,
  keepsLog: true,
};
