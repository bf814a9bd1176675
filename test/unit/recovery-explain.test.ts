// The recovery's explanation (report/recovery-explain.ts) on hand-made events: the paper's kill of
// p5 with p4 elected, as the POLE node reports it (timer and all-proposals elections, a closed
// connection or a timeout detecting the loss) and as ZooKeeper's log does (no reasons at all);
// then the same explanation in result.json and in report.md's Recovery section.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EventOf, NodeEvent, NodeEventBody } from '../../src/vocabulary/node-events.js';
import { detectionKind, explainRecovery, type RecoveryExplain } from '../../src/report/recovery-explain.js';
import { parseResult, type RunResult } from '../../src/report/result.js';
import { runResultSchema } from '../../src/vocabulary/result-schema.js';
import { renderReport } from '../../src/report/markdown-report.js';
import { evaluateThreshold } from '../../src/report/thresholds.js';
import { parseThreshold } from '../../src/vocabulary/thresholds.js';
import { result2dc } from './report-fixture.js';

/** The fault: p5, the leader, killed at wall time 60 s. */
const KILL = 60_000;

const at = (ms: number, node: string, body: NodeEventBody): NodeEvent => ({ ...body, t: KILL + ms, node });

/** Before the fault: p5 elected and serving epoch 1, a stale leader-lost from start-up. */
const before: NodeEvent[] = [
  at(-50_000, 'p5', { ev: 'elected', leader: 'p5', epoch: 1, via: 'timer', reason: 'all-proposals' }),
  at(-49_900, 'p5', { ev: 'serving', epoch: 1, followers: ['p1', 'p2', 'p3', 'p4'], lastZxid: '1:0' }),
  at(-30_000, 'p2', { ev: 'leader-lost', leader: 'p5', epoch: 1, reason: 'timeout' }),
];

/**
 * p5 killed: p3's link to it closes first, the others' soon after; p4 decides after T = 200 ms, p5
 * (dead) never having proposed; it syncs p1, p2, p3 by DIFF and serves; p5, restarted, joins later.
 */
function killEvents(elected: Partial<Extract<NodeEventBody, { ev: 'elected' }>> = {}): NodeEvent[] {
  return [
    ...before,
    at(19.45, 'p3', { ev: 'leader-lost', leader: 'p5', epoch: 1, reason: 'connection-lost' }),
    at(19.5, 'p3', { ev: 'election-started', reason: 'leader-lost:connection-lost', epoch: 2 }),
    at(20.1, 'p4', { ev: 'leader-lost', leader: 'p5', epoch: 1, reason: 'connection-lost' }),
    at(20.2, 'p4', { ev: 'election-started', reason: 'leader-lost:connection-lost', epoch: 2 }),
    // A follower's decision names p4 but is not p4's own: it is not the one explained.
    at(233.9, 'p1', { ev: 'elected', leader: 'p4', epoch: 2, via: 'timer', reason: 'timer', rounds: 3 }),
    at(234.03, 'p4', {
      ev: 'elected',
      leader: 'p4',
      epoch: 2,
      via: 'timer',
      proposals: { p1: [1, 9], p2: [1, 9], p3: [1, 10], p4: [1, 10] },
      reason: 'timer',
      timeoutMs: 200,
      rounds: 1,
      unheard: ['p5'],
      ...elected,
    }),
    at(234.03, 'p4', { ev: 'leading', epoch: 2, lastZxid: '1:10' }),
    at(234.03, 'p4', { ev: 'phase', phase: 'discovery', epoch: 2 }),
    at(324.5, 'p4', { ev: 'phase', phase: 'sync', epoch: 2 }),
    at(324.5, 'p4', { ev: 'sync-sent', to: 'p3', kind: 'DIFF', txns: 0 }),
    at(324.6, 'p4', { ev: 'sync-sent', to: 'p1', kind: 'DIFF', txns: 1 }),
    at(330, 'p4', { ev: 'sync-sent', to: 'p2', kind: 'DIFF', txns: 1 }),
    at(415.03, 'p4', { ev: 'serving', epoch: 2, followers: ['p1', 'p3'], lastZxid: '1:10' }),
    at(416, 'p4', { ev: 'phase', phase: 'serving', epoch: 2 }),
    // p1 reconnects: a second sync of the same follower is not a second follower.
    at(900, 'p4', { ev: 'sync-sent', to: 'p1', kind: 'DIFF', txns: 3 }),
    at(2415.03, 'p4', { ev: 'sync-sent', to: 'p5', kind: 'TRUNC', txns: 40 }),
    // p4's next leadership (another recovery) is none of this one's business.
    at(9000, 'p4', { ev: 'election-started', reason: 'stepped-down:lost-quorum', epoch: 3 }),
    at(9300, 'p4', { ev: 'sync-sent', to: 'p2', kind: 'SNAP', txns: 0 }),
  ];
}

