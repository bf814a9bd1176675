// The latency anatomy's joins and arithmetic, on made-up stamps (ms on a shared monotonic clock).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  anatomyOfWrite,
  breakdown,
  latencyAnatomy,
  type AnatomyContext,
  type NodeTraceEvent,
} from '../../src/report/latency-anatomy.js';

// Two data centers 5 ms apart one way; p1 in east, p3-p5 in west; p5 leads.
const DC: Record<string, string> = { p1: 'east', p2: 'east', p3: 'west', p4: 'west', p5: 'west' };
const ctx: AnatomyContext = {
  dcOf: (n) => DC[n]!,
  oneWayMs: (a, b) => (a === b ? 0 : 5),
  members: 5,
};

/** A write from east: sent at 1000, to contact p1, forwarded to p5; p3 and p4 ack, p4 second. */
function forwardedWrite(): NodeTraceEvent[] {
  return [
    {
      node: 'p1',
      client: 'c-east',
      req: 64,
      s: { clientRecv: 1000.2, forwardSent: 1000.3, commitRecv: 1018.9, replySent: 1019.1 },
    },
    {
      node: 'p5',
      client: 'c-east',
      req: 64,
      s: {
        leaderRecv: 1005.6,
        persistStart: 1005.7,
        durable: 1007.0,
        proposalSent: 1007.1,
        decided: 1013.5,
        commitSent: 1013.6,
      },
      // p3 acked first, p4 completed the quorum (leader + 2 of 5), p2 came later.
      acks: { p3: 1011.0, p4: 1013.4, p2: 1019.0 },
    },
    {
      node: 'p4',
      client: 'c-east',
      req: 64,
      s: { proposalRecv: 1007.3, persistStart: 1007.4, durable: 1013.0, ackSent: 1013.2, commitRecv: 1013.8 },
    },
    // p3's stamps exist too but are not on the critical path.
    {
      node: 'p3',
      client: 'c-east',
      req: 64,
      s: { proposalRecv: 1007.3, persistStart: 1007.4, durable: 1010.7, ackSent: 1010.8, commitRecv: 1013.8 },
    },
  ];
}

