// What some integration tests need from the machine besides Node: ZooKeeper (the zookeeper target
// and election backend), etcd (the etcd target) and PostgreSQL (the db election backend), found
// exactly as the harness finds them. Each is `false` when it is there, else the skip reason those
// tests give: what is missing and the command that installs it. `npm test`
// (scripts/test-prerequisites.js) installs each first where it can, so these skip only where it could not, and it says why.
// Only a missing install skips: one that is there but does not work fails its tests.
import { cannotRunHere } from '../../src/runtime/process/planned-processes.js';
import { findPostgres } from '../../src/election/postgres/local-postgres.js';
import { findEtcd } from '../../src/targets/etcd/etcd-install.js';
import { etcdTarget } from '../../src/targets/etcd/etcd-target.js';
import { findZookeeper } from '../../src/targets/zookeeper/zk-install.js';

/** false when ZooKeeper is installed here, else why its tests skip. */
export const zookeeperSkip: string | false = await findZookeeper().then(
  () => false,
  (e: Error) => e.message,
);

/** false when PostgreSQL is installed here, else why its tests skip. */
export const postgresSkip: string | false = await findPostgres().then(
  () => false,
  (e: Error) => e.message,
);

/**
 * false when etcd (and what runs it: unshare, setpriv) is installed here and this user can give its
 * members their own /etc/hosts (a mount namespace, inside a user namespace for an ordinary user),
 * else why its tests skip: the run's own probe, in the words a run refused with.
 */
export const etcdSkip: string | false = (await cannotRunHere(etcdTarget)) ?? false;

/** false when etcd is installed here, whether or not this user can run it, else why not. */
export const etcdMissing: string | false = await findEtcd().then(
  () => false,
  (e: Error) => e.message,
);
