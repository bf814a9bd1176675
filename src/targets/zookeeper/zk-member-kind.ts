// What ZooKeeper's members are, before any is planned: light, since every command that lists the
// targets loads it (the plan, zk-members.ts, is loaded when a run plans them).
import { fileURLToPath } from 'node:url';
import type { MemberKind } from '../member-plan.js';
import { findZookeeper } from './zk-install.js';

/** ZooKeeper's customary ports. */
export const ZK_MEMBERS: MemberKind = {
  image: {
    // The source tree's folder, from the compiled module (dist/src/targets/zookeeper/): the package
    // ships it (package.json files).
    folder: fileURLToPath(new URL('../../../../src/targets/zookeeper/image/', import.meta.url)),
    what: "Debian's zookeeper and JRE packages; once per base",
  },
  ports: { client: 2181, quorum: 2888, election: 3888 },
  keptPorts: ['quorum', 'election'],
  // ZooKeeper reads no stdin; it has nothing to flush that fsync did not.
  stop: 'SIGTERM',
  // A JVM that has not bound its ports and started its election in this long has failed.
  startTimeoutMs: 60_000,
  // Debian's packages (a JRE and ZooKeeper's jars) are all it needs: no privilege.
  missingHere: () =>
    findZookeeper().then(
      () => undefined,
      (err: Error) => err.message,
    ),
  ownEtcHosts: false,
  keepsLog: true,
};
