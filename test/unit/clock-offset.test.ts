import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ASSUMED_DRIFT_PPM,
  HARNESS_CLOCK,
  clockReport,
  estimateOffset,
  hostClock,
  hostClocks,
  hostClocksFromInfo,
  intervalUncertaintyMs,
  offsetAt,
  toHarnessMs,
  uncertaintyNote,
  type ClockProbe,
  type OffsetEstimate,
} from '../../src/measure/clock-offset.js';
import { Random } from '../../src/util/random.js';
import { parseResult } from '../../src/report/result.js';
import { result2dc } from './report-fixture.js';

const T0 = 1_760_000_000_000; // a harness wall time, ms
/** Doubles near T0 are 0.24 µs apart: what the arithmetic may lose, ms. */
const ROUNDING_MS = 1e-3;

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(
    actual !== null && Math.abs(actual - expected) < 1e-9,
    `${what}: ${actual}, expected ${expected}`,
  );
}

/**
 * Probes of a remote whose clock reads harness time + offset(t), each way's delay drawn on its
 * own (so the two directions differ: the bound must not rely on their being alike).
 */
function burst(rnd: Random, at: number, offset: (t: number) => number, n = 8): ClockProbe[] {
  const probes: ClockProbe[] = [];
  let t = at;
  for (let i = 0; i < n; i++) {
    const out = 0.05 + rnd.next() * 3;
    const back = 0.05 + rnd.next() * 3;
    const read = t + out;
    probes.push({ sentMs: t, remoteMs: read + offset(read), receivedMs: read + back });
    t = read + back + rnd.next() * 2;
  }
  return probes;
}

const est = (offsetMs: number, uncertaintyMs: number, atMs: number): OffsetEstimate => ({
  offsetMs,
  uncertaintyMs,
  atMs,
  rttMs: 2 * uncertaintyMs,
  probes: 1,
});

describe('clock offset: one burst of probes', () => {
  it('is remote − the round trip’s midpoint, ± half the round trip', () => {
    const e = estimateOffset([{ sentMs: 1000, remoteMs: 3504, receivedMs: 1010 }]);
    assert.deepEqual(e, { offsetMs: 2499, uncertaintyMs: 5, atMs: 1005, rttMs: 10, probes: 1 });
  });

  it('keeps the probe with the smallest round trip', () => {
    const e = estimateOffset([
      { sentMs: 0, remoteMs: 2510, receivedMs: 20 },
      { sentMs: 30, remoteMs: 2531.5, receivedMs: 32 },
      { sentMs: 40, remoteMs: 2549, receivedMs: 48 },
    ]);
    assert.equal(e.rttMs, 2);
    assert.equal(e.offsetMs, 2500.5);
    assert.equal(e.uncertaintyMs, 1);
    assert.equal(e.probes, 3);
  });

  it('holds the true offset within its bound, whatever the two directions’ delays', () => {
    const rnd = new Random(7);
    for (let run = 0; run < 200; run++) {
      const truth = (rnd.next() - 0.5) * 10_000;
      const e = estimateOffset(burst(rnd, T0 + run * 1000, () => truth));
      assert.ok(Math.abs(e.offsetMs - truth) <= e.uncertaintyMs + ROUNDING_MS, `run ${run}`);
    }
  });

  it('refuses no probes, an answer before its question, and times that are not numbers', () => {
    assert.throws(() => estimateOffset([]), /no clock probes/);
    assert.throws(() => estimateOffset([{ sentMs: 10, remoteMs: 5, receivedMs: 9 }]), /before it was sent/);
    assert.throws(() => estimateOffset([{ sentMs: 10, remoteMs: NaN, receivedMs: 11 }]), /not a number/);
  });
});

