import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PoleElection, type ElectionOptions } from '../../src/node/core/election.js';
import type {
  ElectionDecision,
  ElectionMessage,
  ElectionOutput,
  ElectionSend,
  Proposal,
} from '../../src/node/core/election-types.js';
import type { Member, NodeId } from '../../src/node/core/types.js';

const MEMBERS: Member[] = [1, 2, 3, 4, 5].map((i) => ({ id: `p${i}`, sid: i }));
/** Higher is better: p3 is the best, then p5, p4, p2, p1. */
const SCORES: Record<string, number> = { p1: 10, p2: 20, p3: 50, p4: 30, p5: 40 };
const T = 1000;
const RETRY = 100;

interface Harness {
  readonly el: PoleElection;
  /** Epochs getScore was asked for, in order. */
  readonly scored: number[];
}

function make(id: NodeId, over: Partial<ElectionOptions> = {}): Harness {
  const scored: number[] = [];
  const self = MEMBERS.find((m) => m.id === id);
  assert.ok(self);
  const el = new PoleElection({
    self,
    members: MEMBERS,
    electionTimeoutMs: T,
    retryBaseMs: RETRY,
    scoreFor: (epoch) => {
      scored.push(epoch);
      return [SCORES[id] ?? 0];
    },
    compareScores: (_e, a, b) => (a[0] ?? 0) - (b[0] ?? 0),
    ...over,
  });
  return { el, scored };
}

function prop(id: NodeId): Proposal {
  const m = MEMBERS.find((x) => x.id === id);
  assert.ok(m);
  return { id, sid: m.sid, score: [SCORES[id] ?? 0] };
}
const P = (epoch: number, id: NodeId): ElectionMessage => ({ type: 'P', epoch, proposal: prop(id) });
const V = (epoch: number, leader: NodeId): ElectionMessage => ({ type: 'V', epoch, leader });
const peersOf = (id: NodeId): NodeId[] => MEMBERS.map((m) => m.id).filter((x) => x !== id);
const toAll = (self: NodeId, msg: ElectionMessage): ElectionSend[] =>
  peersOf(self).map((to) => ({ to, msg }));

test('newElection starts epoch + 1 with a fresh score and proposes to every peer, never to itself', () => {
  const { el, scored } = make('p1', { initialEpoch: 4 });
  assert.equal(el.running, false);
  const out = el.newElection(0);
  assert.equal(el.epoch, 5);
  assert.deepEqual(scored, [5]);
  assert.deepEqual(el.proposal, prop('p1'));
  assert.deepEqual(out.sends, toAll('p1', P(5, 'p1')));
  assert.equal(out.decided, undefined);
  assert.equal(el.leader, undefined);
  assert.equal(el.running, true);
  // Only self has proposed: no election timer yet, just the first retry.
  assert.equal(el.nextDeadline(), RETRY);
  // minEpoch lifts the epoch (max(epoch, minEpoch - 1) + 1) but never lowers it.
  el.newElection(0, 9);
  assert.equal(el.epoch, 9);
  el.newElection(0, 3);
  assert.equal(el.epoch, 10);
});

test('before newElection the node ignores P up to its own epoch and V, and joins a newer epoch', () => {
  const { el, scored } = make('p1', { initialEpoch: 3 });
  assert.deepEqual(el.onMessage(0, 'p2', P(3, 'p2')).sends, []);
  assert.deepEqual(el.onMessage(0, 'p2', P(2, 'p2')).sends, []);
  for (const voter of ['p2', 'p3', 'p4']) assert.equal(el.onMessage(0, voter, V(3, 'p2')).decided, undefined);
  assert.equal(el.running, false);
  assert.equal(el.leader, undefined);
  assert.deepEqual(scored, []);

  const out = el.onMessage(50, 'p2', P(4, 'p2'));
  assert.equal(el.epoch, 4);
  assert.deepEqual(scored, [4]);
  assert.deepEqual(el.proposal, prop('p2')); // p2's 20 beats our own 10
  assert.deepEqual(out.sends, toAll('p1', P(4, 'p2')));
  assert.equal(el.running, true);
  assert.equal(el.nextDeadline(), 50 + RETRY); // it retries like an election it started itself
});