/** Times are differences of wall-clock ms (60019.45 - 60000): compared to the µs. */
function micro(v: unknown): unknown {
  return JSON.parse(
    JSON.stringify(v, (_k, n: unknown) => (typeof n === 'number' ? Math.round(n * 1000) / 1000 : n)),
  );
}

/**
 * The explanation of `node`'s first own election after the fault. recovery-figures.ts chooses the
 * deciding election and passes its event; these tests name it as the first such, found here.
 */
function explainFor(
  events: readonly NodeEvent[],
  faultAt: number | null,
  node: string | null,
): RecoveryExplain | null {
  const won = events.find(
    (e): e is EventOf<'elected'> =>
      faultAt !== null && e.t >= faultAt && e.ev === 'elected' && e.node === node && e.leader === node,
  );
  return explainRecovery(events, faultAt, won ?? null);
}

describe('explainRecovery', () => {
  it('the timer case: T ran out waiting for the dead leader; the connection closing detected it', () => {
    const x = explainFor(killEvents(), KILL, 'p4');
    const expected: RecoveryExplain = {
      detection: {
        node: 'p3',
        leader: 'p5',
        kind: 'connection-closed',
        reason: 'connection-lost',
        atMs: 19.45,
      },
      election: {
        leader: 'p4',
        atMs: 234.03,
        reason: 'timer',
        timeoutMs: 200,
        rounds: 1,
        unheard: ['p5'],
        down: null,
        tookMs: null,
        tookFromMs: null,
        tookLoggedMs: null,
        tookLookingMs: null,
      },
      sync: {
        followers: [
          { node: 'p3', kind: 'DIFF', txns: 0, atMs: 324.5 },
          { node: 'p1', kind: 'DIFF', txns: 1, atMs: 324.6 },
          { node: 'p2', kind: 'DIFF', txns: 1, atMs: 330 },
          { node: 'p5', kind: 'TRUNC', txns: 40, atMs: 2415.03 },
        ],
        fetched: null,
        discoveryMs: 324.5 - 234.03,
        syncMs: 415.03 - 324.5,
        servingAfterElectedMs: 415.03 - 234.03,
      },
    };
    assert.deepEqual(micro(x), micro(expected));
  });

  it('the all-proposals case: every member proposed, the collection ended at once', () => {
    const x = explainFor(killEvents({ reason: 'all-proposals', unheard: [], rounds: 2 }), KILL, 'p4');
    assert.equal(x?.election.reason, 'all-proposals');
    assert.deepEqual(x?.election.unheard, []);
    assert.equal(x?.election.rounds, 2);
    assert.equal(x?.election.timeoutMs, 200);
  });

  it('a timeout is told apart from a closed connection, and the first loss after the fault is the one', () => {
    const events = killEvents().map((e) =>
      e.ev === 'leader-lost' && e.t >= KILL
        ? { ...e, reason: e.node === 'p3' ? 'timeout' : 'connection-lost' }
        : e,
    );
    const d = explainFor(events, KILL, 'p4')?.detection;
    // p2's timeout 30 s before the fault is not this recovery's: p3's, the first after it, is.
    assert.deepEqual(micro(d), { node: 'p3', leader: 'p5', kind: 'timeout', reason: 'timeout', atMs: 19.45 });
    assert.equal(detectionKind('connection-lost'), 'connection-closed');
    assert.equal(detectionKind('sync-timeout'), 'timeout');
    assert.equal(detectionKind('rejected:resigned'), 'other');
    assert.equal(detectionKind('newer-election:4'), 'other');
    assert.equal(detectionKind('zk:exception when following the leader'), 'unreported');
    // No loss reported at all: the other phases are still explained.
    const none = explainFor(
      killEvents().filter((e) => e.ev !== 'leader-lost'),
      KILL,
      'p4',
    );
    assert.equal(none?.detection, null);
    assert.equal(none?.election.reason, 'timer');
  });

  it('a new leader that fetched missing history says so, and only syncs before its next election count', () => {
    const events = killEvents();
    const i = events.findIndex((e) => e.ev === 'phase' && e.phase === 'sync');
    events.splice(
      i,
      0,
      at(250, 'p4', { ev: 'fetch-history', from: 'p3', epoch: 2, have: '1:8', theirs: '1:10' }),
      at(320, 'p4', { ev: 'fetched', from: 'p3', kind: 'DIFF', txns: 2, lastZxid: '1:10' }),
    );
    const x = explainFor(events, KILL, 'p4');
    assert.deepEqual(x?.sync.fetched, { from: 'p3', kind: 'DIFF', txns: 2 });
    assert.ok(!x?.sync.followers?.some((f) => f.kind === 'SNAP'), 'a sync of the next leadership');
  });

  it('zookeeper: no reasons, no syncs reported: null, not "none"; what the log does say is kept', () => {
    const zk = (ms: number, node: string, body: NodeEventBody): NodeEvent => ({
      ...at(ms, node, body),
      src: 'zk-log',
      logger: 'QuorumPeer',
    });
    const events: NodeEvent[] = [
      zk(-50_000, 'p5', { ev: 'elected', leader: 'p5', tookMs: 40 }),
      zk(25, 'p3', { ev: 'leader-lost', reason: 'zk:exception when following the leader' }),
      zk(26, 'p3', { ev: 'election-started', reason: 'zk:following→looking' }),
      zk(240, 'p1', { ev: 'elected', tookMs: 213 }),
      zk(241, 'p4', { ev: 'elected', leader: 'p4', tookMs: 214 }),
      zk(245, 'p4', { ev: 'phase', role: 'leading', phase: 'discovery' }),
      zk(300, 'p4', { ev: 'quorum', epoch: 2, sids: [1, 3, 4] }),
      zk(310, 'p4', { ev: 'phase', role: 'leading', phase: 'synchronization' }),
      zk(390, 'p4', { ev: 'phase', role: 'leading', phase: 'broadcast' }),
      zk(390, 'p4', { ev: 'serving', epoch: 2 }),
    ];
    const x = explainFor(events, KILL, 'p4');
    assert.deepEqual(x, {
      detection: {
        node: 'p3',
        leader: null,
        kind: 'unreported',
        reason: 'zk:exception when following the leader',
        atMs: 25,
      },
      election: {
        leader: 'p4',
        atMs: 241,
        reason: null,
        timeoutMs: null,
        rounds: null,
        unheard: null,
        down: null,
        tookMs: 214,
        // A run stored before `election-took` and `candidate` were read: the span is not known.
        tookFromMs: null,
        tookLoggedMs: null,
        tookLookingMs: null,
      },
      sync: { followers: null, fetched: null, discoveryMs: 69, syncMs: 80, servingAfterElectedMs: 149 },
    });
  });

  it('zookeeper: its own figure, and when by its log that figure starts and ends', () => {
    const zk = (ms: number, node: string, body: NodeEventBody): NodeEvent => ({
      ...at(ms, node, body),
      src: 'zk-log',
    });
    const events: NodeEvent[] = [
      zk(25, 'p4', { ev: 'leader-lost', reason: 'zk:exception when following the leader' }),
      zk(26, 'p4', { ev: 'election-started', reason: 'zk:following→looking' }),
      // An earlier proposal of p4's, before the fault, is not this election's.
      zk(-9000, 'p4', { ev: 'candidate', sid: 4, zxid: '0x0' }),
      zk(33, 'p4', { ev: 'candidate', sid: 4, zxid: '0x100001dc6' }),
      zk(30, 'p3', { ev: 'candidate', sid: 3, zxid: '0x100001dc6' }),
      zk(240, 'p4', { ev: 'elected', leader: 'p4' }),
      zk(300, 'p3', { ev: 'election-took', tookMs: 270 }),
      zk(356, 'p4', { ev: 'election-took', tookMs: 324 }),
      zk(390, 'p4', { ev: 'serving', epoch: 2 }),
    ];
    const e = explainFor(events, KILL, 'p4')?.election;
    assert.deepEqual([e?.tookMs, e?.tookFromMs, e?.tookLoggedMs, e?.tookLookingMs], [324, 33, 356, 26]);
    // Without its LOOKING line (a log cut short), where the start can be at the earliest is not known.
    const noLooking = events.filter((x) => x.ev !== 'election-started');
    assert.equal(explainFor(noLooking, KILL, 'p4')?.election.tookLookingMs, null);
  });

  it('nothing to explain without a fault, a new leader or its own elected event', () => {
    assert.equal(explainFor(killEvents(), null, 'p4'), null);
    assert.equal(explainFor(killEvents(), KILL, null), null);
    // p1 only heard of p4: the decision to explain is p4's own.
    assert.equal(
      explainFor(
        killEvents().filter((e) => !(e.ev === 'elected' && e.node === 'p4')),
        KILL,
        'p4',
      ),
      null,
    );
    // Not leading yet at the end: what is known is said, serving is not invented.
    const cut = killEvents().filter((e) => e.t <= KILL + 330);
    const x = explainFor(cut, KILL, 'p4');
    assert.equal(x?.sync.servingAfterElectedMs, null);
    assert.equal(x?.sync.syncMs, null);
    assert.equal(x?.sync.followers?.length, 3);
  });
});

