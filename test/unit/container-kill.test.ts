// Which stamp a container's kill gets (runtime/docker/container-kill.ts): the daemon's `kill` event,
// held between the request and the exit the daemon recorded; and that event read from the
// daemon's event stream as it comes, among other containers' and partial lines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { killEventTime, killInstant } from '../../src/runtime/docker/container-kill.js';

describe("a container's kill instant", () => {
  it('is the kill event, never before the request nor after the exit', () => {
    assert.equal(killInstant({ askedAt: 1000, signalledAt: 1040, exitedAt: 1046 }), 1040);
    // Logged after `runc kill` returned, the event may come after a small process's exit.
    assert.equal(killInstant({ askedAt: 1000, signalledAt: 1046, exitedAt: 1043 }), 1043);
    // A stamp before the request is another clock's error, or Docker's zero time.
    assert.equal(killInstant({ askedAt: 1000, signalledAt: 990, exitedAt: 1043 }), 1043);
    assert.equal(killInstant({ askedAt: 1000, signalledAt: 1040, exitedAt: -62135596800000 }), 1040);
  });

  it('falls back to the exit, then the request, where the daemon logged no kill', () => {
    assert.equal(killInstant({ askedAt: 1000, signalledAt: null, exitedAt: 1050 }), 1050);
    // Already dead before it was asked: the request is all there is.
    assert.equal(killInstant({ askedAt: 1000, signalledAt: null, exitedAt: 900 }), 1000);
    assert.equal(killInstant({ askedAt: 1000, signalledAt: null, exitedAt: null }), 1000);
  });

  it("is read from the daemon's events: this container's kill, to the sub-ms", async () => {
    const stream = new PassThrough();
    const at = killEventTime(stream, 'abc');
    // timeNano as the daemon writes it: more digits than a double holds, kept to ~0.25 µs.
    const event = (id: string, action: string, ns: string): string =>
      `{"status":"${action}","id":"${id}","Type":"container","Action":"${action}","Actor":{"ID":"${id}"},"timeNano":${ns}}`;
    stream.write(`${event('other', 'kill', '1795822486000000000')}\n`);
    stream.write(`${event('abc', 'die', '1795822486100000000')}\nnot json\n`);
    // A line in two chunks.
    const line = `${event('abc', 'kill', '1795822486993800500')}\n`;
    stream.write(line.slice(0, 40));
    stream.write(line.slice(40));
    assert.ok(Math.abs((await at)! - 1_795_822_486_993.8005) < 0.001);
  });

  it('is null when the stream ends without it', async () => {
    const stream = new PassThrough();
    const at = killEventTime(stream, 'abc');
    stream.end('{"Action":"kill","Actor":{"ID":"zzz"},"timeNano":1}\n');
    assert.equal(await at, null);
  });
});
