import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNodeConfig, membersOf } from '../../src/node/config.js';
import { InputError } from '../../src/util/input-error.js';

const base = `id: p3
datacenter: east
listen:
  peerPort: 0
  clientPort: 0
  httpPort: 0
peers:
  - id: p1
    host: 127.0.0.1
    port: 4001
    datacenter: west
  - id: p2
    host: 127.0.0.1
    port: 4002
  - id: p4
    host: 127.0.0.1
    port: 4004
dataDir: data/p3
`;

/** 1-based line and column of the `nth` occurrence of `needle` in `text`. */
function posOf(text: string, needle: string, nth = 1): [number, number] {
  let at = -1;
  for (let i = 0; i < nth; i++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at >= 0, `fixture has no occurrence ${nth} of ${needle}`);
  }
  const before = text.slice(0, at);
  return [before.split('\n').length, at - before.lastIndexOf('\n')];
}

describe('loadNodeConfig', () => {
  let dir: string;
  let n = 0;
  const write = (text: string): string => {
    const file = join(dir, `node${n++}.yaml`);
    writeFileSync(file, text);
    return file;
  };
  const fails = (text: string): InputError => {
    const file = write(text);
    try {
      loadNodeConfig(file);
    } catch (err) {
      assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`);
      const field = err.field ? `${err.field}: ` : '';
      assert.ok(
        err.message.startsWith(`${file}:${String(err.line)}:${String(err.column)}: ${field}`),
        err.message,
      );
      return err;
    }
    assert.fail('expected the config to be rejected');
  };
  /** Asserts the error names `field` and sits at the `nth` occurrence of `needle`. */
  const expectAt = (
    err: InputError,
    field: string,
    text: string,
    needle: string,
    nth = 1,
    shift = 0,
  ): void => {
    assert.equal(err.field, field, err.message);
    const [line, column] = posOf(text, needle, nth);
    assert.deepEqual([err.line, err.column], [line, column + shift], err.message);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fills in defaults and derives sids from ids', () => {
    const cfg = loadNodeConfig(write(base));
    assert.equal(cfg.id, 'p3');
    assert.equal(cfg.sid, 3);
    assert.equal(cfg.datacenter, 'east');
    assert.deepEqual(cfg.listen, { host: '127.0.0.1', peerPort: 0, clientPort: 0, httpPort: 0 });
    assert.deepEqual(
      cfg.peers.map((p) => [p.id, p.sid, p.port, p.datacenter]),
      [
        ['p1', 1, 4001, 'west'],
        ['p2', 2, 4002, undefined],
        ['p4', 4, 4004, undefined],
      ],
    );
    assert.equal(cfg.dataDir, join(dir, 'data/p3'), 'a relative dataDir is relative to the config file');
    assert.equal(cfg.fsync, true);
    assert.equal(cfg.oracle, 'history');
    assert.equal(cfg.preference, undefined);
    assert.equal(cfg.initialLeader, undefined);
    assert.deepEqual(cfg.timers, {
      tickMs: 50,
      syncLimit: 5,
      initLimit: 10,
      electionTimeoutMs: 100,
      retryBaseMs: 100,
      heartbeatMs: 1000,
    });
    assert.equal(cfg.snapshotEvery, 100_000);
    assert.equal(cfg.maxWriteBytes, 1024 * 1024);
  });

  it('derives the election timers from the tick, unless given', () => {
    const derived = loadNodeConfig(write(`${base}timers:\n  tickMs: 20\n`));
    assert.equal(derived.timers.electionTimeoutMs, 40);
    assert.equal(derived.timers.retryBaseMs, 40);
    const given = loadNodeConfig(write(`${base}timers:\n  tickMs: 20\n  electionTimeoutMs: 300\n`));
    assert.equal(given.timers.retryBaseMs, 300);
  });

  it('takes explicit sids, oracles with their options and an initial leader', () => {
    const text =
      base.replace('id: p3\n', 'id: alpha\nsid: 9\n') +
      'oracle: preference\npreference: [p4, alpha]\ninitialLeader: p4\nfsync: false\n';
    const cfg = loadNodeConfig(write(text));
    assert.equal(cfg.sid, 9);
    assert.deepEqual(cfg.preference, ['p4', 'alpha']);
    assert.equal(cfg.initialLeader, 'p4');
    assert.equal(cfg.fsync, false);
    assert.deepEqual(membersOf(cfg), [
      { id: 'p1', sid: 1 },
      { id: 'p2', sid: 2 },
      { id: 'p4', sid: 4 },
      { id: 'alpha', sid: 9 },
    ]);
  });

  it('rejects a duplicate peer id at that peer', () => {
    const text = base.replace('id: p4', 'id: p1');
    expectAt(fails(text), 'peers[2].id', text, 'p1', 2);
  });

  it('rejects the node listing itself among its peers', () => {
    const text = base.replace('id: p2', 'id: p3');
    const err = fails(text);
    expectAt(err, 'peers[1].id', text, 'p3', 2);
    assert.match(err.problem, /itself/);
  });

  it('rejects duplicate explicit sids', () => {
    const text = base.replace('    port: 4004\n', '    port: 4004\n    sid: 2\n');
    const err = fails(text);
    expectAt(err, 'peers[2].sid', text, 'sid: 2', 1, 'sid: '.length);
    assert.match(err.problem, /duplicate sid 2, also used by peers\[1\] \(p2\)/);
  });

  it('rejects a sid implied by an id that another member has, at the id', () => {
    const text = base.replace('id: p4', 'id: q3');
    const err = fails(text);
    expectAt(err, 'peers[2].id', text, 'q3');
    assert.match(err.problem, /duplicate sid 3 \(implied by the id\), also used by this node \(p3\)/);
  });

  it('asks for a sid when the id has no number', () => {
    const text = base.replace('id: p3', 'id: alpha');
    const err = fails(text);
    assert.equal(err.field, 'sid');
    assert.match(err.problem, /alpha/);
  });

  it('rejects an initial leader that is not a member', () => {
    const text = `${base}initialLeader: p9\n`;
    const err = fails(text);
    expectAt(err, 'initialLeader', text, 'p9');
    assert.match(err.problem, /not a member/);
  });

  it('rejects an unknown oracle', () => {
    const text = `${base}oracle: fastest\n`;
    const err = fails(text);
    expectAt(err, 'oracle', text, 'fastest');
    assert.match(err.problem, /unknown score oracle "fastest"/);
  });

  it('rejects the preference oracle without a preference list', () => {
    const text = `${base}oracle: preference\n`;
    const err = fails(text);
    expectAt(err, 'oracle', text, 'preference');
    assert.match(err.problem, /preference list/);
  });

  it('rejects a preference naming a non-member', () => {
    const text = `${base}oracle: preference\npreference: [p1, p7]\n`;
    expectAt(fails(text), 'preference[1]', text, 'p7');
  });

  it('rejects clusters that cannot survive losing their leader', () => {
    const text = base.replace(/ {2}- id: p2\n.*\n.*\n {2}- id: p4\n.*\n.*\n/, '');
    const err = fails(text);
    expectAt(err, 'peers', text, '- id: p1');
    assert.match(err.problem, /cluster of 2 servers cannot survive losing its leader/);
  });

  it('rejects non-positive timers with the field path', () => {
    const text = `${base}timers:\n  tickMs: 0\n`;
    const err = fails(text);
    expectAt(err, 'timers.tickMs', text, '0\n', 4);
    assert.match(err.problem, /^expected a positive number/);
  });

  it('rejects ports out of range and misspelt fields', () => {
    const bad = base.replace('port: 4002', 'port: 70000');
    expectAt(fails(bad), 'peers[1].port', bad, '70000');
    const typo = `${base}fsynk: false\n`;
    const err = fails(typo);
    expectAt(err, 'fsynk', typo, 'fsynk');
    assert.equal(err.problem, 'unknown field');
  });

  it('reports a missing required field at its parent', () => {
    const text = base.replace('  httpPort: 0\n', '');
    const err = fails(text);
    expectAt(err, 'listen.httpPort', text, 'listen:');
  });

  it('gives line and column for YAML syntax errors', () => {
    const text = base.replace('  clientPort: 0\n', '  clientPort: [0\n');
    const err = fails(text);
    assert.equal(err.field, '');
    assert.ok(err.line !== undefined && err.line >= 5, err.message);
    assert.match(err.problem, /^invalid YAML: /);
  });
});
