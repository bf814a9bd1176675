// ZooKeeper's leader recipe (the "Leader Election" recipe of ZooKeeper's documentation, as
// Curator's LeaderLatch implements it) as one participant of `pole-bench election`: a session of
// its own, an ephemeral sequential znode under the group's root, and it leads once its znode has
// the smallest sequence number. Otherwise it watches the znode just before its own (not the root:
// one deletion wakes one participant, not all of them) and looks again when that one goes.
//
// "Its znode is the smallest" stays true for as long as its session lives (the znodes before it
// are gone for good, sequence numbers only grow), so what isLeader() must also know is that the
// session still lives; ZooKeeper does not tell a client that its session expired until the
// client hears from it again, which a partitioned or stalled client does not. Hence a local
// lease, see renew().
//
// A crash must look to ZooKeeper like a killed process (many participants share one OS process
// here): crash() drops the connection without closeSession, so the znode stays until the server
// expires the session, and nothing of the participant acts afterwards. A pause stalls its
// client (no pings, nothing received is handled) while its lease runs out on its own clock.
import { ZkClient, ZkError } from '../../targets/zookeeper/client/zk-client.js';
import type { WatcherEvent } from '../../targets/zookeeper/client/zk-protocol.js';
import { type ElectionEventSink, type Participant } from '../participant.js';
import { wallNowMs } from '../../util/wall-clock.js';

export interface ZkRecipeOptions {
  readonly host: string;
  readonly port: number;
  /** Asked for; the server bounds it to [2, 20] × its tickTime, and the lease uses what it granted. */
  readonly sessionTimeoutMs: number;
  /** The group's znode, e.g. /pb-election/<runId>/<group>; created with its ancestors if missing. */
  readonly root: string;
  /** Taken off the lease as a margin. Default 100 ms. */
  readonly muMs?: number;
  /** Deadline of each request; one that fails takes the participant out. Default 10 s. */
  readonly requestTimeoutMs?: number;
  readonly emit: ElectionEventSink;
}

/** The znodes' name prefix; ZooKeeper appends a 10-digit sequence number. */
const PREFIX = 'n_';
/** Watcher.Event.EventType.NodeDeleted, EventType.None and KeeperState.Expired. */
const NODE_DELETED = 2;
const EVENT_NONE = -1;
const STATE_EXPIRED = -112;
const STOP_BOUND_MS = 5_000;

export class ZkRecipeParticipant implements Participant {
  private zk: ZkClient | undefined;
  /** Its znode's full path, once created. */
  private znode: string | undefined;
  /** It saw its znode the smallest (true from then on, for as long as the session lives). */
  private smallest = false;
  /** A `lead` was emitted and its lease has not ended (no `lead-lost` since). */
  private leading = false;
  private leaseEnd = 0;
  private leaseTimer: NodeJS.Timeout | undefined;
  /** The predecessor whose deletion it waits for. */
  private watching: string | undefined;
  private checking = false;
  private again = false;
  private crashed = false;
  private stopped = false;
  /** Its session is over (lost, expired, or a request failed): it does not lead again. */
  private lost = false;
  private readonly mu: number;

  constructor(
    readonly name: string,
    private readonly o: ZkRecipeOptions,
  ) {
    this.mu = o.muMs ?? 100;
  }

  /** Its znode's name (n_0000000007) once it joined. */
  get id(): string | undefined {
    return this.znode === undefined ? undefined : basename(this.znode);
  }