test('P from an older epoch: teach the sender our proposal, and count it for start-timer?', () => {
  const { el } = make('p1', { retryBaseMs: 100 * T });
  el.newElection(0);
  const out = el.onMessage(5, 'p5', P(0, 'p5'));
  assert.deepEqual(out.sends, [{ to: 'p5', msg: P(1, 'p1') }]);
  assert.deepEqual(el.proposal, prop('p1')); // the better score of an older epoch does not count
  el.onMessage(7, 'p4', P(0, 'p4'));
  assert.equal(el.nextDeadline(), 7 + T); // {p1, p5, p4}: the senders count, as in the paper (line 49)
  assert.equal(el.tick(7 + T).decided?.leader, 'p1');
});

test('P with a worse proposal in our epoch is answered with ours, to the sender only', () => {
  const { el } = make('p3');
  el.newElection(0);
  const out = el.onMessage(1, 'p1', P(1, 'p1'));
  assert.deepEqual(out.sends, [{ to: 'p1', msg: P(1, 'p3') }]);
  assert.deepEqual(el.proposal, prop('p3'));
});

test('P with a better proposal in our epoch is adopted and proposed to all', () => {
  const { el } = make('p1');
  el.newElection(0);
  // p2 relays p3's proposal: what matters is the proposal, not who sends it.
  const out = el.onMessage(1, 'p2', P(1, 'p3'));
  assert.deepEqual(el.proposal, prop('p3'));
  assert.deepEqual(out.sends, toAll('p1', P(1, 'p3')));
});

test('P equal to our proposal sends nothing but counts the sender', () => {
  const { el } = make('p1', { retryBaseMs: 100 * T });
  el.newElection(0);
  el.onMessage(1, 'p2', P(1, 'p3'));
  const out = el.onMessage(2, 'p4', P(1, 'p3'));
  assert.deepEqual(out.sends, []);
  assert.equal(el.nextDeadline(), 2 + T); // {p1, p2, p4} is a quorum of 5
});

test('P of a newer epoch: join it with a fresh score, keep ours if better, forget the old epoch', () => {
  const { el, scored } = make('p3', { retryBaseMs: 100 * T });
  el.newElection(0);
  el.onMessage(1, 'p1', P(1, 'p1'));
  // Two votes for p5, p5's own among them: one short of adopting p5.
  el.onMessage(2, 'p5', V(1, 'p5'));
  el.onMessage(3, 'p4', V(1, 'p5'));
  assert.equal(el.leader, undefined);
  assert.equal(el.nextDeadline(), 2 + T); // {p3, p1, p5} reached a quorum in epoch 1: timer running

  const out = el.onMessage(10, 'p4', P(3, 'p1'));
  assert.equal(el.epoch, 3);
  assert.deepEqual(scored, [1, 3]);
  assert.deepEqual(el.proposal, prop('p3')); // our 50 beats p1's 10
  assert.deepEqual(out.sends, toAll('p3', P(3, 'p3')));
  // The old epoch's timer and proposal set are gone: {p3, p4} is no quorum.
  assert.equal(el.nextDeadline(), 100 * T);
  assert.equal(el.tick(2 + T).decided, undefined);
  // The old epoch's votes are gone too: a third (1, p5) vote no longer makes a quorum with p5's.
  assert.equal(el.onMessage(11, 'p2', V(1, 'p5')).decided, undefined);
  assert.equal(el.onMessage(12, 'p1', P(3, 'p1')).decided, undefined);
  assert.equal(el.nextDeadline(), 11 + T); // p2's vote and p1's proposal made {p3, p4, p2, p1}
});

test('joining a newer epoch adopts the proposal when it beats our fresh one', () => {
  const { el } = make('p1');
  el.newElection(0);
  const out = el.onMessage(1, 'p2', P(4, 'p3'));
  assert.equal(el.epoch, 4);
  assert.deepEqual(el.proposal, prop('p3'));
  assert.deepEqual(out.sends, toAll('p1', P(4, 'p3')));
});

