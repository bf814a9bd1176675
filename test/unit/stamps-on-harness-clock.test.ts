// Stamps from another host moved onto the harness's clocks at the boundary where they come in: a
// load agent's messages (load/agent-clock.ts) and a member's events (runtime/event-clock.ts); and
// report.md's "Clocks" section, which says how sure the spans between two hosts' stamps are.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  doneOnHarnessClock,
  intervalOnHarnessClock,
  specOnAgentClock,
  startedOnHarnessClock,
  toAgentWall,
} from '../../src/load/agent-clock.js';
import type { DoneMessage, IntervalMessage, LoadSpec } from '../../src/load/agent-protocol.js';
import { clockReport, hostClock, hostClocks, type OffsetEstimate } from '../../src/measure/clock-offset.js';
import { eventOnHarnessClock } from '../../src/runtime/event-clock.js';
import { rfc3339Ms } from '../../src/runtime/docker/container-kill.js';
import type { ClusterEvent } from '../../src/vocabulary/node-events.js';
import { clocksSection, worstSpanUncertaintyMs } from '../../src/report/markdown-clocks.js';
import { renderReport } from '../../src/report/markdown-report.js';
import { result2dc } from './report-fixture.js';

/** The report fixture's load start (result2dc: timeline.startedAt), harness wall ms. */
const T0 = Date.parse('2024-11-21T06:20:05.000Z');
/** A host 2.5 s ahead of the harness, booted a day before its wall-clock epoch-time says. */
const OFF = { wallMs: 2_500, monoMs: 86_400_000 - T0 };

describe('an agent on another host', () => {
  it('is asked for instants on its own clock', () => {
    const spec = { startAtMs: T0 + 1_000 } as LoadSpec;
    assert.equal(specOnAgentClock(spec, OFF).startAtMs, T0 + 3_500);
    assert.equal(toAgentWall(T0, OFF), T0 + 2_500);
    const noStart = { durationMs: 5 } as LoadSpec;
    assert.equal(specOnAgentClock(noStart, OFF), noStart);
  });

  it('has every instant and trace stamp it sends moved onto the harness’s wall clock', () => {
    // What the agent said, on its clocks: the harness's T0 + 1 s read as T0 + 3.5 s; its traces
    // read CLOCK_MONOTONIC, a day and a second since its boot.
    const wall = (harness: number): number => harness + OFF.wallMs;
    const mono = (harness: number): number => harness + OFF.monoMs;
    const done = {
      type: 'done',
      startMs: wall(T0 + 1_000),
      sendEndMs: wall(T0 + 21_000),
      firstAckAfter: { gap: wall(T0 + 9_000) },
      firstAckByEpoch: { '3': wall(T0 + 9_100) },
      longestAckGap: { gap: { ms: 700, fromMs: wall(T0 + 8_300), toMs: wall(T0 + 9_000) } },
      traces: [[64, 'before', mono(T0 + 2_000), mono(T0 + 2_000.25), mono(T0 + 2_012)]],
    } as unknown as DoneMessage;
    const d = doneOnHarnessClock(done, OFF);
    assert.equal(d.startMs, T0 + 1_000);
    assert.equal(d.sendEndMs, T0 + 21_000);
    assert.deepEqual(d.firstAckAfter, { gap: T0 + 9_000 });
    assert.deepEqual(d.firstAckByEpoch, { '3': T0 + 9_100 });
    assert.deepEqual(d.longestAckGap, { gap: { ms: 700, fromMs: T0 + 8_300, toMs: T0 + 9_000 } });
    assert.deepEqual(d.traces, [[64, 'before', T0 + 2_000, T0 + 2_000.25, T0 + 2_012]]);
    const i = intervalOnHarnessClock({ startMs: wall(T0), endMs: wall(T0 + 1_000) } as IntervalMessage, OFF);
    assert.deepEqual([i.startMs, i.endMs], [T0, T0 + 1_000]);
    assert.equal(
      startedOnHarnessClock({ startMs: wall(T0) } as Parameters<typeof startedOnHarnessClock>[0], OFF)
        .startMs,
      T0,
    );
  });
});

