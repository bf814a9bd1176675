// Owns the small names and shapes several layers share: node ids, zxids, addresses, the names of
// targets, images and shapings, fault actions and marks, the final read's records. Imports nothing.

/** A server's name, e.g. "p3". */
export type NodeId = string;

/**
 * A Zab transaction id: (epoch, counter). Kept as two numbers rather than one 64-bit JS number,
 * which would silently lose precision past 2^53. Its arithmetic is in vocabulary/zxid.ts.
 */
export interface Zxid {
  readonly epoch: number;
  readonly counter: number;
}

/** Where something listens: a member's port, a relay route, a client endpoint. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** The systems under test (targets/). */
export const TARGET_NAMES = ['pole', 'zookeeper', 'etcd'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/**
 * An image a run's containers use: the node's (holders and agents run it too, and the POLE node's
 * members), or a target's own, named by the target (pole-bench-<target>).
 */
export type ContainerImage = 'node' | TargetName;

/** How delay gets between data centers (shaping/). */
export type ShapingName = 'relay' | 'netem' | 'none';

export interface ShapingChoice {
  readonly kind: ShapingName;
  /** Why this shaping runs (shown in the report). */
  readonly reason: string;
}

/** What a topology's scenario can do at a moment (topology/topology-schema.ts says to what). */
export const FAULT_ACTIONS = [
  'kill',
  'restart',
  'pause',
  'resume',
  'partition',
  'heal',
  'isolate',
  'link',
  'oneway',
  'bridge',
  'ring',
  'roll',
] as const;
export type FaultAction = (typeof FAULT_ACTIONS)[number];

/** A fault as a run carried it out (result.json's timeline and recovery cause, the charts). */
export interface FaultMark {
  /** Seconds from the load start. */
  readonly atS: number;
  readonly action: FaultAction;
  /**
   * What it hit ("leader" resolved to its name): a node, or nodes joined by "," (a minority); the
   * data centers cut off (partition); the ring order (ring); "all" (heal, roll); "a-b rtt N ms" (link).
   */
  readonly node: string;
  /** Its number in the schedule, where a later fault undoes it (`for`). */
  readonly ref?: number;
  /** The fault (by its ref) this one undoes: a heal of only that fault's cuts. */
  readonly undoes?: number;
  /** How long after its scheduled time it struck, ms, when 100 ms or more (it waited for an election, or the machine was late). */
  readonly lateMs?: number;
}

/** One acknowledged write, as the final read checks it (a target's checkAckedWrites). */
export interface AckedWrite {
  readonly path: string;
  readonly zxid: Zxid;
}

/** What the final read found. */
export interface CheckResult {
  /** Keys (paths, or a ZooKeeper or etcd slot) with acknowledged writes, each read on every member given. */
  readonly checked: number;
  /**
   * Acknowledged writes the read covered: those whose key it read on every member given (each
   * write counted once, however many share its key). The harness holds it to the agents' own count.
   */
  readonly writes: number;
  /** "key@node" of every key found missing or older than acknowledged on a member, in order found. */
  readonly lost: string[];
}

/** Where the final read looked: how many keys, on which members, and the members it could not read. */
export interface FinalRead {
  readonly keys: number;
  /** Acknowledged writes whose key was read (absent from files written before it was counted). */
  readonly writes?: number;
  readonly readOn: readonly string[];
  /** Members not running at the end (killed and not restarted): nothing of theirs was read. */
  readonly notRead: readonly string[];
}

/**
 * How many keys lost acknowledged writes: a key short on three members is one key, not three (each
 * such key lost at least one acknowledged write).
 */
export function lostKeyCount(lost: readonly string[]): number {
  return new Set(
    lost.map((x) => {
      const entry = x.split(' ')[0]!; // "key@node", then a reason in brackets
      return entry.slice(0, entry.lastIndexOf('@'));
    }),
  ).size;
}

/**
 * What a shaping's own threads have done so far (the relay's: its relay thread and its clock
 * thread), read at a window's start and end to give its cost per acknowledged write.
 */
export interface ShapingUsage {
  /** CPU ms of its threads; null where /proc cannot be read. */
  readonly cpuMs: number | null;
  /** Chunks relayed in both directions of every route: one per read from a source socket. */
  readonly chunks: number;
  /** Wake-ups of the relay thread's release scheduler and of its clock thread. */
  readonly wakes: number;
}

/**
 * One reading of the links by the relay's probe before the load (shaping/relay/relay-shaping.ts,
 * measurePairDelays): every ordered pair of data centers, and the undelayed route beside them.
 */
export interface PairReading {
  /** "a>b" → the median round trip through a route of that pair's delays, ms. */
  readonly rtts: Readonly<Record<string, number>>;
  /**
   * The median round trip through a route of the same relay with no delay, read over the same
   * span, ms: what the machine itself added to every pair's round trip then.
   */
  readonly undelayedMs: number;
  /**
   * "a>b" → how late the relay released that pair's chunks over the reading, by its own clock: the
   * mean lateness of each direction, added (a round trip's share), ms. A delayed chunk waits for
   * the relay's clock to wake its thread, which the undelayed route never does; on a busy machine
   * that came to 2-3 ms more than the undelayed route showed. Absent in older files.
   */
  readonly latenessMs?: Readonly<Record<string, number>>;
  /**
   * "a>b" → the mean of the same round trips, ms. The relay's lateness is a mean: the self-check
   * holds it against this less the configured RTT and the undelayed route's mean, so that the
   * relay's own account is read against the probe's clock. Absent in older files.
   */
  readonly meanRtts?: Readonly<Record<string, number>>;
  /** The undelayed route's mean round trip over the same span, ms. Absent in older files. */
  readonly undelayedMeanMs?: number;
}

/** Every reading taken, and which one the run keeps (the quietest; -1 when there were no pairs to read). */
export interface PairReadings {
  readonly readings: readonly PairReading[];
  readonly kept: number;
}
