// Where this machine's ZooKeeper is: Debian 12's `zookeeper` package (3.8) with log4j 1.2 and its
// slf4j binding, run by a headless JRE. scripts/install-zookeeper.sh installs exactly these.
// POLE_BENCH_ZOOKEEPER_CLASSPATH and POLE_BENCH_JAVA override the paths (another layout, a test).
import { access } from 'node:fs/promises';

export interface ZkInstall {
  readonly java: string;
  readonly classpath: string;
}

export const DEBIAN_ZK_JARS = [
  '/usr/share/java/zookeeper.jar', // its manifest lists jute, netty, jetty, … (all from Debian)
  '/usr/share/java/slf4j-log4j12.jar', // libslf4j-java: without a binding, ZooKeeper logs nothing
  '/usr/share/java/log4j-1.2.jar', // liblog4j1.2-java
];

export const INSTALL_HINT =
  'run scripts/install-zookeeper.sh (Debian: zookeeper, liblog4j1.2-java, libslf4j-java, default-jre-headless)';

export async function findZookeeper(env: NodeJS.ProcessEnv = process.env): Promise<ZkInstall> {
  const java = env.POLE_BENCH_JAVA ?? '/usr/bin/java';
  const jars = env.POLE_BENCH_ZOOKEEPER_CLASSPATH?.split(':').filter(Boolean) ?? DEBIAN_ZK_JARS;
  const missing: string[] = [];
  for (const f of [java, ...jars]) await access(f).catch(() => missing.push(f));
  if (missing.length > 0)
    throw new Error(`ZooKeeper is not installed here (missing ${missing.join(', ')}): ${INSTALL_HINT}`);
  return { java, classpath: jars.join(':') };
}