  async start(): Promise<void> {
    let zk: ZkClient;
    try {
      zk = await ZkClient.connect(this.o.host, this.o.port, {
        sessionTimeoutMs: this.o.sessionTimeoutMs,
        requestTimeoutMs: this.o.requestTimeoutMs ?? 10_000,
        onWatch: (e) => this.onWatch(e),
        onDisconnect: (err) => this.fail(`session lost: ${err.message}`),
        onAcknowledged: () => this.renew(),
      });
    } catch (err) {
      this.fail(`connecting: ${(err as Error).message}`);
      throw err;
    }
    if (this.crashed) {
      zk.abandon();
      throw new Error(`${this.name} crashed before it joined`);
    }
    this.zk = zk;
    if (this.stopped) {
      await zk.close();
      throw new Error(`${this.name} stopped before it joined`);
    }
    try {
      await ensurePath(zk, this.o.root);
      const created = await zk.create(`${this.o.root}/${PREFIX}`, new Uint8Array(0), 'ephemeralSequential');
      if (!this.active) throw new Error(`${this.name} ${this.crashed ? 'crashed' : 'stopped'} while joining`);
      this.znode = created.value;
      this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'joined', id: basename(created.value) });
    } catch (err) {
      this.fail(`joining: ${(err as Error).message}`);
      throw err;
    }
    void this.check();
  }

  isLeader(): boolean {
    return this.active && this.smallest && wallNowMs() < this.leaseEnd;
  }

  crash(): void {
    if (this.crashed || this.stopped) return;
    this.crashed = true;
    clearTimeout(this.leaseTimer);
    this.leading = false;
    this.zk?.abandon();
    this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'crashed' });
  }

  pause(ms: number): void {
    if (!this.active) return;
    // The client holds everything that arrives and stops pinging; the participant has nothing else
    // that runs on its own but the lease's end, which is a time it announced beforehand (`until`)
    // and passes whether or not the process runs, so its `lead-lost` is stamped when it does.
    this.zk?.pause(ms);
    this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'paused', ms });
  }

  async stop(): Promise<void> {
    if (this.crashed || this.stopped) return;
    this.stopped = true;
    clearTimeout(this.leaseTimer);
    if (this.leading) {
      this.leading = false;
      this.o.emit({ t: wallNowMs(), participant: this.name, ev: 'lead-lost', why: 'stopped' });
    }
    const zk = this.zk;
    if (!zk) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      zk.close().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_BOUND_MS))),
    ]);
    clearTimeout(timer);
    // A close that did not finish in time: the server expires the session instead.
    zk.abandon();
  }

  private get active(): boolean {
    return !this.crashed && !this.stopped && !this.lost;
  }

  /** Looks at the group once more; runs one look at a time, and again if asked to meanwhile. */
  private async check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        await this.look();
      } while (this.again && this.active);
    } catch (err) {
      this.fail(`leader check: ${(err as Error).message}`);
    } finally {
      this.checking = false;
    }
  }

  private async look(): Promise<void> {
    const zk = this.zk;
    const me = this.znode;
    if (!this.active || !zk || me === undefined || this.smallest) return;
    const children = (await zk.getChildren(this.o.root)).filter((c) => c.startsWith(PREFIX));
    if (!this.active) return;
    children.sort((a, b) => sequenceOf(a) - sequenceOf(b));
    const i = children.indexOf(basename(me));
    if (i < 0) throw new Error(`its znode ${me} is gone`);
    if (i === 0) {
      this.smallest = true;
      this.watching = undefined;
      this.renew();
      return;
    }
    const predecessor = `${this.o.root}/${children[i - 1] as string}`;
    this.watching = predecessor;
    // Gone between the two reads: no deletion will be notified for it, so look again at once.
    if ((await zk.exists(predecessor, true)) === undefined) this.again = true;
  }

  private onWatch(e: WatcherEvent): void {
    if (!this.active) return;
    if (e.type === EVENT_NONE && e.state === STATE_EXPIRED) return this.fail('session expired');
    if (e.type === NODE_DELETED && e.path === this.watching) void this.check();
  }

  /**
   * The lease: it leads until S + T − mu, where S is when it sent the newest message (ping or
   * request) the server acknowledged and T the negotiated session timeout. Why that is safe: the
   * server restarts a session's timeout whenever a message of it arrives, which is no earlier
   * than it was sent, so the session cannot expire before S + T; only its expiry deletes this
   * znode, and only that deletion lets the next participant see itself smallest. So the
   * successor leads after S + T, and this participant's belief has ended by then.
   *
   * mu is the margin for what that argument leaves out. In an ensemble the session is expired by
   * ZooKeeper's leader, which hears of pings sent to a follower only when the follower answers
   * its next ping (every tickTime/2). The ping before S, sent T/3 earlier, keeps the session
   * alive until S + 2T/3 at least, by when the report of S (at most tickTime/2 late, and T is at
   * least 2 ticks) has arrived: that delay needs no margin while pings go out on time. mu covers
   * what stretches it further: a ping sent late by a busy event loop, a learner slow to report.
   *
   * Called when it first sees itself smallest and on every newer acknowledgement (a renewal:
   * another `lead`); an acknowledgement that arrives too late to extend the lease changes nothing.
   * One after the lease ran out may start a new one: its send time proves the session was alive
   * when the server got it, so the same argument holds from there.
   */
  private renew(): void {
    const zk = this.zk;
    if (!this.active || !this.smallest || !zk) return;
    const end = zk.acknowledgedSentAt + zk.sessionTimeoutMs - this.mu;
    const now = wallNowMs();
    if (end <= now || end <= this.leaseEnd) return;
    this.leaseEnd = end;
    this.leading = true;
    this.o.emit({ t: now, participant: this.name, ev: 'lead', until: end });
    clearTimeout(this.leaseTimer);
    this.leaseTimer = setTimeout(() => this.leaseCheck(), Math.ceil(end - now));
  }

  private leaseCheck(): void {
    if (!this.active || !this.leading) return;
    const left = this.leaseEnd - wallNowMs();
    if (left > 0) {
      this.leaseTimer = setTimeout(() => this.leaseCheck(), Math.ceil(left));
      return;
    }
    this.leading = false;
    const zk = this.zk;
    const silent = zk ? Math.round(wallNowMs() - zk.acknowledgedSentAt) : 0;
    this.o.emit({
      t: wallNowMs(),
      participant: this.name,
      ev: 'lead-lost',
      why: `lease ran out: nothing acknowledged of what it sent in the last ${silent} ms`,
    });
  }

  /**
   * Out for good: `lead-lost` if it led, an `error`, and its session closed so that its znode (if
   * the session still lives) does not hold up the participants behind it.
   */
  private fail(why: string): void {
    if (!this.active) return;
    this.lost = true;
    clearTimeout(this.leaseTimer);
    const t = wallNowMs();
    if (this.leading) {
      this.leading = false;
      this.o.emit({ t, participant: this.name, ev: 'lead-lost', why });
    }
    this.o.emit({ t, participant: this.name, ev: 'error', message: why });
    void this.zk?.close().catch(() => undefined);
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The sequence number ZooKeeper appended to a znode's name (its last 10 digits). */
function sequenceOf(name: string): number {
  return Number(name.slice(-10));
}

/** Creates `path` and its ancestors as persistent znodes, those that exist already left as they are. */
async function ensurePath(zk: ZkClient, path: string): Promise<void> {
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    try {
      await zk.create(`/${parts.slice(0, i).join('/')}`, new Uint8Array(0));
    } catch (err) {
      if (!(err instanceof ZkError && err.code === 'NODEEXISTS')) throw err;
    }
  }
}