describe('a member on another host', () => {
  it('died when its container runtime says: Docker’s RFC 3339 exit time to the µs', () => {
    assert.equal(
      rfc3339Ms('2026-11-26T15:33:26.123456789Z'),
      Date.parse('2026-11-26T15:33:26Z') + 123.456789,
    );
    assert.equal(rfc3339Ms('2026-11-26T15:33:26Z'), Date.parse('2026-11-26T15:33:26Z'));
    assert.equal(rfc3339Ms('2026-11-26T16:33:26.5+01:00'), Date.parse('2026-11-26T15:33:26.5Z'));
    assert.equal(rfc3339Ms('0001-01-01T00:00:00Z'), Date.parse('0001-01-01T00:00:00Z'));
    assert.equal(rfc3339Ms('yesterday'), null);
    assert.equal(rfc3339Ms(undefined), null);
  });

  it('has its events’ stamps, and a trace’s steps and ACKs, moved onto the harness’s wall clock', () => {
    const ev = { ev: 'serving', node: 'p4', t: T0 + 2_500 + 700 } as ClusterEvent;
    assert.equal(eventOnHarnessClock(ev, OFF).t, T0 + 700);
    const trace = {
      ev: 'trace',
      node: 'p4',
      t: T0 + 2_500 + 30,
      client: 'c',
      req: 64,
      zxid: '3:9',
      s: { recv: T0 + OFF.monoMs + 10, replySent: T0 + OFF.monoMs + 12 },
      acks: { p5: T0 + OFF.monoMs + 11 },
    } as unknown as ClusterEvent;
    const moved = eventOnHarnessClock(trace, OFF) as ClusterEvent & {
      s: Record<string, number>;
      acks: Record<string, number>;
    };
    assert.equal(moved.t, T0 + 30);
    assert.deepEqual(moved.s, { recv: T0 + 10, replySent: T0 + 12 });
    assert.deepEqual(moved.acks, { p5: T0 + 11 });
  });
});

describe('report.md: the clocks section', () => {
  const est = (offsetMs: number, uncertaintyMs: number, atMs: number): OffsetEstimate => ({
    offsetMs,
    uncertaintyMs,
    atMs,
    rttMs: 2 * uncertaintyMs,
    probes: 8,
  });
  const clocks = (u: number) =>
    clockReport({
      'pole-bench-swarm-1': hostClocks(
        { wall: est(2_500, u, T0), mono: est(-T0, u, T0) },
        { wall: est(2_500.6, u, T0 + 60_000), mono: est(-T0, u, T0 + 60_000) },
      ),
      'agent d1': hostClocks({ wall: est(-40, 0.2, T0), mono: est(-T0, 0.2, T0) }),
    });

  it('is left out when every stamp came from the harness’s host', () => {
    const r = result2dc();
    assert.equal(clocksSection(r), '');
    assert.doesNotMatch(renderReport(r), /## Clocks/);
  });

  it('shows each host’s offset before and after, its drift, and the ± of a span between two hosts', () => {
    const r = result2dc();
    r.clocks = clocks(0.3);
    const text = renderReport(r);
    assert.match(text, /## Clocks/);
    assert.match(
      text,
      /\| pole-bench-swarm-1 \| 2,?500\.00 ± 0\.30 \| 2,?500\.60 ± 0\.30 \| 10\.0 ± 10\.0 \|/,
    );
    assert.match(text, /\| agent d1 \| -40\.00 ± 0\.20 \| not measured \| — \|/);
    // Every recovery figure of the fixture is hundreds of ms: nothing to flag at ± well under 1 ms.
    assert.match(text, /Every recovery figure is more than ten times that\./);
  });

  it('flags the figures a span’s ± is more than a tenth of', () => {
    const r = result2dc();
    r.clocks = clocks(40);
    const u = worstSpanUncertaintyMs(
      r.clocks,
      Date.parse(r.timeline.startedAt!) + r.recovery.faultAtS! * 1000,
    );
    assert.ok(u > 40, `${u}`);
    const text = clocksSection(r);
    assert.match(text, /Figures where that is more than a tenth:/);
    assert.match(text, /- detected: ± [\d.]+ ms \(clocks\), more than a tenth of/);
  });

  it('holds a stamp moved by the "before" estimate to how far the clock drifted since, plus its ±', () => {
    const c = hostClock(est(100, 1, T0), est(106, 2, T0 + 60_000));
    // Half-way: the best estimate is 103 ± 1.5; the stamp was moved by 100.
    const r = result2dc();
    r.clocks = clockReport({
      h: hostClocks({ wall: c.before, mono: c.before }, { wall: c.after!, mono: c.after! }),
    });
    assert.equal(worstSpanUncertaintyMs(r.clocks, T0 + 30_000), 3 + 1.5);
  });
});
