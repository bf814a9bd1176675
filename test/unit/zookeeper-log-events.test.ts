// ZooKeeper 3.8's own log lines (captured from a member of a paper-2dc run, in the layout the
// target configures) turned into the shared events; stack traces, votes heard while not looking
// and the rest ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseZkLogLine, zkLogTranslator } from '../../src/targets/zookeeper/zk-log-events.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LINES = readFileSync(join(ROOT, 'test', 'fixtures', 'zookeeper-3.8-member-log.txt'), 'utf8').split(
  '\n',
);

test('a member that follows p5, loses it, and is elected itself', () => {
  const translate = zkLogTranslator({
    memberId: 'p3',
    memberAtQuorumAddress: (a) => (a === '127.0.0.1:28580' ? 'p5' : undefined),
    memberOfSid: (sid) => `p${sid}`,
  });
  const events = LINES.flatMap((l) => translate(l));
  const brief = events.map((e) => {
    const { t: _t, node, ev, src, logger: _l, ...rest } = e;
    assert.equal(node, 'p3');
    assert.equal(src, 'zk-log');
    return Object.keys(rest).length > 0 ? `${ev} ${JSON.stringify(rest)}` : ev;
  });
  assert.deepEqual(brief, [
    'started',
    'election-started {"reason":"start"}',
    'candidate {"sid":3,"zxid":"0x0"}',
    // Votes heard while looking: here the members that had already decided, naming p5.
    'vote-heard {"from":"p5","fromState":"leading","leader":"p5","leaderSid":5,"peerEpoch":1,"zxid":"0x0","round":1}',
    'vote-heard {"from":"p2","fromState":"following","leader":"p5","leaderSid":5,"peerEpoch":1,"zxid":"0x0","round":1}',
    // FLE's decision, then ZooKeeper's own figure once its Follower was built.
    'elected',
    'election-took {"tookMs":74}',
    'phase {"role":"following","phase":"discovery"}',
    'following {"leader":"p5","address":"127.0.0.1:28580"}',
    'phase {"role":"following","phase":"synchronization"}',
    'phase {"role":"following","phase":"synchronization"}',
    'phase {"role":"following","phase":"synchronization"}',
    'phase {"role":"following","phase":"broadcast"}',
    'serving {"leader":"p5"}',
    'log-error {"message":"Severe unrecoverable error, from thread : FollowerRequestProcessor:3"}',
    'leader-lost {"reason":"zk:exception when following the leader"}',
    'election-started {"reason":"zk:following→looking"}',
    'candidate {"sid":3,"zxid":"0x100005218"}',
    'elected {"leader":"p3"}',
    'election-took {"tookMs":439}',
    'phase {"role":"leading","phase":"discovery"}',
    'phase {"role":"leading","phase":"synchronization"}',
    'quorum {"epoch":2,"sids":[1,3,4]}',
    'phase {"role":"leading","phase":"broadcast"}',
    'serving {"epoch":2}',
  ]);
  // Times are the log's own (UTC, ms).
  assert.equal(events[0]!.t, Date.parse('2026-11-23T08:41:32.671Z'));
  // Elected when FLE decided, not when ZooKeeper logged its figure, 116 ms later (its Leader built).
  const won = events.find((e) => e.ev === 'elected' && e.leader === 'p3');
  const took = events.find((e) => e.ev === 'election-took' && e.t > (won?.t ?? Infinity));
  assert.equal(won?.t, Date.parse('2026-11-23T08:41:55.715Z'));
  assert.equal(took?.t, Date.parse('2026-11-23T08:41:55.831Z'));
});

test('a restarted member (a new JVM) is started again', () => {
  const translate = zkLogTranslator({
    memberId: 'p1',
    memberAtQuorumAddress: () => undefined,
    memberOfSid: () => undefined,
  });
  const start = LINES.slice(0, 4);
  assert.deepEqual(
    start.flatMap((l) => translate(l)).map((e) => e.ev),
    ['started', 'election-started', 'candidate'],
  );
  assert.deepEqual(
    start.flatMap((l) => translate(l)).map((e) => e.ev),
    ['started', 'election-started', 'candidate'],
  );
});

test('lines that are not log lines, or are in another layout, give nothing', () => {
  assert.equal(parseZkLogLine('java.net.SocketException: Connection reset'), undefined);
  assert.equal(parseZkLogLine('\tat java.base/java.net.Socket.read(Socket.java:966)'), undefined);
  // Debian's default layout, which the target replaces.
  assert.equal(
    parseZkLogLine('2026-11-23 08:28:38,534 - INFO  [QuorumPeer[myid=1]:QuorumPeer@1537] - FOLLOWING'),
    undefined,
  );
  const translate = zkLogTranslator({
    memberId: 'p1',
    memberAtQuorumAddress: () => undefined,
    memberOfSid: () => undefined,
  });
  // A vote naming LEADING is not this member leading (nor, cut short, a vote); "LOOKING" from
  // another logger is not a state.
  assert.deepEqual(
    translate(
      '2026-11-23T08:41:32.714Z INFO FastLeaderElection Notification: my state:LOOKING; n.sid:5, n.state:LEADING, n.leader:5',
    ),
    [],
  );
  assert.deepEqual(translate('2026-11-23T08:41:32.714Z INFO Learner LOOKING'), []);
});

test('the votes an elected member heard while looking, by member, with their round; none heard while following', () => {
  const lines = readFileSync(join(ROOT, 'test', 'fixtures', 'zookeeper-3.8-leader-votes-log.txt'), 'utf8');
  const translate = zkLogTranslator({
    memberId: 'p4',
    memberAtQuorumAddress: () => undefined,
    memberOfSid: (sid) => (sid <= 5 ? `p${sid}` : undefined),
  });
  const votes = lines
    .split('\n')
    .flatMap((l) => translate(l))
    .flatMap((e) => (e.ev === 'vote-heard' ? [`${e.from}:${e.fromState}→${e.leader}@${e.round}`] : []));
  // p2's own proposal came at 25.685, while p4 still followed p5: FLE answered it, did not count it.
  assert.deepEqual(votes, [
    'p4:looking→p4@2',
    'p3:following→p5@1',
    'p2:looking→p4@2',
    'p3:looking→p3@2',
    'p1:looking→p1@2',
    'p1:looking→p4@2',
    'p3:looking→p4@2',
  ]);
  const sidOnly = zkLogTranslator({
    memberId: 'p4',
    memberAtQuorumAddress: () => undefined,
    memberOfSid: () => undefined,
  });
  const [first] = lines
    .split('\n')
    .flatMap((l) => sidOnly(l))
    .filter((e) => e.ev === 'vote-heard');
  assert.deepEqual(first?.ev === 'vote-heard' && [first.from, first.leader, first.peerEpoch, first.zxid], [
    'sid 4',
    'sid 4',
    1,
    '0x100001dc6',
  ]);
});
