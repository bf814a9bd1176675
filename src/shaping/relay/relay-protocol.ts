// What the relay's main-thread handle (delay-relay.ts) and its worker thread (relay-worker.ts) tell
// each other, and the routes and stats those messages carry: both import this, neither the other.
import type { LinkDelay } from './delay-distribution.js';

export interface RelayRoute {
  /** Unique within a relay. */
  readonly name: string;
  readonly target: { readonly host: string; readonly port: number };
  /** client → target. */
  readonly forward: LinkDelay;
  /** target → client. */
  readonly backward: LinkDelay;
  /** Port to listen on; 0 or absent = ephemeral. */
  readonly listenPort?: number;
  /** Address to listen on; the relay's own `host` when absent. */
  readonly listenHost?: string;
  /**
   * Only connections from this host (a name, looked up again whenever a connection comes from an
   * address not yet known, or an address) take this route. Routes that name their sources may
   * share one listen address and port: the relay tells their connections apart by the client's
   * address, so that one address of the relay can stand for a peer towards every member (the swarm
   * runtime's relay has one address; a target keeping its own port numbers needs that).
   */
  readonly acceptFrom?: string;
  /**
   * While the target refuses connections, keep the accepted client and dial again every 50 ms for
   * up to this long (0 or absent: reset the client at the first refusal). On a real network a
   * connect to a port nobody listens on yet fails at once and the client retries; through a relay
   * the client is already connected, and ZooKeeper's learner takes the reset that follows for a
   * leader that went away instead of retrying (see docs/zookeeper.md). Until the target accepts,
   * the client's bytes are not read, so none are lost between attempts.
   */
  readonly retryConnectMs?: number;
}

export interface DirectionStats {
  readonly bytes: number;
  /** Chunks released (one per read from the source socket). */
  readonly chunks: number;
  /** Mean and max of (actual release − intended release), ms. */
  readonly latenessMeanMs: number;
  readonly latenessMaxMs: number;
  /** Bytes held in the delay queues right now. */
  readonly queuedBytes: number;
  /** Times the source socket was paused because the direction held too much. */
  readonly pauses: number;
}

export interface RouteStats {
  readonly name: string;
  readonly port: number;
  readonly target: { readonly host: string; readonly port: number };
  /** Connections accepted since the start. */
  readonly connections: number;
  readonly activeConnections: number;
  /** Connections torn down by an error or a reset on either side. */
  readonly resets: number;
  readonly forward: DirectionStats;
  readonly backward: DirectionStats;
}

export interface RelayStats {
  readonly routes: RouteStats[];
  readonly worker: {
    readonly uptimeMs: number;
    /** CPU time of the relay thread since it started (Linux /proc), ms; null elsewhere. */
    readonly cpuMs: number | null;
    /** CPU time of its clock thread, ms; null elsewhere. */
    readonly clockCpuMs: number | null;
    /** Wake-ups of the release scheduler. */
    readonly wakes: number;
    /** Wake-ups of the clock thread (each return from one of its waits). */
    readonly clockWakes: number;
    /** Time spent asleep (a futex wait, no CPU) before a release; it never spins, ms. */
    readonly napMs: number;
    /** How early the clock thread currently wakes the relay thread, ms (adapts to the machine). */
    readonly leadMs: number;
    /** Estimated wake-up time of the idle relay thread, taken off arrival times, ms. */
    readonly wakeLatencyMs: number;
    /** Whether both relay threads got the requested nice value. */
    readonly niceSet: boolean;
    /** Connections closed at once because no route of their shared listener named their source. */
    readonly unclaimed: number;
  };
}

/** New delays for a route: its open connections and the ones it accepts from now on. */
export interface RouteDelayChange {
  readonly name: string;
  readonly forward: LinkDelay;
  readonly backward: LinkDelay;
}

/** Which way of a route a cut holds: forward is what the dialler sends, backward its answers. */
export type RouteDirection = 'forward' | 'backward' | 'both';

export type RelayRequest =
  | { readonly id: number; readonly op: 'add'; readonly routes: readonly RelayRoute[] }
  | { readonly id: number; readonly op: 'change'; readonly changes: readonly RouteDelayChange[] }
  | { readonly id: number; readonly op: 'stats' }
  | {
      readonly id: number;
      readonly op: 'block';
      readonly names: readonly string[];
      readonly blocked: boolean;
      readonly direction: RouteDirection;
    }
  | { readonly id: number; readonly op: 'stall'; readonly ms: number }
  | { readonly id: number; readonly op: 'close' };

export type RelayReply =
  | {
      readonly id: number;
      readonly ok: true;
      readonly ports?: Record<string, number>;
      readonly stats?: RelayStats;
    }
  | { readonly id: number; readonly ok: false; readonly error: string };

export interface RelayWorkerInit {
  readonly role: 'relay';
  readonly seed: number;
  readonly host: string;
  /** Nice value for the relay and clock threads; null leaves them at the process's. */
  readonly nice: number | null;
}