test('a quorum of proposals starts the election timer once; it decides T later on the best proposal', () => {
  const { el } = make('p1', { retryBaseMs: 100 * T });
  el.newElection(0);
  el.onMessage(5, 'p2', P(1, 'p2'));
  assert.equal(el.nextDeadline(), 100 * T); // 2 of 5 is no quorum
  el.onMessage(10, 'p4', P(1, 'p4'));
  assert.equal(el.nextDeadline(), 10 + T);
  el.onMessage(50, 'p5', P(1, 'p5'));
  assert.equal(el.nextDeadline(), 10 + T); // not restarted by later proposals
  assert.equal(el.tick(9 + T).decided, undefined);
  const out = el.tick(10 + T);
  const expected: ElectionDecision = {
    leader: 'p5',
    epoch: 1,
    via: 'timer',
    proposals: ['p1', 'p2', 'p4', 'p5'].map((id) => ({ id, score: [SCORES[id] ?? 0] })),
    // p3 never proposed: the collection could only end when T ran out.
    reason: 'timer',
    down: [],
    timeoutMs: T,
    rounds: 1,
    unheard: ['p3'],
  };
  assert.deepEqual(out.decided, expected);
  assert.deepEqual(out.sends, []);
  assert.equal(el.leader, 'p5');
  assert.equal(el.running, false);
  assert.equal(el.nextDeadline(), undefined);
  assert.deepEqual(el.proposalsSeen(), expected.proposals);
});

test('proposals from all n decide at once, in the same call', () => {
  const { el } = make('p1');
  el.newElection(0);
  for (const j of ['p2', 'p3', 'p4']) assert.equal(el.onMessage(1, j, P(1, j)).decided, undefined);
  const out = el.onMessage(2, 'p5', P(1, 'p5'));
  assert.equal(out.decided?.leader, 'p3');
  assert.equal(out.decided?.via, 'timer');
  // The timer did not run out: every member proposed, so it had nothing left to wait for.
  assert.equal(out.decided?.reason, 'all-proposals');
  assert.equal(out.decided?.timeoutMs, T);
  assert.equal(out.decided?.rounds, 1);
  assert.deepEqual(out.decided?.unheard, []);
  assert.equal(el.leader, 'p3');
});

test('rounds count the retries of the deciding epoch; joining a newer epoch starts them again', () => {
  const { el } = make('p1', { retryBaseMs: 100, electionTimeoutMs: 1000 });
  el.newElection(0);
  el.tick(100); // nobody answered: round 2
  el.tick(300); // round 3
  el.onMessage(350, 'p2', P(1, 'p2'));
  el.onMessage(360, 'p4', P(1, 'p4')); // a quorum: T starts
  el.tick(700); // round 4, the timer still running
  const out = el.tick(1360);
  assert.equal(out.decided?.reason, 'timer');
  assert.equal(out.decided?.rounds, 4);
  assert.deepEqual(out.decided?.unheard, ['p3', 'p5']);

  const fresh = make('p1', { retryBaseMs: 100, electionTimeoutMs: 1000 }).el;
  fresh.newElection(0);
  fresh.tick(100);
  fresh.tick(300);
  // A newer epoch is a new collection: its rounds start again from the proposal it joins with.
  const decided = ['p2', 'p3', 'p4', 'p5'].map((j) => fresh.onMessage(400, j, P(2, j)).decided);
  const last = decided.at(-1);
  assert.deepEqual(decided.slice(0, -1), [undefined, undefined, undefined]);
  assert.equal(last?.epoch, 2);
  assert.equal(last?.leader, 'p3');
  assert.equal(last?.reason, 'all-proposals');
  assert.equal(last?.rounds, 1);
});

