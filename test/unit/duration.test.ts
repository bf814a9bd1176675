import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatDuration, parseDuration, parsePercent } from '../../src/util/duration.js';

test('durations in every unit become milliseconds', () => {
  assert.equal(parseDuration('9.88ms'), 9.88);
  assert.equal(parseDuration('120s'), 120_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('500us'), 0.5);
  assert.equal(parseDuration('500µs'), 0.5);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('0s'), 0);
  assert.equal(parseDuration('.5s'), 500);
  assert.equal(parseDuration(' 10 ms '), 10);
});

test('durations without a unit, negative or junk are rejected with the text in the message', () => {
  for (const bad of ['10', '-5s', '5 sec', 's', '', '1e3ms', '5s5']) {
    assert.throws(
      () => parseDuration(bad),
      (err: unknown) => err instanceof DurationError && err.message.includes(JSON.stringify(bad)),
      bad,
    );
  }
});

test('percentages become fractions', () => {
  assert.equal(parsePercent('2%'), 0.02);
  assert.equal(parsePercent('0%'), 0);
  assert.equal(parsePercent('12.5 %'), 0.125);
  assert.throws(() => parsePercent('2'), /expected a percentage like "2%", got "2"/);
  assert.throws(() => parsePercent('-2%'), DurationError);
});

test('formatDuration picks a readable unit', () => {
  assert.equal(formatDuration(9.88), '9.88ms');
  assert.equal(formatDuration(0.5), '500us');
  assert.equal(formatDuration(120_000), '120s');
  assert.equal(formatDuration(1500), '1.5s');
  assert.equal(formatDuration(0), '0ms');
});
