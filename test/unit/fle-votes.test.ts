// A ZooKeeper run's scores are the votes its leader heard in its deciding round (from its own
// log), not every survivor's proposal: FLE elects the best vote heard, and a survivor not heard (a
// stop CI's swarm run: equal zxids, p3 elected, p4's proposal not counted) is named apart.
// The run then checks its leader against those votes itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { zkLogTranslator } from '../../src/targets/zookeeper/zk-log-events.js';
import { bestScored, fleVotes } from '../../src/report/fle-votes.js';
import { recoveryFigures } from '../../src/report/recovery-figures.js';
import { selfCheck } from '../../src/report/self-check.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';
import { result2dc } from './report-fixture.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const KILL_AT = Date.parse('2026-11-27T16:28:25.490Z');
const ZXID = 0x1dc6;

/** p4's own log of the election after p5's kill (a paper-3dc-deployment-1 run), as events. */
function leaderEvents(): ClusterEvent[] {
  const translate = zkLogTranslator({
    memberId: 'p4',
    memberAtQuorumAddress: () => undefined,
    memberOfSid: (sid) => `p${sid}`,
  });
  return readFileSync(join(ROOT, 'test', 'fixtures', 'zookeeper-3.8-leader-votes-log.txt'), 'utf8')
    .split('\n')
    .flatMap((l) => translate(l));
}

const candidate = (t: number, node: string, zxid: string): ClusterEvent =>
  ({ t, node, src: 'zk-log', ev: 'candidate', sid: Number(node.slice(1)), zxid }) as ClusterEvent;

function figures(extra: ClusterEvent[]): ReturnType<typeof recoveryFigures> {
  const events = [...leaderEvents(), ...extra].sort((a, b) => a.t - b.t);
  return recoveryFigures(
    {
      killed: 'p5',
      killAt: KILL_AT,
      causeScheduledAt: KILL_AT,
      loadStart: 0,
      nodeEvents: events,
      dones: new Map(),
    },
    [],
  );
}

test('the scores are the votes the leader heard in its round; a survivor not heard is named apart', () => {
  const f = figures([
    candidate(KILL_AT + 131, 'p2', '0x100001dc6'),
    candidate(KILL_AT + 504, 'p1', '0x100001dc6'),
    candidate(KILL_AT + 528, 'p3', '0x100001dc6'),
  ]);
  assert.equal(f.elected, 'p4');
  // p3's round-1 vote (still following p5) is not of the round p4 decided in.
  assert.deepEqual(f.scores, {
    p4: [1, 1, ZXID, 4],
    p3: [1, 1, ZXID, 3],
    p1: [1, 1, ZXID, 1],
  });
  // p2's own proposal reached p4 only while p4 still followed p5.
  assert.deepEqual(f.unheard, { p2: [1, ZXID, 2] });
  assert.deepEqual(bestScored(f.scores), ['p4']);
});

test('a survivor with the newest log that was not heard: FLE’s choice is still the best heard', () => {
  // A survivor with a better proposal (here a newer zxid) none of whose votes of the deciding round
  // reached p4 before p4 decided: the stop CI's case had equal zxids and a better sid instead.
  const events = [
    ...leaderEvents().filter((e) => !(e.ev === 'vote-heard' && e.from === 'p3' && e.round === 2)),
    candidate(KILL_AT + 131, 'p2', '0x100001dc6'),
    candidate(KILL_AT + 504, 'p1', '0x100001dc6'),
    candidate(KILL_AT + 600, 'p3', '0x100001dc9'),
  ].sort((a, b) => a.t - b.t);
  const elected = events.find((e) => e.ev === 'elected' && e.leader === 'p4')!;
  const votes = fleVotes({ killed: 'p5', killAt: KILL_AT, nodeEvents: events }, elected);
  assert.deepEqual(votes?.scores, { p4: [1, 1, ZXID, 4], p1: [1, 1, ZXID, 1] });
  assert.deepEqual(votes?.unheard, { p2: [1, ZXID, 2], p3: [1, 0x1dc9, 3] });
  assert.deepEqual(bestScored(votes!.scores), ['p4']);
});

