// One ZooKeeper member's configuration, from the topology: zoo.cfg, myid and the log4j set-up.
//
// Timers: tickMs → tickTime, syncLimit and initLimit as they are (both in ticks, the same meaning
// as in the POLE node: a follower that hears nothing from its leader for syncLimit ticks gives up;
// a follower has initLimit ticks to connect and sync). electionTimeoutMs and heartbeatMs have no
// ZooKeeper counterpart (its election waits are fixed: finalizeWait 200 ms, notifications doubling
// to 60 s) and are not used.
//
// Addresses: each member's own `server.N` line is where it binds its quorum and election ports;
// every other line is where it dials that peer, which, across data centers, is a port of the
// delay relay. So the lines differ between members. That is safe with a static configuration
// (no dynamic file, reconfigEnabled=false): see docs/zookeeper.md for what ZooKeeper 3.8 does with
// the peers' addresses.
export interface ZkServerLine {
  readonly sid: number;
  readonly host: string;
  readonly quorumPort: number;
  readonly electionPort: number;
}

export interface ZooCfgInput {
  /** For the header comment. */
  readonly topologyName: string;
  readonly memberId: string;
  readonly sid: number;
  readonly dataDir: string;
  readonly clientHost: string;
  readonly clientPort: number;
  /** Every member, this one included, as this member dials (or, for itself, binds) it. */
  readonly servers: readonly ZkServerLine[];
  readonly timers: { readonly tickMs: number; readonly syncLimit: number; readonly initLimit: number };
  /** fsync every write to the transaction log (forceSync). */
  readonly fsync: boolean;
  /** Further `key=value` lines, last (ZooKeeper takes the last of a repeated key). */
  readonly extra?: readonly string[];
}

export function zooCfg(c: ZooCfgInput): string {
  if (!Number.isInteger(c.timers.tickMs) || c.timers.tickMs < 1)
    throw new Error(`ZooKeeper's tickTime is whole milliseconds: tickMs ${c.timers.tickMs} will not do`);
  if (!c.servers.some((s) => s.sid === c.sid))
    throw new Error(`no server line for ${c.memberId} (sid ${c.sid})`);
  const servers = [...c.servers].sort((a, b) => a.sid - b.sid);
  return [
    `# pole-bench: ${c.memberId} (myid ${c.sid}) of ${c.topologyName}`,
    `tickTime=${c.timers.tickMs}`,
    `initLimit=${c.timers.initLimit}`,
    `syncLimit=${c.timers.syncLimit}`,
    `dataDir=${c.dataDir}`,
    `clientPort=${c.clientPort}`,
    `clientPortAddress=${c.clientHost}`,
    // The load agents open one session per server and data center; no cap.
    `maxClientCnxns=0`,
    `forceSync=${c.fsync ? 'yes' : 'no'}`,
    // A static ensemble: no dynamic config file is written, and no member runs alone.
    `reconfigEnabled=false`,
    `standaloneEnabled=false`,
    // The AdminServer's port 8080 would collide between members; mntr over the client port suffices.
    `admin.enableServer=false`,
    `4lw.commands.whitelist=mntr,srvr,ruok`,
    `autopurge.purgeInterval=0`,
    ...servers.map((s) => `server.${s.sid}=${s.host}:${s.quorumPort}:${s.electionPort}`),
    ...(c.extra ?? []),
    '',
  ].join('\n');
}

/**
 * POLE_BENCH_ZK_CONFIG: extra zoo.cfg lines for every member, separated by `;` (tuning such as
 * `snapCount=10000;globalOutstandingLimit=5000`). Each must look like key=value.
 */
export function extraConfigLines(env: NodeJS.ProcessEnv = process.env): string[] {
  const text = env.POLE_BENCH_ZK_CONFIG;
  if (!text) return [];
  return text
    .split(';')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      if (!/^[A-Za-z0-9_.]+=.*$/.test(l)) throw new Error(`POLE_BENCH_ZK_CONFIG: '${l}' is not key=value`);
      return l;
    });
}

/**
 * log4j 1.2 (Debian's ZooKeeper logs through slf4j-log4j12): everything at INFO to stdout, one
 * line per event in a layout the translator reads (zk-log-events.ts): UTC time to the millisecond,
 * level, logger, message. The JVM runs with user.timezone=UTC.
 */
export const LOG4J_PROPERTIES = [
  'log4j.rootLogger=INFO,STDOUT',
  'log4j.appender.STDOUT=org.apache.log4j.ConsoleAppender',
  'log4j.appender.STDOUT.Target=System.out',
  'log4j.appender.STDOUT.layout=org.apache.log4j.PatternLayout',
  "log4j.appender.STDOUT.layout.ConversionPattern=%d{yyyy-MM-dd'T'HH:mm:ss.SSS'Z'} %p %c{1} %m%n",
  '',
].join('\n');
