import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { EventLog, MemorySink, StreamSink, wallClockMs } from '../../src/node/event-log.js';

describe('EventLog', () => {
  it('writes one JSON object per line with t, node and ev first', () => {
    const sink = new MemorySink();
    const log = new EventLog('p3', { out: sink });
    log.emit('elected', { epoch: 7, leader: 'p4', scores: { p4: [3] } });
    log.emitEvent({ ev: 'phase', phase: 'sync' });
    assert.equal(sink.lines.length, 2);
    for (const line of sink.lines) {
      assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'exactly one line per event');
      assert.match(line, /^\{"t":\d+(\.\d{1,3})?,"node":"p3","ev":"/);
    }
    const [elected, phase] = sink.records();
    assert.deepEqual(
      { ...elected, t: 0 },
      { t: 0, node: 'p3', ev: 'elected', epoch: 7, leader: 'p4', scores: { p4: [3] } },
    );
    assert.equal(phase?.ev, 'phase');
    assert.equal(phase?.phase, 'sync');
  });

  it('keeps its own t, node and ev over same-named fields', () => {
    const sink = new MemorySink();
    new EventLog('p1', { out: sink, now: () => 5 }).emit('x', { t: 1, node: 'evil', ev: 'y', ok: true });
    assert.deepEqual(sink.records()[0], { t: 5, node: 'p1', ev: 'x', ok: true });
  });

  it('stamps wall-clock milliseconds with microsecond resolution, never going backwards', () => {
    const sink = new MemorySink();
    const log = new EventLog('p1', { out: sink });
    const start = Date.now();
    for (let i = 0; i < 5000; i++) log.emit('tick', { i });
    const end = Date.now();
    const ts = sink.records().map((r) => r.t);
    let fractional = 0;
    for (let i = 0; i < ts.length; i++) {
      const t = ts[i] ?? NaN;
      // Different clocks (monotonic origin vs Date.now) may disagree by a millisecond or two.
      assert.ok(t >= start - 5 && t <= end + 5, `t=${t} outside [${start}, ${end}]`);
      assert.ok(Math.abs(t * 1000 - Math.round(t * 1000)) < 1e-3, `t=${t} has more than 3 decimals`);
      if (t !== Math.floor(t)) fractional++;
      if (i > 0) assert.ok(t >= (ts[i - 1] ?? Infinity), `t went backwards at line ${i}`);
    }
    assert.ok(fractional > ts.length / 2, 'timestamps carry sub-millisecond digits');
    assert.ok(new Set(ts).size > 1);
  });

  it('does not let a clock that steps back reorder its lines', () => {
    const times = [10.5, 12.25, 11, 13];
    const sink = new MemorySink();
    const log = new EventLog('p1', { out: sink, now: () => times.shift() ?? 0 });
    for (let i = 0; i < 4; i++) log.emit('e');
    assert.deepEqual(
      sink.records().map((r) => r.t),
      [10.5, 12.25, 12.25, 13],
    );
  });

  it('serialises odd values and survives unserialisable ones', () => {
    const sink = new MemorySink();
    const log = new EventLog('p1', { out: sink, now: () => 1 });
    log.emit('odd', {
      big: 2n ** 64n,
      map: new Map([['a', 1]]),
      set: new Set([1, 2]),
      data: new Uint8Array(1024),
    });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    log.emit('bad', { circular });
    const [odd, bad] = sink.records();
    assert.deepEqual(odd, {
      t: 1,
      node: 'p1',
      ev: 'odd',
      big: '18446744073709551616',
      map: { a: 1 },
      set: [1, 2],
      data: { bytes: 1024 },
    });
    assert.equal(bad?.ev, 'bad');
    assert.match(String(bad?.unserialisable), /circular/i);
  });

  it('wallClockMs is close to Date.now', () => {
    assert.ok(Math.abs(wallClockMs() - Date.now()) < 50);
  });
});

describe('StreamSink', () => {
  it('buffers behind a slow stream and loses nothing', async () => {
    const received: string[] = [];
    let writes = 0;
    const slow = new Writable({
      highWaterMark: 256,
      write(chunk: Buffer, _enc, done) {
        writes++;
        received.push(chunk.toString());
        setImmediate(done); // a reader that takes its time
      },
    });
    let blocked = 0;
    const origWrite = slow.write.bind(slow);
    // Count how often the stream asked us to wait, to be sure the test exercised backpressure.
    slow.write = ((chunk: unknown, cb?: unknown) => {
      const ok = origWrite(chunk as string, cb as () => void);
      if (!ok) blocked++;
      return ok;
    }) as typeof slow.write;
    const log = new EventLog('p2', { out: new StreamSink(slow) });
    const n = 3000;
    for (let i = 0; i < n; i++) log.emit('w', { i });
    await log.flush();
    const lines = received.join('').split('\n').filter(Boolean);
    assert.equal(lines.length, n);
    lines.forEach((line, i) => assert.equal((JSON.parse(line) as { i: number }).i, i));
    assert.ok(blocked > 0, 'the stream pushed back at least once');
    assert.ok(writes < n, `queued lines went out in batches (${writes} writes for ${n} lines)`);
  });
});

describe('stdout as a pipe', () => {
  it('delivers every line to a reader that is not reading, even when the process exits at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'event-log-'));
    try {
      const child = join(dir, 'child.mjs');
      const module = new URL('../../src/node/event-log.js', import.meta.url).href;
      const n = 20000;
      // Emits far more than a pipe holds while nobody reads, then exits without flushing.
      writeFileSync(
        child,
        `import { writeSync } from 'node:fs';
import { EventLog, stdoutSink } from ${JSON.stringify(module)};
const log = new EventLog('p5');
for (let i = 0; i < ${n}; i++) log.emit('write', { i, pad: 'x'.repeat(100) });
writeSync(2, JSON.stringify(stdoutSink().stats) + '\\n');
process.exit(0);
`,
      );
      const proc = spawn(process.execPath, [child], { stdio: ['ignore', 'pipe', 'pipe'] });
      proc.stdout.pause();
      const chunks: Buffer[] = [];
      let stderr = '';
      const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
      // Start reading only once the child has emitted everything (it says so on stderr).
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child never finished emitting: ${stderr}`)), 10_000);
        proc.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('\n')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      proc.stdout.on('data', (d: Buffer) => chunks.push(d));
      proc.stdout.resume();
      assert.equal(await exited, 0, stderr);
      const stats = JSON.parse(stderr.split('\n')[0] ?? '{}') as { deferred: number; dropped: number };
      assert.ok(stats.deferred > 0, `the pipe pushed back (stats ${JSON.stringify(stats)})`);
      assert.equal(stats.dropped, 0);
      const lines = Buffer.concat(chunks).toString().split('\n');
      assert.equal(lines.pop(), '', 'output ends with a newline');
      assert.equal(lines.length, n);
      lines.forEach((line, i) => {
        const r = JSON.parse(line) as { i: number; node: string };
        assert.equal(r.i, i);
        assert.equal(r.node, 'p5');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
