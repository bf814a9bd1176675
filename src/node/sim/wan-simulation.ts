// A deterministic wide-area run of the real node cores: nodes placed in data centers, FIFO links
// with the configured one-way delays (optionally jittered, never reordered), heartbeats measuring
// RTT_i over those links, clients writing at a given rate per server, and the leader killed at a
// chosen time. It answers "whom does this oracle elect in this set-up", from measurements taken the
// way a real node takes them, in milliseconds of CPU instead of minutes of wall time.
import type { CoreEvent, PeerMessage } from '../core/core-types.js';
import type { HeartbeatOptions } from '../core/measure/heartbeat-monitor.js';
import { NodeCore, type CoreTimers, type ResignOptions } from '../core/node-core.js';
import { createOracle } from '../core/oracles/registry.js';
import type { Member, NodeId, Score } from '../core/types.js';
import { Random } from '../../util/random.js';
import { EventQueue } from './event-queue.js';
import { MemoryStore } from './memory-store.js';

export interface WanNode extends Member {
  readonly datacenter: string;
}

export interface WanScenario {
  readonly nodes: readonly WanNode[];
  /** One-way delay (ms) from one node to another; called for nodes in different data centers too. */
  readonly oneWayMs: (from: WanNode, to: WanNode) => number;
  /** Jitter as a fraction of each delay (uniform ±); 0 for none. */
  readonly jitter?: number;
  readonly oracle: string;
  readonly initialLeader?: NodeId;
  readonly timers: CoreTimers;
  readonly heartbeat: HeartbeatOptions;
  readonly measurementWaitMs?: number;
  readonly resign?: ResignOptions;
  /** Client writes per second arriving at each server (evenly spaced). */
  readonly requestRates: ReadonlyMap<NodeId, number>;
  /** When the leader serving at that moment is killed; undefined for no kill. */
  readonly killLeaderAtMs?: number;
  readonly endMs: number;
  readonly seed?: number;
}

export interface WanElection {
  readonly epoch: number;
  readonly leader: NodeId;
  /** Virtual ms when the first node decided. */
  readonly at: number;
  /** The scores of every proposal seen, from the elected leader's own `elected` event. */
  readonly proposals: Readonly<Record<NodeId, Score>>;
}

export interface WanResult {
  /** Serving leader just before the kill (or at the end without a kill). */
  readonly before: NodeId | undefined;
  readonly killed: NodeId | undefined;
  /** Serving leader at the end. */
  readonly after: NodeId | undefined;
  readonly elections: readonly WanElection[];
  /** RTT_i of every node at the kill (or the end), ms. */
  readonly rttAtKill: ReadonlyMap<NodeId, ReadonlyMap<NodeId, number>>;
  readonly events: ReadonlyArray<{ at: number; node: NodeId; event: CoreEvent }>;
  readonly acked: number;
}

type WanEvent =
  | { kind: 'deliver'; from: NodeId; to: NodeId; msg: PeerMessage }
  | { kind: 'timer'; node: NodeId; token: number }
  | { kind: 'write'; node: NodeId }
  | { kind: 'kill' };

interface SimNode {
  readonly spec: WanNode;
  readonly store: MemoryStore;
  core: NodeCore | undefined;
  timerToken: number;
  timerAt: number | undefined;
}

export function runWanSimulation(s: WanScenario): WanResult {
  return new WanSimulation(s).run();
}

class WanSimulation {
  private readonly queue = new EventQueue<WanEvent>();
  private readonly nodes = new Map<NodeId, SimNode>();
  private readonly lastDeliver = new Map<string, number>();
  private readonly rng: Random;
  private readonly events: Array<{ at: number; node: NodeId; event: CoreEvent }> = [];
  private now = 0;
  private handleSeq = 0;
  private requestSeq = 0;
  private acked = 0;
  private before: NodeId | undefined;
  private killed: NodeId | undefined;
  private rttAtKill = new Map<NodeId, ReadonlyMap<NodeId, number>>();

  constructor(private readonly s: WanScenario) {
    this.rng = new Random(s.seed ?? 1);
    for (const spec of s.nodes) {
      this.nodes.set(spec.id, {
        spec,
        store: new MemoryStore(),
        core: undefined,
        timerToken: 0,
        timerAt: undefined,
      });
    }
  }