describe('clock offset: before and after the load', () => {
  it('measures the drift and interpolates between the two estimates', () => {
    const c = hostClock(est(100, 1, T0), est(106, 2, T0 + 60_000));
    close(c.driftPpm, 100, 'drift'); // 6 ms in 60 s
    close(c.driftUncertaintyPpm, 50, 'its ±'); // (1 + 2) ms over 60 s
    assert.deepEqual(offsetAt(c, T0 + 30_000), { offsetMs: 103, uncertaintyMs: 1.5 });
    // Beyond the "after" estimate the line is extended, and so is its bound: f = 2.
    assert.deepEqual(offsetAt(c, T0 + 120_000), { offsetMs: 112, uncertaintyMs: 1 + 4 });
    // Given the other way round, the two are put in time order.
    assert.deepEqual(hostClock(est(106, 2, T0 + 60_000), est(100, 1, T0)), c);
  });

  it('corrects stamps of a drifting clock to harness time within the stated bound', () => {
    const rnd = new Random(11);
    for (let run = 0; run < 50; run++) {
      const theta0 = (rnd.next() - 0.5) * 5_000;
      const ppm = (rnd.next() - 0.5) * 200;
      const offset = (t: number): number => theta0 + ((t - T0) * ppm) / 1e6;
      const c = hostClock(
        estimateOffset(burst(rnd, T0, offset)),
        estimateOffset(burst(rnd, T0 + 120_000, offset)),
      );
      assert.ok(Math.abs(c.driftPpm! - ppm) <= c.driftUncertaintyPpm! + 0.01, `run ${run}: drift`);
      for (let i = 0; i < 20; i++) {
        const harness = T0 + rnd.next() * 120_000;
        const got = toHarnessMs(harness + offset(harness), c);
        assert.ok(Math.abs(got.ms - harness) <= got.uncertaintyMs + ROUNDING_MS, `run ${run}: stamp ${i}`);
      }
    }
  });

  it('with one estimate only, lets the bound grow at the assumed drift', () => {
    const c = hostClock(est(-40, 0.5, T0));
    assert.equal(c.after, null);
    assert.equal(c.driftPpm, null);
    const at = offsetAt(c, T0 + 100_000);
    assert.equal(at.offsetMs, -40);
    assert.equal(at.uncertaintyMs, 0.5 + (100_000 * ASSUMED_DRIFT_PPM) / 1e6);
  });
});

describe('clock offset: durations across hosts, and the report’s rule', () => {
  const a = hostClock(est(2500, 0.4, T0), est(2500, 0.6, T0 + 10_000));
  const b = hostClock(est(-300, 1, T0), est(-300, 1, T0 + 10_000));

  it('adds the two clocks’ bounds; one clock’s offset cancels; the harness’s is exact', () => {
    assert.equal(intervalUncertaintyMs(a, a, T0 + 5_000), 0);
    assert.equal(intervalUncertaintyMs(HARNESS_CLOCK, a, T0 + 5_000), 0.5);
    assert.equal(intervalUncertaintyMs(a, b, T0 + 5_000), 1.5);
    assert.deepEqual(toHarnessMs(T0, HARNESS_CLOCK), { ms: T0, uncertaintyMs: 0 });
  });

  it('says so when the ± is more than a tenth of the figure', () => {
    assert.equal(uncertaintyNote(12, 1.2), null);
    assert.equal(uncertaintyNote(12, 1.3), '± 1.3 ms (clocks), more than a tenth of 12.0 ms');
    assert.equal(uncertaintyNote(-250, 30), '± 30.0 ms (clocks), more than a tenth of -250 ms');
    assert.equal(uncertaintyNote(0, 0), null);
    assert.match(uncertaintyNote(0, 0.01) ?? '', /^± 0\.010 ms/);
  });

  it('goes into result.json and comes back as the same clocks', () => {
    const mono = (e: OffsetEstimate): OffsetEstimate => ({ ...e, offsetMs: e.offsetMs - T0 + 86_400_000 });
    const bClocks = hostClocks(
      { wall: b.before, mono: mono(b.before) },
      { wall: b.after!, mono: mono(b.after!) },
    );
    const aBefore = est(2500, 0.4, T0);
    const r = result2dc();
    r.clocks = clockReport({
      'host-b': bClocks,
      'host-a': hostClocks({ wall: aBefore, mono: mono(aBefore) }),
    });
    const back = parseResult(JSON.parse(JSON.stringify(r)));
    assert.deepEqual(back.clocks, r.clocks);
    const again = hostClocksFromInfo(back.clocks!.hosts['host-b']!);
    assert.deepEqual(again, bClocks);
    assert.equal(back.clocks!.hosts['host-a']!.after, null);
    // A monotonic stamp (a day of uptime) lands on the harness's wall clock like a wall stamp.
    const wallStamp = toHarnessMs(T0 + 5_000 - 300, again.wall);
    const monoStamp = toHarnessMs(86_400_000 + 5_000 - 300, again.mono);
    assert.deepEqual(monoStamp, wallStamp);
    assert.equal(wallStamp.ms, T0 + 5_000);
  });
});
