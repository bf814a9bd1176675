import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { MetricsRegistry } from '../../src/node/metrics.js';
import { startStatusServer } from '../../src/node/status-server.js';
import { wallClockMs } from '../../src/node/event-log.js';
import { monoMs } from '../../src/node/trace/write-tracer.js';
import type { NodeStatus, StatusServer } from '../../src/node/status-server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is a HELP, a TYPE or a sample;
 * a metric's TYPE comes once, before its samples; label values are properly quoted and escaped.
 */
function parsePrometheus(text: string): { types: Map<string, string>; samples: Sample[] } {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleRe = new RegExp(
    `^(${name})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (\\S+)(?: -?\\d+)?$`,
  );
  for (const line of text.slice(0, -1).split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${name}) (.*)$`).exec(line))) continue;
    if ((m = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      assert.ok(!types.has(m[1] ?? ''), `TYPE of ${m[1]} given twice`);
      types.set(m[1] ?? '', m[2] ?? '');
      continue;
    }
    m = sampleRe.exec(line);
    assert.ok(m, `not a valid exposition line: ${JSON.stringify(line)}`);
    const metric = m[1] ?? '';
    assert.ok(types.has(metric), `sample of ${metric} before its TYPE`);
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    assert.ok(m[3] === 'NaN' || !Number.isNaN(value), `bad value in ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] ?? ''] = (l[2] ?? '').replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: metric, labels, value });
  }
  return { types, samples };
}

/** A plain HTTP request to the loopback server, so status codes and headers are what the server sent. */
function get(
  port: number,
  path: string,
  method = 'GET',
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('status server', () => {
  let server: StatusServer;
  let status: NodeStatus & { extra: string };
  let failStatus = false;
  const metrics = new MetricsRegistry();
  const writes = metrics.counter('pole_writes_total', 'Client writes by outcome.', ['outcome']);
  const rtt = metrics.gauge('pole_rtt_ms', 'Mean RTT to a peer, "ms".\nSecond line of help.', ['peer']);
  const epoch = metrics.gauge('pole_epoch', 'Current epoch.');

  before(async () => {
    status = {
      id: 'p3',
      sid: 3,
      datacenter: 'east',
      role: 'following',
      phase: 'serving',
      epoch: 7,
      leader: 'p4',
      lastZxid: '7:12',
      commitZxid: '7:11',
      oracle: 'latency',
      scores: { latency: [2, -12.5, 12.5], history: [7, 12] },
      rttMs: { p3: 0, p4: 20.75 },
      requestRate: 250,
      extra: 'the lead may add fields',
    };
    server = await startStatusServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      status: () => {
        if (failStatus) throw new Error('status unavailable');
        return status;
      },
    });
  });
  after(() => server.close());

  it('binds an ephemeral port', () => {
    assert.ok(server.port > 0);
    assert.equal(server.host, '127.0.0.1');
  });

  it('serves /status as JSON from the supplied function, live', async () => {
    const first = await get(server.port, '/status');
    assert.equal(first.status, 200);
    assert.match(first.type, /^application\/json/);
    assert.deepEqual(JSON.parse(first.body), status);
    status = { ...status, role: 'looking', phase: 'election', epoch: 8 };
    const second = await get(server.port, '/status?pretty=0');
    assert.equal((JSON.parse(second.body) as NodeStatus).epoch, 8);
  });

  it('serves /metrics in Prometheus text format', async () => {
    writes.inc({ outcome: 'ok' }, 41);
    writes.inc({ outcome: 'ok' });
    writes.inc({ outcome: 'NO_QUORUM' });
    rtt.set(20.75, { peer: 'p4' });
    rtt.set(Infinity, { peer: 'we"ird\\peer' });
    epoch.set(8);
    const res = await get(server.port, '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.type, /^text\/plain; version=0\.0\.4/);
    const { types, samples } = parsePrometheus(res.body);
    assert.equal(types.get('pole_writes_total'), 'counter');
    assert.equal(types.get('pole_rtt_ms'), 'gauge');
    const find = (name: string, labels: Record<string, string>): number | undefined =>
      samples.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
    assert.equal(find('pole_writes_total', { outcome: 'ok' }), 42);
    assert.equal(find('pole_writes_total', { outcome: 'NO_QUORUM' }), 1);
    assert.equal(find('pole_rtt_ms', { peer: 'p4' }), 20.75);
    assert.equal(find('pole_rtt_ms', { peer: 'we"ird\\peer' }), Infinity);
    assert.equal(find('pole_epoch', {}), 8);
  });

  it('serves /clock: the clocks events and traces are stamped with, read within the round trip', async () => {
    const [sentMs, sentMono] = [wallClockMs(), monoMs()];
    const res = await get(server.port, '/clock');
    const [receivedMs, receivedMono] = [wallClockMs(), monoMs()];
    assert.equal(res.status, 200);
    assert.match(res.type, /^application\/json/);
    const r = JSON.parse(res.body) as { wallMs: number; monoMs: number };
    assert.ok(r.wallMs >= sentMs && r.wallMs <= receivedMs, `${sentMs} <= ${r.wallMs} <= ${receivedMs}`);
    assert.ok(
      r.monoMs >= sentMono && r.monoMs <= receivedMono,
      `${sentMono} <= ${r.monoMs} <= ${receivedMono}`,
    );
    assert.equal((await get(server.port, '/clock', 'POST')).status, 405);
  });

  it('answers 404 elsewhere, 405 for other methods and 500 when status fails', async () => {
    assert.equal((await get(server.port, '/')).status, 404);
    assert.equal((await get(server.port, '/statusx')).status, 404);
    assert.equal((await get(server.port, '/status', 'POST')).status, 405);
    failStatus = true;
    try {
      const res = await get(server.port, '/status');
      assert.equal(res.status, 500);
      assert.match(res.body, /status unavailable/);
    } finally {
      failStatus = false;
    }
  });

  it('closes with a keep-alive client connected, and stops answering', async () => {
    const other = await startStatusServer({ host: '127.0.0.1', port: 0, metrics, status: () => status });
    const res = await fetch(`http://127.0.0.1:${other.port}/status`);
    assert.equal(res.status, 200);
    await res.text();
    await other.close();
    await assert.rejects(get(other.port, '/status'));
  });
});