test('a settled node answers any P with V(epoch, leader), to the sender only', () => {
  const { el } = make('p1');
  el.newElection(0);
  for (const j of ['p2', 'p3', 'p4', 'p5']) el.onMessage(1, j, P(1, j));
  assert.equal(el.leader, 'p3');
  assert.deepEqual(el.onMessage(2, 'p2', P(7, 'p2')).sends, [{ to: 'p2', msg: V(1, 'p3') }]);
  assert.deepEqual(el.onMessage(3, 'p4', P(0, 'p4')).sends, [{ to: 'p4', msg: V(1, 'p3') }]);
  assert.equal(el.epoch, 1);
  assert.equal(el.leader, 'p3');
});

test("votes: a quorum for one (e, l) that includes l's own vote is adopted, even from an older epoch", () => {
  const { el } = make('p1', { initialEpoch: 4 });
  el.newElection(0);
  assert.equal(el.onMessage(1, 'p2', V(3, 'p5')).decided, undefined);
  assert.equal(el.onMessage(2, 'p3', V(3, 'p5')).decided, undefined);
  // A different (e, l) is a different group.
  assert.equal(el.onMessage(3, 'p4', V(2, 'p5')).decided, undefined);
  const out = el.onMessage(4, 'p5', V(3, 'p5'));
  assert.equal(out.decided?.leader, 'p5');
  assert.equal(out.decided?.epoch, 3);
  assert.equal(out.decided?.via, 'votes');
  assert.equal(out.decided?.reason, 'votes');
  assert.equal(el.epoch, 3);
  assert.equal(el.leader, 'p5');
  assert.equal(el.nextDeadline(), undefined);
});

test('votes for a crashed leader (no vote of its own) are never adopted; they count for start-timer?', () => {
  const { el } = make('p1', { retryBaseMs: 100 * T });
  el.newElection(0);
  for (const j of ['p2', 'p3', 'p4']) assert.equal(el.onMessage(1, j, V(1, 'p5')).decided, undefined);
  assert.equal(el.leader, undefined);
  assert.equal(el.nextDeadline(), 1 + T); // {p1, p2, p3} reached a quorum
  const out = el.tick(1 + T);
  assert.equal(out.decided?.leader, 'p1'); // nobody proposed anything better than our own
  assert.equal(out.decided?.via, 'timer');
});

test('repeated votes from one voter count once', () => {
  const { el } = make('p1');
  el.newElection(0);
  for (let i = 0; i < 3; i++) assert.equal(el.onMessage(i, 'p5', V(1, 'p5')).decided, undefined);
  assert.equal(el.onMessage(5, 'p4', V(1, 'p5')).decided, undefined);
  assert.equal(el.onMessage(6, 'p3', V(1, 'p5')).decided?.leader, 'p5');
});

test('votes are not adopted once settled; a rival vote is answered once per sender with ours', () => {
  const { el } = make('p1');
  el.newElection(0);
  for (const j of ['p2', 'p3', 'p4', 'p5']) el.onMessage(1, j, P(1, j));
  for (const j of ['p5', 'p4', 'p2']) {
    const out = el.onMessage(2, j, V(1, 'p5'));
    assert.equal(out.decided, undefined);
    // Each sender hears once whom we settled on: the rival's own vote is what lets it step down.
    assert.deepEqual(out.sends, [{ to: j, msg: V(1, 'p3') }]);
  }
  // Once per sender and epoch: two settled nodes cannot keep answering each other.
  assert.deepEqual(el.onMessage(3, 'p5', V(1, 'p5')).sends, []);
  // A vote for our own leader, or of another epoch, is not answered.
  assert.deepEqual(el.onMessage(3, 'p3', V(1, 'p3')).sends, []);
  assert.deepEqual(el.onMessage(3, 'p3', V(0, 'p5')).sends, []);
  assert.equal(el.leader, 'p3');
});