/** The text of report.md's `## heading` section. */
function section(md: string, heading: string): string {
  const start = md.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `no section "${heading}"`);
  const next = md.indexOf('\n## ', start + 1);
  return md.slice(start, next < 0 ? undefined : next);
}

function withExplain(x: RecoveryExplain | null): RunResult {
  const r = result2dc();
  r.recovery.explain = x as never;
  return r as RunResult;
}

describe('the explanation in result.json and report.md', () => {
  const timer = explainFor(killEvents(), KILL, 'p4');

  it('round-trips through the result schema and gives thresholds numbers to hold', () => {
    const r = withExplain(timer);
    assert.deepEqual(parseResult(JSON.parse(JSON.stringify(r))).recovery.explain, timer);
    // Older result@7 files have no explanation; a run with no recovery has null.
    assert.equal(runResultSchema.safeParse(withExplain(null)).success, true);
    const old = result2dc();
    assert.equal('explain' in old.recovery, false);
    assert.equal(runResultSchema.safeParse(old).success, true);
    const bad = withExplain({ ...timer!, election: { ...timer!.election, reason: 'luck' as never } });
    assert.equal(runResultSchema.safeParse(bad).success, false);
    const t = parseThreshold('recovery.explain.sync.servingAfterElectedMs < 0.2s');
    assert.equal(t.value, 200);
    assert.equal(evaluateThreshold(t, r).ok, true);
  });

  it('says in sentences what bounded each phase (timer case)', () => {
    const s = section(renderReport(withExplain(timer)), 'Recovery');
    assert.ok(s.includes("- Detected: p3's connection to p5 closed (19.45 ms)."), s);
    assert.ok(
      s.includes(
        '- Elected: p4 (234.03 ms) after one round; the collection ended when T (200 ms) ran out, not every member proposed (p5 did not); p5, the leader taken out, still counts among the members it waits for.',
      ),
      s,
    );
    assert.ok(
      s.includes(
        '- Synced: 3 followers by DIFF (p3, p1, p2), 1 follower by TRUNC (p5 2,000.00 ms after serving); serving 181.00 ms after elected (discovery 90.47 ms',
      ),
      s,
    );
    // The table stays as it was, the sentences come after it.
    assert.ok(s.indexOf('| Detected (first follower notices)') < s.indexOf('What bounded each phase'));
  });

  it('says in sentences what bounded each phase (all proposals, retries, a timeout)', () => {
    const events = killEvents({ reason: 'all-proposals', unheard: [], rounds: 3 }).map((e) =>
      e.ev === 'leader-lost' ? { ...e, reason: 'timeout' } : e,
    );
    const s = section(renderReport(withExplain(explainFor(events, KILL, 'p4'))), 'Recovery');
    assert.ok(
      s.includes(
        '- Detected: p3 timed out on p5: nothing heard from it within its limit (`timeout`, 19.45 ms).',
      ),
      s,
    );
    assert.ok(
      s.includes(
        '- Elected: p4 (234.03 ms) after 3 rounds (no decision before the retry timer re-sent its proposal 2 times); every member proposed, so the collection ended at once, without waiting for T (200 ms).',
      ),
      s,
    );
  });

  it('for ZooKeeper says what is known and that the reasons are not reported', () => {
    const x: RecoveryExplain = {
      detection: {
        node: 'p3',
        leader: null,
        kind: 'unreported',
        reason: 'zk:exception when following the leader',
        atMs: 25,
      },
      election: {
        leader: 'p4',
        atMs: 241,
        reason: null,
        timeoutMs: null,
        rounds: null,
        unheard: null,
        down: null,
        tookMs: 214,
        tookFromMs: 143,
        tookLoggedMs: 241 + 116,
        tookLookingMs: 140,
      },
      sync: { followers: null, fetched: null, discoveryMs: 69, syncMs: 80, servingAfterElectedMs: 149 },
    };
    const s = section(renderReport(withExplain(x)), 'Recovery');
    assert.ok(
      s.includes(
        '- Detected: p3 lost its leader (25.00 ms); how (a closed connection or a timeout) is not reported by ZooKeeper, whose log says `exception when following the leader`.',
      ),
      s,
    );
    assert.ok(
      s.includes(
        '- Elected: p4 (241.00 ms); why its election ended, and after how many rounds, is not reported by ZooKeeper; ZooKeeper\'s own figure: the election took 214.00 ms, from its "LOOKING" (140.00 ms) or "New election" (143.00 ms) to its role built (357.00 ms).',
      ),
      s,
    );
    assert.ok(
      s.includes(
        '- Synced: how the new leader synced its followers (DIFF, TRUNC or SNAP) is not reported by ZooKeeper; serving 149.00 ms after elected (discovery 69.00 ms',
      ),
      s,
    );
  });

  it('leaves the section as it was when there is nothing to explain', () => {
    for (const x of [null, undefined]) {
      const r = result2dc();
      if (x === null) r.recovery.explain = null;
      assert.ok(!section(renderReport(r as RunResult), 'Recovery').includes('What bounded'));
    }
  });
});