test('the run checks its ZooKeeper leader against the votes heard, and says so when they disagree', () => {
  const base = result2dc();
  const zk = (scores: Record<string, number[]>) => ({
    ...base,
    target: 'zookeeper' as const,
    leaders: { ...base.leaders, oracle: 'zookeeper-fle', elected: 'p4', scores },
  });
  const what = 'ZooKeeper’s leader is the best vote it heard in its deciding round';
  const held = selfCheck(zk({ p4: [1, 1, ZXID, 4], p3: [1, 1, ZXID, 3] }));
  assert.ok(held.checked.includes(what));
  assert.deepEqual(
    held.violations.filter((v) => v.startsWith('ZooKeeper')),
    [],
  );
  const failed = selfCheck(zk({ p4: [1, 1, ZXID, 4], p3: [1, 1, ZXID + 1, 3] }));
  assert.deepEqual(
    failed.violations.filter((v) => v.startsWith('ZooKeeper')),
    [`${what}: p4 elected, the best vote heard was for p3`],
  );
  // A run stored with each survivor's own proposal (three numbers) is not checked so.
  assert.ok(!selfCheck(zk({ p4: [1, ZXID, 4], p3: [1, ZXID + 1, 3] })).checked.includes(what));
});

test("the run holds ZooKeeper's own election time to its log's times, and says so when they disagree", () => {
  const base = result2dc();
  const what = 'ZooKeeper’s own election time agrees with its log’s times';
  const zk = (election: {
    atMs: number;
    tookMs: number;
    tookFromMs: number;
    tookLoggedMs: number;
    tookLookingMs?: number;
  }) => ({
    ...base,
    target: 'zookeeper' as const,
    recovery: {
      ...base.recovery,
      explain: {
        detection: null,
        election: {
          leader: 'p4',
          reason: null,
          timeoutMs: null,
          rounds: null,
          unheard: null,
          down: null,
          tookLookingMs: null,
          ...election,
        },
        sync: {
          followers: null,
          fetched: null,
          discoveryMs: null,
          syncMs: null,
          servingAfterElectedMs: null,
        },
      },
    },
  });
  const mine = (r: ReturnType<typeof zk>): string[] =>
    selfCheck(r).violations.filter((v) => v.startsWith(what));
  // The fixture's leader: "New election" at 25.902, decided 26.386, "TOOK - 624 MS" at 26.525.
  const held = zk({ tookFromMs: 902, atMs: 1386, tookLoggedMs: 1525, tookMs: 624 });
  assert.ok(selfCheck(held).checked.includes(what));
  assert.deepEqual(mine(held), []);
  // Lines timed when read, 40 ms late for the second: the span no longer matches ZooKeeper's own.
  assert.deepEqual(mine(zk({ tookFromMs: 902, atMs: 1386, tookLoggedMs: 1565, tookMs: 624 })), [
    `${what}: it says 624.00 ms; its "New election" and "TOOK" lines are 663.00 ms apart`,
  ]);
  assert.deepEqual(mine(zk({ tookFromMs: 902, atMs: 1600, tookLoggedMs: 1525, tookMs: 624 })), [
    `${what}: elected at 1600.00 ms, outside its own election, 902.00 to 1525.00 ms`,
  ]);
  // ZooKeeper starts its count after its LOOKING line and may load its database before "New
  // election": a 3-host swarm's leader counted 752 ms, its New election and TOOK lines 721 ms apart.
  const swarm = { tookFromMs: 400, atMs: 1000, tookLoggedMs: 1121, tookMs: 752 };
  assert.deepEqual(mine(zk({ ...swarm, tookLookingMs: 360 })), []);
  // ... but never more than from its LOOKING line, nor less than from its New election line.
  assert.deepEqual(mine(zk({ ...swarm, tookLookingMs: 390 })), [
    `${what}: it says 752.00 ms; its "LOOKING" and "TOOK" lines are 731.00 ms apart`,
  ]);
  assert.deepEqual(mine(zk({ ...swarm, tookMs: 690, tookLookingMs: 360 })), [
    `${what}: it says 690.00 ms; its "New election" and "TOOK" lines are 721.00 ms apart`,
  ]);
  // A stall between stopping its clock and logging TOOK: a docker run's leader said 519 ms where its
  // New election and TOOK lines were 526 ms apart (LOOKING 539 ms before TOOK).
  assert.deepEqual(
    mine(zk({ tookFromMs: 239.44, atMs: 700, tookLoggedMs: 765.44, tookMs: 519, tookLookingMs: 226.44 })),
    [],
  );
  // Without the LOOKING line (a run stored before it was read), the New election line bounds both ways.
  assert.deepEqual(mine(zk(swarm)), [
    `${what}: it says 752.00 ms; its "New election" and "TOOK" lines are 721.00 ms apart`,
  ]);
  // Where the log did not give both lines (POLE, stored runs), nothing is checked.
  assert.ok(!selfCheck(base).checked.includes(what));
});
