import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameDecoder, frame } from '../../src/util/wire/frame-decoder.js';

function payloads(): Buffer[] {
  return [
    Buffer.from('a'),
    Buffer.alloc(0),
    Buffer.from('hello world'),
    Buffer.alloc(300, 7),
    Buffer.from([1, 2, 3]),
  ];
}

test('frames split at every possible byte boundary come out whole and in order', () => {
  const stream = Buffer.concat(payloads().map(frame));
  for (let cut = 0; cut <= stream.length; cut++) {
    for (let cut2 = cut; cut2 <= stream.length; cut2 += 17) {
      const d = new FrameDecoder(1024);
      const out: Buffer[] = [];
      for (const part of [stream.subarray(0, cut), stream.subarray(cut, cut2), stream.subarray(cut2)]) {
        assert.equal(
          d.push(part, (f) => out.push(Buffer.from(f))),
          undefined,
        );
      }
      assert.deepEqual(out, payloads(), `cuts at ${cut}/${cut2}`);
      assert.equal(d.finish(), undefined);
    }
  }
});

test('one byte at a time', () => {
  const stream = Buffer.concat(payloads().map(frame));
  const d = new FrameDecoder(1024);
  const out: Buffer[] = [];
  for (const b of stream) d.push(Buffer.from([b]), (f) => out.push(Buffer.from(f)));
  assert.deepEqual(out, payloads());
});

test('a frame wholly inside a chunk is a view of the chunk, not a copy', () => {
  const chunk = Buffer.concat([frame(Buffer.from('abc')), frame(Buffer.from('defg'))]);
  const d = new FrameDecoder(1024);
  const out: Buffer[] = [];
  d.push(chunk, (f) => out.push(f));
  assert.equal(out.length, 2);
  assert.equal(out[0]?.buffer, chunk.buffer);
  assert.equal(out[1]?.byteOffset, chunk.byteOffset + 11);
});

test('an oversize length is reported as soon as the header is in, and the decoder stays failed', () => {
  const d = new FrameDecoder(100);
  const frames: Buffer[] = [];
  assert.equal(
    d.push(frame(Buffer.alloc(100)), (f) => frames.push(f)),
    undefined,
  );
  const head = Buffer.alloc(4);
  head.writeUInt32BE(101);
  const err = d.push(head, (f) => frames.push(f));
  assert.deepEqual(err, { kind: 'oversize', length: 101, max: 100 });
  assert.equal(d.buffered, 0, 'nothing buffered towards the oversize frame');
  // Whatever follows is ignored.
  assert.deepEqual(
    d.push(frame(Buffer.from('x')), (f) => frames.push(f)),
    err,
  );
  assert.equal(frames.length, 1);
});

test('garbage (a huge "length") is rejected without buffering', () => {
  const d = new FrameDecoder(1 << 20);
  const err = d.push(Buffer.from('GET / HTTP/1.1\r\n'), () => assert.fail('no frame expected'));
  assert.equal(err?.kind, 'oversize');
});

test('finish reports a truncated frame, in the header or in the body', () => {
  const inHeader = new FrameDecoder(10);
  inHeader.push(Buffer.from([0, 0]), () => undefined);
  assert.deepEqual(inHeader.finish(), { kind: 'truncated', buffered: 2 });

  const inBody = new FrameDecoder(10);
  inBody.push(frame(Buffer.from('abcdef')).subarray(0, 7), () => undefined);
  assert.deepEqual(inBody.finish(), { kind: 'truncated', buffered: 7 });

  const clean = new FrameDecoder(10);
  clean.push(frame(Buffer.from('ab')), () => undefined);
  assert.equal(clean.finish(), undefined);
});

test('the limit can be raised (after a handshake)', () => {
  const d = new FrameDecoder(4);
  d.maxFrameBytes = 1000;
  const out: Buffer[] = [];
  assert.equal(
    d.push(frame(Buffer.alloc(500)), (f) => out.push(f)),
    undefined,
  );
  assert.equal(out[0]?.length, 500);
});
