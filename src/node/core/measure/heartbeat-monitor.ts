// src/node/core/measure/: what the measured oracles score by: heartbeats on the peer links (RTT_i, F_i)
// and the rate of client requests a node receives (θr).
//
// RTT_i and F_i (paper, section 3.3), kept by a heartbeat to every connected peer each period; a
// heartbeat echoes the peer's previous one (see heartbeat-messages.ts), so one message per peer
// and period measures the round trip at both ends. Pure: the core feeds it the clock, link changes
// and heartbeat messages, and sends what it returns, so the simulator measures the same way a real
// node does.
//
// RTT_i[j] is the mean of the last `window` round trips to j. A peer that has not answered for
// `missLimit` periods (or whose link is down) is dropped: it leaves RTT_i and F_i, as the paper's
// N' leaves out suspected servers, until it answers again.
import type { NodeId, Score } from '../types.js';
import type { HeartbeatMessage } from './heartbeat-messages.js';
import { RequestRate } from './request-rate.js';

export interface HeartbeatOptions {
  /** Heartbeat period (the paper's default is 1000 ms). */
  readonly periodMs: number;
  /** Round trips kept per peer: RTT_i[j] is their mean. */
  readonly window: number;
  /** A peer silent for this many periods is dropped from RTT_i and F_i. */
  readonly missLimit: number;
  /** Time constant of θr's decaying average. */
  readonly rateWindowMs: number;
  /** Round trips a peer needs before its RTT counts towards being ready to score. */
  readonly minSamples: number;
}

export const DEFAULT_HEARTBEAT: HeartbeatOptions = {
  periodMs: 1000,
  window: 10,
  missLimit: 3,
  rateWindowMs: 5000,
  minSamples: 3,
};

interface PeerState {
  /** Ring buffer of round trips (ms). */
  readonly samples: number[];
  next: number;
  count: number;
  /** When the link came up, or the last answer: silence is measured from here. */
  lastHeard: number;
  rate: number | undefined;
  score: Score | undefined;
  /** The peer's latest heartbeat not echoed yet: its sentAt and when it arrived here. */
  unechoed: { sentAt: number; receivedAt: number } | undefined;
}

export interface HeartbeatSend {
  readonly to: NodeId;
  readonly msg: HeartbeatMessage;
}

/** What /status shows about one peer. */
export interface PeerMeasurement {
  readonly rttMs: number | undefined;
  readonly samples: number;
  readonly rate: number | undefined;
  readonly score: Score | undefined;
  readonly live: boolean;
}

export class HeartbeatMonitor {
  private readonly peers = new Map<NodeId, PeerState>();
  private readonly ownRate: RequestRate;
  private seq = 0;
  private nextBeat: number | undefined;

  constructor(
    private readonly self: NodeId,
    readonly opts: HeartbeatOptions,
  ) {
    if (!(opts.periodMs > 0)) throw new Error(`heartbeat period must be positive, got ${opts.periodMs}`);
    if (!(opts.window >= 1)) throw new Error(`heartbeat window must be at least 1, got ${opts.window}`);
    this.ownRate = new RequestRate(opts.rateWindowMs);
  }

  /** A link to `peer` came up: start measuring it afresh. */
  peerUp(peer: NodeId, now: number): void {
    this.peers.set(peer, {
      samples: new Array<number>(this.opts.window).fill(0),
      next: 0,
      count: 0,
      lastHeard: now,
      rate: undefined,
      score: undefined,
      unechoed: undefined,
    });
    // Measure a new peer at the next beat, which starts now if none is due.
    this.nextBeat ??= now;
  }

  /** The link to `peer` is down: it is not live, whatever it measured. */
  peerDown(peer: NodeId): void {
    this.peers.delete(peer);
  }

  /** A client request arrived at this node. */
  recordRequest(now: number): void {
    this.ownRate.record(now);
  }

  ownRequestRate(now: number): number {
    return this.ownRate.rate(now);
  }

  /** When tick() has heartbeats to send; undefined while no link is up. */
  nextAt(): number | undefined {
    return this.peers.size > 0 ? this.nextBeat : undefined;
  }

