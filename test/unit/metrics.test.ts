import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricsRegistry } from '../../src/node/metrics.js';

describe('MetricsRegistry', () => {
  it('renders HELP, TYPE and one line per series, labels in declared order', () => {
    const reg = new MetricsRegistry();
    const c = reg.counter('msgs_total', 'Messages sent.', ['to', 'type']);
    const g = reg.gauge('role', 'Role: 0 looking, 1 following, 2 leading.');
    c.inc({ type: 'P', to: 'p2' });
    c.inc({ to: 'p2', type: 'P' }, 2);
    c.inc({ to: 'p1', type: 'V' });
    g.set(2);
    g.dec();
    assert.equal(
      reg.render(),
      [
        '# HELP msgs_total Messages sent.',
        '# TYPE msgs_total counter',
        'msgs_total{to="p2",type="P"} 3',
        'msgs_total{to="p1",type="V"} 1',
        '# HELP role Role: 0 looking, 1 following, 2 leading.',
        '# TYPE role gauge',
        'role 1',
        '',
      ].join('\n'),
    );
    assert.equal(c.get({ to: 'p2', type: 'P' }), 3);
  });

  it('shows an untouched unlabelled metric as 0 and runs collectors before rendering', () => {
    const reg = new MetricsRegistry();
    reg.counter('errors_total', 'Errors.');
    const lag = reg.gauge('lag', 'Lag.');
    let calls = 0;
    reg.onCollect(() => lag.set(++calls));
    assert.match(reg.render(), /^errors_total 0$/m);
    assert.match(reg.render(), /^lag 2$/m);
  });

  it('refuses misuse loudly', () => {
    const reg = new MetricsRegistry();
    const c = reg.counter('a_total', 'A.', ['peer']);
    assert.throws(() => c.inc({}), /labels/);
    assert.throws(() => c.inc({ peer: 'p1', extra: 'x' }), /labels/);
    assert.throws(() => c.inc({ peer: 'p1' }, -1), /cannot go down/);
    assert.throws(() => reg.gauge('a_total', 'again'), /twice/);
    assert.throws(() => reg.gauge('bad-name', 'x'), /invalid metric name/);
    assert.throws(() => reg.gauge('ok', 'x', ['__reserved']), /invalid label name/);
  });

  it('forgets labelled series on reset', () => {
    const reg = new MetricsRegistry();
    const g = reg.gauge('rtt_ms', 'RTT.', ['peer']);
    g.set(5, { peer: 'p1' });
    g.reset();
    assert.doesNotMatch(reg.render(), /peer=/);
  });
});