  run(): WanResult {
    const members: Member[] = this.s.nodes.map((n) => ({ id: n.id, sid: n.sid }));
    for (const node of this.nodes.values()) {
      node.core = new NodeCore(
        {
          self: { id: node.spec.id, sid: node.spec.sid },
          members,
          oracle: createOracle(this.s.oracle),
          ...(this.s.initialLeader !== undefined ? { initialLeader: this.s.initialLeader } : {}),
          timers: this.s.timers,
          snapshotEvery: 1_000_000,
          heartbeat: this.s.heartbeat,
          ...(this.s.measurementWaitMs !== undefined ? { measurementWaitMs: this.s.measurementWaitMs } : {}),
          ...(this.s.resign ? { resign: this.s.resign } : {}),
        },
        node.store.recover(),
      );
      node.core.start(0);
      this.drive(node);
    }
    // Every link comes up at once, as when a cluster is started together.
    for (const a of this.nodes.values())
      for (const b of this.nodes.values())
        if (a !== b) this.input(a, { type: 'connected', now: 0, peer: b.spec.id });
    for (const [id, rate] of this.s.requestRates) {
      // Evenly spaced, each server at its own phase, so rates are exact and ties stay ties.
      if (rate > 0) this.queue.push((1000 / rate) * this.rng.next(), { kind: 'write', node: id });
    }
    if (this.s.killLeaderAtMs !== undefined) this.queue.push(this.s.killLeaderAtMs, { kind: 'kill' });
    for (;;) {
      const next = this.queue.pop();
      if (!next || next.time > this.s.endMs) break;
      this.now = next.time;
      this.handle(next.item);
    }
    if (this.killed === undefined) this.snapshotRtts();
    const after = this.servingLeader();
    return {
      before: this.killed === undefined ? after : this.before,
      killed: this.killed,
      after,
      elections: this.elections(),
      rttAtKill: this.rttAtKill,
      events: this.events,
      acked: this.acked,
    };
  }

  private servingLeader(): NodeId | undefined {
    for (const [id, n] of this.nodes) if (n.core?.servingLeaderEpoch !== undefined) return id;
    return undefined;
  }

  private snapshotRtts(): void {
    for (const [id, n] of this.nodes) {
      const m = n.core?.measurements();
      if (m) this.rttAtKill.set(id, m.rttMs);
    }
  }

  private elections(): WanElection[] {
    const byEpoch = new Map<number, WanElection>();
    for (const { at, node, event } of this.events) {
      if (event.ev !== 'elected' || event.leader !== node) continue;
      const epoch = event.epoch as number;
      if (byEpoch.has(epoch)) continue;
      byEpoch.set(epoch, { epoch, leader: node, at, proposals: event.proposals as Record<NodeId, Score> });
    }
    return [...byEpoch.values()].sort((a, b) => a.epoch - b.epoch);
  }

  private handle(ev: WanEvent): void {
    switch (ev.kind) {
      case 'deliver': {
        const node = this.nodes.get(ev.to);
        if (!node?.core || !this.nodes.get(ev.from)?.core) return;
        this.input(node, { type: 'message', now: this.now, from: ev.from, msg: ev.msg });
        return;
      }
      case 'timer': {
        const node = this.nodes.get(ev.node);
        if (!node?.core || node.timerToken !== ev.token) return;
        node.timerAt = undefined;
        this.input(node, { type: 'tick', now: this.now });
        return;
      }
      case 'write': {
        const node = this.nodes.get(ev.node);
        const rate = this.s.requestRates.get(ev.node) ?? 0;
        if (!node?.core || rate <= 0) return;
        this.queue.push(this.now + 1000 / rate, ev);
        this.requestSeq += 1;
        this.input(node, {
          type: 'write',
          now: this.now,
          handle: ++this.handleSeq,
          clientId: `client-${ev.node}`,
          requestId: this.requestSeq,
          path: `/k${this.requestSeq % 64}`,
          data: new Uint8Array(16),
        });
        return;
      }
      case 'kill': {
        const leader = this.servingLeader();
        if (leader === undefined) return;
        this.snapshotRtts();
        this.before = leader;
        this.killed = leader;
        const node = this.nodes.get(leader)!;
        node.core = undefined;
        node.timerToken += 1;
        for (const other of this.nodes.values())
          if (other.core) this.input(other, { type: 'disconnected', now: this.now, peer: leader });
        return;
      }
    }
  }

  private input(node: SimNode, i: Parameters<NodeCore['step']>[0]): void {
    node.core?.step(i);
    this.drive(node);
  }

  private drive(node: SimNode): void {
    const core = node.core;
    if (!core) return;
    const r = core.ready();
    node.store.apply(r.persist);
    for (const m of [...r.heartbeats, ...r.sends]) this.transmit(node.spec, m.to, m.msg);
    for (const rep of r.replies) if (rep.ok) this.acked += 1;
    for (const event of r.events) this.events.push({ at: this.now, node: node.spec.id, event });
    const at = core.nextTimerAt();
    if (at !== node.timerAt) {
      node.timerToken += 1;
      node.timerAt = at;
      if (at !== undefined)
        this.queue.push(Math.max(at, this.now), {
          kind: 'timer',
          node: node.spec.id,
          token: node.timerToken,
        });
    }
  }

  private transmit(from: WanNode, to: NodeId, msg: PeerMessage): void {
    const target = this.nodes.get(to);
    if (!target?.core) return;
    const base = this.s.oneWayMs(from, target.spec);
    const j = this.s.jitter ?? 0;
    const delay = Math.max(0, base * (1 + (j > 0 ? (2 * this.rng.next() - 1) * j : 0)));
    const key = `${from.id}>${to}`;
    // FIFO per direction, like one TCP connection.
    const at = Math.max(this.now + delay, this.lastDeliver.get(key) ?? 0);
    this.lastDeliver.set(key, at);
    this.queue.push(at, { kind: 'deliver', from: from.id, to, msg });
  }
}