  /** Sends a heartbeat to every connected peer when one is due. `score`: this node's own. */
  tick(now: number, score: () => Score): HeartbeatSend[] {
    if (this.nextBeat === undefined || now < this.nextBeat || this.peers.size === 0) return [];
    // Keep the phase (no drift from late timers), but never queue up missed beats.
    const p = this.opts.periodMs;
    this.nextBeat = Math.max(this.nextBeat + p, now + p / 2);
    this.seq += 1;
    const base = {
      type: 'HEARTBEAT',
      seq: this.seq,
      sentAt: now,
      rate: this.ownRate.rate(now),
      score: score(),
    } as const;
    const out: HeartbeatSend[] = [];
    for (const [to, peer] of this.peers) {
      const u = peer.unechoed;
      peer.unechoed = undefined;
      out.push({ to, msg: u ? { ...base, echo: { sentAt: u.sentAt, heldMs: now - u.receivedAt } } : base });
    }
    return out;
  }

  /** Takes a peer's heartbeat: its rate and score, and a round trip from its echo. */
  onMessage(from: NodeId, msg: HeartbeatMessage, now: number): void {
    const peer = this.peers.get(from);
    if (!peer) return;
    peer.unechoed = { sentAt: msg.sentAt, receivedAt: now };
    peer.lastHeard = Math.max(peer.lastHeard, now);
    peer.rate = msg.rate;
    peer.score = msg.score.length > 0 ? msg.score : undefined;
    if (!msg.echo) return;
    const rtt = now - msg.echo.sentAt - msg.echo.heldMs;
    // The echo of a beat older than the drop limit (a stalled link) says nothing about the link now.
    if (rtt < 0 || now - msg.echo.sentAt > (this.opts.missLimit + 1) * this.opts.periodMs) return;
    peer.samples[peer.next] = rtt;
    peer.next = (peer.next + 1) % this.opts.window;
    peer.count += 1;
  }

  private isLive(peer: PeerState, now: number): boolean {
    return now - peer.lastHeard <= this.opts.missLimit * this.opts.periodMs;
  }

  private meanRtt(peer: PeerState): number | undefined {
    const n = Math.min(peer.count, this.opts.window);
    if (n === 0) return undefined;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += peer.samples[i] as number;
    return sum / n;
  }

  /** RTT_i: self at 0 and every live peer with at least one round trip. */
  rttMs(now: number): Map<NodeId, number> {
    const out = new Map<NodeId, number>([[this.self, 0]]);
    for (const [id, p] of this.peers) {
      const m = this.meanRtt(p);
      if (m !== undefined && this.isLive(p, now)) out.set(id, m);
    }
    return out;
  }

  /** F_i: θr of self and of every live peer that has told us its rate. */
  requestRates(now: number): Map<NodeId, number> {
    const out = new Map<NodeId, number>([[this.self, this.ownRate.rate(now)]]);
    for (const [id, p] of this.peers) if (p.rate !== undefined && this.isLive(p, now)) out.set(id, p.rate);
    return out;
  }

  /** Live peers' last reported scores (for resignation). */
  peerScores(now: number): Map<NodeId, Score> {
    const out = new Map<NodeId, Score>();
    for (const [id, p] of this.peers) if (p.score !== undefined && this.isLive(p, now)) out.set(id, p.score);
    return out;
  }

  /** Live peers measured at least minSamples times. */
  measuredPeers(now: number): number {
    let n = 0;
    for (const p of this.peers.values()) if (p.count >= this.opts.minSamples && this.isLive(p, now)) n += 1;
    return n;
  }

  /** Everything known about every peer, for /status. */
  describe(now: number): Record<NodeId, PeerMeasurement> {
    const out: Record<NodeId, PeerMeasurement> = {};
    for (const [id, p] of this.peers) {
      out[id] = {
        rttMs: this.meanRtt(p),
        samples: Math.min(p.count, this.opts.window),
        rate: p.rate,
        score: p.score,
        live: this.isLive(p, now),
      };
    }
    return out;
  }
}