test('retry: while no leader is known, re-propose to all every t, doubling t', () => {
  const { el } = make('p1', { retryBaseMs: 100, electionTimeoutMs: 100 * T });
  el.newElection(0);
  assert.equal(el.nextDeadline(), 100);
  assert.deepEqual(el.tick(99).sends, []);
  assert.deepEqual(el.tick(100).sends, toAll('p1', P(1, 'p1')));
  assert.equal(el.nextDeadline(), 300);
  assert.deepEqual(el.tick(299).sends, []);
  assert.equal(el.tick(300).sends.length, 4);
  assert.equal(el.nextDeadline(), 700);
  // A late tick fires one retry and restarts the interval from then.
  assert.equal(el.tick(2000).sends.length, 4);
  assert.equal(el.nextDeadline(), 2000 + 800);
  // A better proposal meanwhile is what the retries carry.
  el.onMessage(2100, 'p2', P(1, 'p3'));
  assert.deepEqual(el.tick(2800).sends, toAll('p1', P(1, 'p3')));
  // Settling stops the retries.
  for (const j of ['p3', 'p4', 'p5']) el.onMessage(2900, j, V(1, 'p3'));
  assert.equal(el.leader, 'p3');
  assert.equal(el.nextDeadline(), undefined);
  assert.deepEqual(el.tick(1e9).sends, []);
  // A new election restarts the back-off from t.
  el.newElection(5000);
  assert.equal(el.nextDeadline(), 5100);
});

test('a one-member cluster decides at newElection', () => {
  const solo: Member = { id: 'p1', sid: 1 };
  const el = new PoleElection({
    self: solo,
    members: [solo],
    electionTimeoutMs: T,
    retryBaseMs: RETRY,
    scoreFor: () => [1],
    compareScores: (_e, a, b) => (a[0] ?? 0) - (b[0] ?? 0),
  });
  const out = el.newElection(0);
  assert.deepEqual(out.sends, []);
  assert.equal(out.decided?.leader, 'p1');
  assert.equal(el.nextDeadline(), undefined);
});

test('messages from itself or non-members, and proposals naming non-members, are ignored', () => {
  const { el } = make('p1');
  el.newElection(0);
  const stranger: ElectionMessage = { type: 'P', epoch: 1, proposal: { id: 'x9', sid: 99, score: [1e9] } };
  const wrongSid: ElectionMessage = { type: 'P', epoch: 1, proposal: { id: 'p3', sid: 42, score: [50] } };
  for (const [from, msg] of [
    ['p1', P(1, 'p3')],
    ['x9', P(1, 'p3')],
    ['p2', stranger],
    ['p2', wrongSid],
    ['p2', V(1, 'x9')],
  ] as const) {
    assert.deepEqual(el.onMessage(1, from, msg), { sends: [] });
  }
  assert.deepEqual(el.proposal, prop('p1'));
  assert.equal(el.nextDeadline(), RETRY);
});

test('the constructor rejects inconsistent membership', () => {
  const base = { electionTimeoutMs: T, retryBaseMs: RETRY, scoreFor: () => [0], compareScores: () => 0 };
  const a: Member = { id: 'a', sid: 1 };
  assert.throws(
    () => new PoleElection({ ...base, self: a, members: [a, { id: 'b', sid: 1 }] }),
    /sid|server id/,
  );
  assert.throws(() => new PoleElection({ ...base, self: a, members: [{ id: 'b', sid: 2 }] }), /not among/);
  assert.throws(() => new PoleElection({ ...base, self: a, members: [a], retryBaseMs: 0 }), /retryBaseMs/);
});

// ---- a small synchronous cluster ----

