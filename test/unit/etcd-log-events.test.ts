// etcd 3.4's zap log lines as the shared events (targets/etcd/etcd-log-events.ts), on lines
// captured from a member of a three-member run (test/fixtures/etcd-3.4-member-log.txt: e2, whose
// etcd id is 9156fdb836abf589; e1 = 559de47e55431675, e3 = 208d171d797fcf3): it follows e1, then
// e3 after MoveLeader, loses e3 to a kill, is elected itself, and steps down at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { etcdLogTranslator, parseEtcdLogLine } from '../../src/targets/etcd/etcd-log-events.js';
import { ROOT } from '../support/run-cli.js';

const LINES = readFileSync(join(ROOT, 'test', 'fixtures', 'etcd-3.4-member-log.txt'), 'utf8')
  .trim()
  .split('\n');
const IDS: Record<string, string> = {
  '559de47e55431675': 'e1',
  '9156fdb836abf589': 'e2',
  '208d171d797fcf3': 'e3',
};

test('a zap line parses to its time, level, call site and message; anything else is not a line', () => {
  assert.deepEqual(parseEtcdLogLine(LINES[4]!), {
    t: Date.parse('2026-11-26T12:20:49.164Z'),
    level: 'info',
    caller: 'raft/node.go:327',
    msg: 'raft.node: 9156fdb836abf589 elected leader 559de47e55431675 at term 2',
  });
  assert.equal(parseEtcdLogLine('Usage:'), undefined);
  assert.equal(parseEtcdLogLine('{"level":"info"}'), undefined);
  assert.equal(parseEtcdLogLine('{not json'), undefined);
});

test("a member's lines become its events: following, started, detection, its own election, stepping down", () => {
  const translate = etcdLogTranslator({ memberId: 'e2', nodeOf: (id) => IDS[id] });
  const events = LINES.flatMap((l) => translate(l));
  assert.deepEqual(
    events.map((e) => [e.ev, 'leader' in e ? e.leader : undefined, 'epoch' in e ? e.epoch : undefined]),
    [
      ['following', 'e1', 2],
      ['serving', 'e1', undefined],
      ['started', undefined, undefined],
      ['leader-lost', 'e1', 3],
      ['following', 'e3', 3],
      ['serving', 'e3', undefined],
      ['election-started', undefined, undefined],
      ['leader-lost', 'e3', 4],
      ['elected', 'e2', 4],
      ['serving', undefined, 4],
      ['stepped-down', undefined, 4],
    ],
  );
  for (const e of events) {
    assert.equal(e.node, 'e2');
    assert.equal(e.src, 'etcd-log');
  }
  // Stamped with etcd's own time, ms precision.
  const elected = events.find((e) => e.ev === 'elected')!;
  assert.equal(elected.t, Date.parse('2026-11-26T12:21:03.678Z'));
});

test('a restart is a start again; a member id nobody maps is named as etcd names it', () => {
  const translate = etcdLogTranslator({ memberId: 'e2', nodeOf: () => undefined });
  const all = [...LINES, ...LINES].flatMap((l) => translate(l));
  assert.equal(all.filter((e) => e.ev === 'started').length, 2);
  assert.ok(all.some((e) => e.ev === 'following' && e.leader === 'etcd:559de47e55431675'));
});

test('error lines become log-error events with their message', () => {
  const translate = etcdLogTranslator({ memberId: 'e1', nodeOf: () => undefined });
  const line = JSON.stringify({
    level: 'fatal',
    ts: '2026-11-26T12:00:00.000Z',
    caller: 'etcdmain/etcd.go:271',
    msg: 'discovery failed',
  });
  assert.deepEqual(
    translate(line).map((e) => [e.ev, e.ev === 'log-error' ? e.message : '']),
    [['log-error', 'discovery failed']],
  );
});
