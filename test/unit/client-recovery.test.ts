// What each data center's clients saw of a failover (report/client-recovery.ts), from a recorded
// paper-2dc run (test/fixtures/recovery-2dc-run.json) and from made-up records for the edge cases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientRecovery, type AgentRecord } from '../../src/report/client-recovery.js';
import { ROOT } from '../support/run-cli.js';

interface RecordedRun {
  readonly killAt: number;
  readonly scheduledAt: number;
  readonly agents: Record<string, AgentRecord & { readonly firstAckAfter: Record<string, number> }>;
  readonly events: ReadonlyArray<{ t: number; node: string; ev: string; epoch?: number; leader?: string }>;
}

const run = JSON.parse(
  readFileSync(join(ROOT, 'test', 'fixtures', 'recovery-2dc-run.json'), 'utf8'),
) as RecordedRun;
const agents = new Map(Object.entries(run.agents));

describe('clientRecovery on a recorded run', () => {
  // The deciding election's epoch, as buildResult takes it: the new leader's own `elected` event.
  const elected = run.events.find((e) => e.ev === 'elected' && e.node === e.leader && e.node !== 'p5');
  const epoch = elected?.epoch ?? null;

  it('gives each data center the fault to its first acknowledged write of the new epoch', () => {
    assert.equal(epoch, 2);
    const r = clientRecovery(['tud', 'cern'], agents, run.killAt, epoch);
    // By hand from the fixture: tud's first epoch-2 ack 1795670895156.058 − kill 1795670894443.685,
    // cern's 1795670895069.9744 − the same.
    assert.equal(r.tud?.outageMs, 712.373);
    assert.equal(r.cern?.outageMs, 626.289);
    // The longest silences, ended by an acknowledgement in the fault's window.
    assert.equal(r.tud?.longestAckGapMs, 585.514);
    assert.equal(r.cern?.longestAckGapMs, 569.8);
  });

  it('is not the old "client gap": the first ack after the fault was a write the dead leader committed', () => {
    const r = clientRecovery(['tud', 'cern'], agents, run.killAt, epoch);
    for (const dc of ['tud', 'cern']) {
      // The old figure: the first acknowledgement in the fault's phase, ~8 ms after the kill, of a
      // write p5 had committed; the clients then heard nothing new for 600-700 ms.
      const old = run.agents[dc]!.firstAckAfter.gap! - run.killAt;
      assert.ok(old < 10, `${dc}: old ${old}`);
      assert.ok(r[dc]!.outageMs! > 50 * old, `${dc}: outage ${r[dc]!.outageMs} against the old ${old}`);
    }
  });

  it('waits for the new leader: every outage is at least its first commit', () => {
    const fault = run.killAt;
    const firstCommit = run.events.find((e) => e.ev === 'first-commit' && e.node === elected?.node);
    assert.ok(firstCommit);
    const r = clientRecovery(['tud', 'cern'], agents, fault, epoch);
    for (const dc of ['tud', 'cern']) assert.ok(r[dc]!.outageMs! >= firstCommit.t - fault, dc);
  });
});

describe('clientRecovery on made-up records', () => {
  const K = 1_000_000;
  it('never counts an acknowledgement the old leader gave after the fault: not negative', () => {
    // As the issue saw it: the agents' fault phase began 4.1 ms before the kill was carried out, a
    // write p5 had committed came back in it at K − 3.5 ms, and the new epoch's first at K + 352.
    const a: AgentRecord = {
      firstAckByEpoch: { '1': K - 20_000, '2': K + 352 },
      longestAckGap: { gap: { ms: 355.5, fromMs: K - 3.5, toMs: K + 352 } },
    };
    const r = clientRecovery(['cern'], new Map([['cern', a]]), K, 2);
    assert.deepEqual(r.cern, { outageMs: 352, longestAckGapMs: 355.5 });
  });

  it('counts a later epoch when the first elected leader never committed, and a silence that outlasted the window', () => {
    const a: AgentRecord = {
      firstAckByEpoch: { '1': K - 20_000, '5': K + 25_000 },
      longestAckGap: {
        gap: { ms: 48, fromMs: K - 10, toMs: K + 38 },
        after: { ms: 24_962, fromMs: K + 38, toMs: K + 25_000 },
      },
    };
    const r = clientRecovery(['tud'], new Map([['tud', a]]), K, 2);
    assert.deepEqual(r.tud, { outageMs: 25_000, longestAckGapMs: 24_962 });
  });

  it('leaves a later silence in "after" out once the outage was over', () => {
    const a: AgentRecord = {
      firstAckByEpoch: { '2': K + 400 },
      longestAckGap: {
        gap: { ms: 390, fromMs: K + 10, toMs: K + 400 },
        after: { ms: 900, fromMs: K + 20_000, toMs: K + 20_900 },
      },
    };
    assert.equal(clientRecovery(['tud'], new Map([['tud', a]]), K, 2).tud?.longestAckGapMs, 390);
  });

  it('says null, not 0, for what was not observed', () => {
    const r = clientRecovery(
      ['tud', 'lax'],
      new Map([['tud', { firstAckByEpoch: {}, longestAckGap: {} }]]),
      K,
      2,
    );
    assert.deepEqual(r, {
      tud: { outageMs: null, longestAckGapMs: null },
      lax: { outageMs: null, longestAckGapMs: null },
    });
    assert.deepEqual(clientRecovery(['tud'], new Map(), null, null).tud, {
      outageMs: null,
      longestAckGapMs: null,
    });
  });
});