/** mulberry32: a tiny seeded RNG so the delivery order is shuffled but reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Decided {
  readonly at: number;
  readonly decision: ElectionDecision;
}

class Cluster {
  readonly nodes = new Map<NodeId, PoleElection>();
  readonly decided = new Map<NodeId, Decided>();
  readonly down = new Set<NodeId>();
  private readonly queue: { from: NodeId; to: NodeId; msg: ElectionMessage }[] = [];
  now = 0;

  constructor(private readonly random: () => number) {
    for (const m of MEMBERS) this.nodes.set(m.id, make(m.id).el);
  }

  node(id: NodeId): PoleElection {
    const el = this.nodes.get(id);
    assert.ok(el);
    return el;
  }

  live(): NodeId[] {
    return [...this.nodes.keys()].filter((id) => !this.down.has(id));
  }

  apply(from: NodeId, out: ElectionOutput): void {
    for (const s of out.sends) {
      assert.notEqual(s.to, from, 'an election must never address itself');
      if (!this.down.has(s.to)) this.queue.push({ from, to: s.to, msg: s.msg });
    }
    if (out.decided) {
      assert.equal(this.decided.has(from), false, `${from} decided twice`);
      this.decided.set(from, { at: this.now, decision: out.decided });
    }
  }

  /** Deliver everything in flight, in a shuffled order, at the current time. */
  drain(): void {
    for (let steps = 0; this.queue.length > 0; steps++) {
      assert.ok(steps < 10_000, 'message storm');
      const i = Math.floor(this.random() * this.queue.length);
      const [env] = this.queue.splice(i, 1);
      assert.ok(env);
      if (!this.down.has(env.to))
        this.apply(env.to, this.node(env.to).onMessage(this.now, env.from, env.msg));
    }
  }

  /** Advance time deadline by deadline until every live node has decided (bounded). */
  settle(): void {
    this.drain();
    for (let rounds = 0; this.live().some((id) => !this.decided.has(id)); rounds++) {
      assert.ok(rounds < 100, 'the election did not settle');
      const deadlines = this.live()
        .map((id) => this.node(id).nextDeadline())
        .filter((d): d is number => d !== undefined);
      assert.ok(deadlines.length > 0, 'undecided nodes but no timer pending');
      this.now = Math.max(this.now, Math.min(...deadlines));
      for (const id of this.live()) {
        const d = this.node(id).nextDeadline();
        if (d !== undefined && d <= this.now) this.apply(id, this.node(id).tick(this.now));
      }
      this.drain();
    }
  }

  startAll(): void {
    for (const id of this.live()) this.apply(id, this.node(id).newElection(this.now));
  }
}

test('5 nodes exchanging messages all agree on the best-scored node, without waiting for T', () => {
  for (let seed = 1; seed <= 25; seed++) {
    const c = new Cluster(rng(seed));
    c.startAll();
    c.settle();
    assert.equal(c.decided.size, 5);
    for (const [id, d] of c.decided) {
      assert.equal(d.decision.leader, 'p3', `seed ${seed}: ${id}`);
      assert.equal(d.decision.epoch, 1);
      assert.equal(d.at, 0, 'heard from all n: decided at once');
      assert.equal(d.decision.reason, 'all-proposals');
      assert.equal(c.node(id).leader, 'p3');
    }
  }
});

test('with the best node down, the other 4 agree on the best live node after T', () => {
  for (let seed = 1; seed <= 25; seed++) {
    const c = new Cluster(rng(seed));
    c.down.add('p3');
    c.startAll();
    c.settle();
    assert.deepEqual([...c.decided.keys()].sort(), ['p1', 'p2', 'p4', 'p5']);
    for (const [id, d] of c.decided) {
      assert.equal(d.decision.leader, 'p5', `seed ${seed}: ${id}`);
      assert.equal(d.decision.via, 'timer');
      assert.equal(d.at, T, 'a quorum but not everybody: wait T');
      // The dead member is what the collection waited T for, and the decision says so.
      assert.equal(d.decision.reason, 'timer');
      assert.deepEqual(d.decision.unheard, ['p3']);
    }
  }
});

test('a node that comes back after the others settled adopts their leader through votes', () => {
  const c = new Cluster(rng(7));
  c.down.add('p1');
  c.startAll();
  c.settle();
  // p1 restarts later with a fresh state machine and asks around.
  c.now = 5 * T;
  c.down.delete('p1');
  c.nodes.set('p1', make('p1').el);
  c.apply('p1', c.node('p1').newElection(c.now));
  c.drain();
  const d = c.decided.get('p1');
  assert.equal(d?.decision.leader, 'p3');
  assert.equal(d?.decision.via, 'votes');
  assert.equal(d?.decision.epoch, 1);
  assert.equal(d?.at, 5 * T);
});