describe('latency anatomy', () => {
  it('cuts a forwarded write into consecutive parts that add up to what the agent measured', () => {
    const w = anatomyOfWrite(
      { dc: 'east', phase: 'before', sent: 1000.0, replied: 1019.4 },
      forwardedWrite(),
      ctx,
    );
    assert.ok(w);
    assert.equal(w.contact, 'p1');
    assert.equal(w.leader, 'p5');
    assert.equal(w.follower, 'p4', 'the follower whose ACK completed the quorum');
    const sum = w.parts.reduce((s, p) => s + p.ms, 0);
    assert.ok(Math.abs(sum - w.latencyMs) < 1e-9, `${sum} vs ${w.latencyMs}`);
    const part = (name: string) => w.parts.find((p) => p.name === name);
    assert.ok(Math.abs(part('forward hop')!.ms - 5.3) < 1e-9);
    assert.equal(part('forward hop')!.networkMs, 5);
    assert.equal(part('PROPOSAL hop')!.networkMs, 0, 'p5 → p4 stays in west');
    assert.ok(Math.abs(part('follower: log write + fsync')!.ms - 5.6) < 1e-9);
    assert.ok(Math.abs(part('COMMIT hop')!.ms - 5.3) < 1e-9);
    assert.equal(part('COMMIT hop')!.networkMs, 5);
  });

  it('has no forward or COMMIT hop for a write sent to the leader itself', () => {
    const nodes: NodeTraceEvent[] = [
      {
        node: 'p5',
        client: 'c-west',
        req: 128,
        s: {
          clientRecv: 2000.1,
          persistStart: 2000.2,
          durable: 2001.0,
          proposalSent: 2001.1,
          decided: 2003.0,
          replySent: 2003.2,
        },
        acks: { p3: 2002.5, p4: 2002.9 },
      },
      {
        node: 'p4',
        client: 'c-west',
        req: 128,
        s: { proposalRecv: 2001.2, persistStart: 2001.3, durable: 2002.6, ackSent: 2002.7 },
      },
    ];
    const w = anatomyOfWrite({ dc: 'west', phase: 'before', sent: 2000.0, replied: 2003.4 }, nodes, ctx);
    assert.ok(w);
    const names = w.parts.map((p) => p.name);
    assert.ok(!names.includes('forward hop') && !names.includes('COMMIT hop'), names.join(', '));
    assert.ok(Math.abs(w.parts.reduce((s, p) => s + p.ms, 0) - 3.4) < 1e-9);
    assert.ok(w.parts.every((p) => p.networkMs === 0));
  });

  it('with the leader logging in parallel, follows whichever vote completed the quorum', () => {
    // PROPOSAL out at 1005.8, before the leader's own fsync ends (1007.0).
    const pipelined = forwardedWrite().map((n) =>
      n.node === 'p5' ? { ...n, s: { ...n.s, proposalSent: 1005.8 } } : n,
    );
    const viaFollower = anatomyOfWrite(
      { dc: 'east', phase: 'before', sent: 1000, replied: 1019.4 },
      pipelined,
      ctx,
    )!;
    assert.equal(viaFollower.follower, 'p4', 'leader 1007.0, p3 1011.0, p4 1013.4: the third vote decides');
    assert.ok(
      !viaFollower.parts.some((p) => p.name === 'leader: log write + fsync'),
      "the leader's disk is off the path",
    );
    assert.ok(Math.abs(viaFollower.parts.reduce((a, p) => a + p.ms, 0) - 19.4) < 1e-9);
    // A leader whose fsync ends last (1013.45, after both ACKs) is the one the quorum waited for.
    const slowLeader = pipelined.map((n) =>
      n.node === 'p5' ? { ...n, s: { ...n.s, durable: 1013.45 }, acks: { p3: 1011.0, p4: 1012.0 } } : n,
    );
    const viaLeader = anatomyOfWrite(
      { dc: 'east', phase: 'before', sent: 1000, replied: 1019.4 },
      slowLeader,
      ctx,
    )!;
    assert.equal(viaLeader.follower, 'p5');
    const names = viaLeader.parts.map((p) => p.name);
    assert.ok(
      names.includes('leader: log write + fsync') && !names.includes('PROPOSAL hop'),
      names.join(', '),
    );
    assert.ok(Math.abs(viaLeader.parts.reduce((a, p) => a + p.ms, 0) - 19.4) < 1e-9);
  });

  it('leaves out a write with a missing stamp or stamps out of order', () => {
    const missing = forwardedWrite();
    missing[2] = { ...missing[2]!, s: { ...missing[2]!.s, durable: undefined } } as NodeTraceEvent;
    assert.equal(
      anatomyOfWrite({ dc: 'east', phase: 'before', sent: 1000, replied: 1019.4 }, missing, ctx),
      null,
    );
    // A reply before the send cannot happen on one clock: a sign of stamps from different clocks.
    assert.equal(
      anatomyOfWrite({ dc: 'east', phase: 'before', sent: 1000, replied: 1015 }, forwardedWrite(), ctx),
      null,
    );
  });

  it('sorts a run into buckets per data center and window that add up to the mean latency', () => {
    const a = latencyAnatomy(
      [
        {
          dc: 'east',
          clientId: 'c-east',
          traces: [
            [64, 'before', 999.9, 1000.0, 1019.4],
            [192, 'gap', 0, 1, 2],
          ],
        },
        { dc: 'west', clientId: 'c-west', traces: [[64, 'before', 0, 1, 2]] },
      ],
      forwardedWrite(),
      ctx,
      64,
    );
    assert.equal(a.traced, 3);
    assert.equal(a.complete, 1);
    const b = a.perDc['east']?.['before'];
    assert.ok(b);
    assert.equal(b.writes, 1);
    assert.equal(b.networkMs, 10, 'two 5 ms hops between the data centers');
    const buckets = b.networkMs + b.transportMs + b.diskMs + b.nodesMs + b.clientMs;
    assert.ok(Math.abs(buckets - b.totalMs) < 1e-9, `${buckets} vs ${b.totalMs}`);
    // Disk: the leader's 1.3 ms and the decisive follower's 5.6 ms.
    assert.ok(Math.abs(b.diskMs - 6.9) < 1e-9);
    assert.ok(Math.abs(b.clientMs - 0.5) < 1e-9);
    assert.ok(b.maxSumErrorMs < 1e-9);
    assert.equal(a.perDc['west'], undefined);
  });

  it('averages parts over all writes, so the part means add up to the mean', () => {
    const w1 = anatomyOfWrite(
      { dc: 'east', phase: 'before', sent: 1000.0, replied: 1019.4 },
      forwardedWrite(),
      ctx,
    )!;
    const w2 = { ...w1, latencyMs: 3, parts: [{ name: 'agent → contact' as const, ms: 3, networkMs: 0 }] };
    const b = breakdown([w1, w2]);
    const sum = Object.values(b.parts).reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(sum - b.totalMs) < 1e-9);
    assert.ok(Math.abs(b.totalMs - (19.4 + 3) / 2) < 1e-9);
    // Each write's own time beyond its network part: 19.4 − 10 and 3 − 0. Their mean is the floor
    // (total less network), and the two ends are what one write alone can move it by.
    const range = b.beyondNetworkRangeMs!;
    assert.ok(Math.abs(range.least - 3) < 1e-9 && Math.abs(range.most - 9.4) < 1e-9, JSON.stringify(range));
    assert.ok(Math.abs((range.least + range.most) / 2 - (b.totalMs - b.networkMs)) < 1e-9);
  });
});
