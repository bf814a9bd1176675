// ZooKeeper's multi of creates, byte by byte as zookeeper.jute lays it out (MultiHeader,
// CreateRequest, MultiResponse); the real server's answer is tested in
// test/integration/zookeeper-ensemble.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JuteReader, JuteWriter } from '../../src/targets/zookeeper/client/jute.js';
import { decodeReplyBody, encodeRequest, OpCode } from '../../src/targets/zookeeper/client/zk-protocol.js';

/** A CreateRequest of an empty persistent node open to all, as encodeRequest writes one. */
const create = (w: JuteWriter, path: string): JuteWriter =>
  w.ustring(path).buffer(new Uint8Array(0)).int(1).int(31).ustring('world').ustring('anyone').int(0);

describe('zk-protocol: multi', () => {
  it('frames each create behind its header and closes with a done header', () => {
    const got = encodeRequest(7, {
      op: 'multi',
      creates: ['/d/s0', '/d/s1'].map((path) => ({ path, data: new Uint8Array(0), mode: 'persistent' })),
    });
    const want = new JuteWriter().int(7).int(14);
    create(want.int(1).bool(false).int(-1), '/d/s0');
    create(want.int(1).bool(false).int(-1), '/d/s1');
    want.int(-1).bool(true).int(-1);
    assert.deepEqual(got, want.frame());
    assert.equal(OpCode.multi, 14);
  });

  it('reads each create’s path, and the codes of a multi that failed', () => {
    const ok = new JuteWriter()
      .int(1)
      .bool(false)
      .int(0)
      .ustring('/d/s0')
      .int(1)
      .bool(false)
      .int(0)
      .ustring('/d/s1')
      .int(-1)
      .bool(true)
      .int(-1)
      .frame();
    assert.deepEqual(decodeReplyBody('multi', new JuteReader(ok.subarray(4))), {
      op: 'multi',
      results: [{ path: '/d/s0' }, { path: '/d/s1' }],
    });
    // The second of three exists: OK before it, NODEEXISTS (-110), RUNTIMEINCONSISTENCY (-2) after.
    const failed = new JuteWriter();
    for (const code of [0, -110, -2]) failed.int(-1).bool(false).int(code).int(code);
    failed.int(-1).bool(true).int(-1);
    assert.deepEqual(decodeReplyBody('multi', new JuteReader(failed.frame().subarray(4))), {
      op: 'multi',
      results: [{ err: 0 }, { err: -110 }, { err: -2 }],
    });
  });

  it('refuses a result of a kind it never asked for', () => {
    const setData = new JuteWriter().int(5).bool(false).int(0).frame();
    assert.throws(
      () => decodeReplyBody('multi', new JuteReader(setData.subarray(4))),
      /a multi result of type 5/,
    );
  });
});
