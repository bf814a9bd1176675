// src/report/charts/: a run's SVG charts (timeline, latency per data center, recovery) as Vega-Lite
// specs, rendered headless with their data inline.
//
// The charts of one run, as Vega-Lite specs built from the result and the per-data-center interval
// histograms (the same ones latency.hlog holds): the load over time with the fault periods shaded
// and the new leaders marked, each data center's latency percentiles before and after the fault
// next to the model, and the recovery phases as a timeline. Pure: data in, specs out; rendering
// and files are elsewhere (write-charts.ts).
import * as hdr from 'hdr-histogram-js';
import type { HlogInterval } from '../hlog-writer.js';
import type { RunResult } from '../result.js';
import { faultPeriods } from './fault-periods.js';
import type { ChartSpec } from './svg-render.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const WIDTH = 720;
/** Past this many faults their labels would overlap: the shading and its legend say enough. */
const MAX_FAULT_LABELS = 12;
const LABEL_TOP = 2;
const LABEL_ROWS = 3;
const LABEL_ROW_PX = 11;
const FAULT_COLOURS = { domain: ['node', 'network', 'link'], range: ['#e45756', '#f58518', '#9467bd'] };
/** Pale, and not the faults' hues: a window is a span of the tables, not something that happened. */
const WINDOW_COLOURS = { domain: ['before', 'degraded', 'after'], range: ['#c6dbef', '#d9d9d9', '#c7e9c0'] };
const CPU_COLOURS = { domain: ['machine busy', 'steal'], range: ['#4c78a8', '#b279a2'] };

export interface RunChart {
  /** File name in the run's output directory. */
  readonly file: string;
  /** What it shows, for the report's alt text and heading. */
  readonly title: string;
  readonly spec: ChartSpec;
}

/** One second of one data center's load. */
export interface DcSecond {
  readonly dc: string;
  /** Seconds from the load start. */
  readonly t: number;
  readonly p50: number;
  readonly p99: number;
}

/** The charts a run's result supports (a run whose load never ran has none). */
export function runCharts(result: RunResult, intervals: readonly HlogInterval[]): RunChart[] {
  const charts: RunChart[] = [];
  if (result.timeline.seconds.length > 0) {
    charts.push({
      file: 'timeline.svg',
      title: 'Throughput and latency over the run, faults shaded',
      spec: timelineSpec(result, perDcSeconds(result, intervals)),
    });
  }
  if (Object.values(result.latency).some((w) => (w.before?.count ?? 0) + (w.after?.count ?? 0) > 0)) {
    charts.push({
      file: 'latency-per-dc.svg',
      title: 'Latency percentiles per data center, before and after the fault, with the model',
      spec: latencySpec(result),
    });
  }
  if (result.leaders.cause !== null && result.recovery.electedMs !== null) {
    charts.push({
      file: 'recovery.svg',
      title: 'Recovery phases after the fault',
      spec: recoverySpec(result),
    });
  }
  return charts;
}

/** Each data center's p50 and p99 per second of load, from its interval histograms (µs). */
export function perDcSeconds(result: RunResult, intervals: readonly HlogInterval[]): DcSecond[] {
  const loadStart = result.timeline.startedAt === null ? NaN : Date.parse(result.timeline.startedAt);
  if (!Number.isFinite(loadStart)) return [];
  const durationMs = result.scenario.durationMs;
  const out: DcSecond[] = [];
  for (const i of intervals) {
    // An interval that starts once the load is over only waited for the writes in flight: its
    // p99 is of the slowest few, no second of load (the timeline leaves it out too).
    if (durationMs > 0 && i.startMs - loadStart >= durationMs - 1) continue;
    const h = hdr.decodeFromCompressedBase64(i.histogramBase64);
    try {
      if (h.totalCount === 0) continue;
      out.push({
        dc: i.tag,
        t: Math.round((i.startMs - loadStart) / 1000),
        p50: h.getValueAtPercentile(50) / 1000,
        p99: h.getValueAtPercentile(99) / 1000,
      });
    } finally {
      h.destroy();
    }
  }
  return out.sort((a, b) => a.t - b.t || a.dc.localeCompare(b.dc));
}

function loadSeconds(r: RunResult): number {
  const lastPoint = r.timeline.seconds[r.timeline.seconds.length - 1];
  const last = lastPoint ? lastPoint.t + (lastPoint.lengthS ?? 1) : 0;
  return Math.max(r.scenario.durationMs / 1000, last);
}

export interface WindowSpan {
  /** The latency windows of the report's tables (result.ts, LatencyWindows). */
  readonly window: 'before' | 'degraded' | 'after';
  readonly fromS: number;
  readonly toS: number;
}

/**
 * Where the report's latency windows lie on the load's clock: before from the warm-up to the first
 * fault, degraded from a first fault that left the leader serving to the one that took it out,
 * after from the new leader's election + the settle time to the end.
 */
export function windowSpans(r: RunResult): WindowSpan[] {
  const endS = loadSeconds(r);
  const warmS = r.scenario.warmupMs / 1000;
  const firstS = r.timeline.faults.reduce((m, f) => Math.min(m, f.atS), Infinity);
  const cause = r.leaders.cause;
  const spans: WindowSpan[] = [];
  const add = (window: WindowSpan['window'], fromS: number, toS: number): void => {
    if (toS > fromS) spans.push({ window, fromS, toS });
  };
  add('before', warmS, Math.min(firstS, endS));
  if (Number.isFinite(firstS) && (cause === null || firstS < cause.atS))
    add('degraded', Math.max(firstS, warmS), Math.min(cause?.atS ?? endS, endS));
  if (cause !== null && r.recovery.electedMs !== null)
    add('after', cause.atS + r.recovery.electedMs / 1000 + r.scenario.settleMs / 1000, endS);
  return spans;
}

/**
 * The windows as a strip over the panels, in pale colours of their own and named in place (a
 * legend beside a strip this thin would push the panels apart), apart from the faults' shading.
 */
function windowStrip(r: RunResult, x: unknown): unknown {
  const spans = windowSpans(r).map((w) => ({
    ...w,
    row: 'latency windows',
    label: w.window === 'after' ? 'after (elected + settle)' : w.window,
  }));
  const y = { field: 'row', type: 'nominal', title: null, axis: { ticks: false, domain: false } };
  return {
    width: WIDTH,
    height: 14,
    data: { values: spans },
    layer: [
      {
        mark: { type: 'rect' },
        encoding: {
          x: { ...(x as object), field: 'fromS', axis: null },
          x2: { field: 'toS' },
          y,
          color: { field: 'window', type: 'nominal', scale: WINDOW_COLOURS, legend: null },
          tooltip: [{ field: 'label' }],
        },
      },
      {
        mark: { type: 'text', align: 'left', baseline: 'middle', dx: 3, fontSize: 10, color: '#333333' },
        encoding: { x: { ...(x as object), field: 'fromS', axis: null }, y, text: { field: 'label' } },
      },
    ],
  };
}

/** Machine busy and steal per sampled second (the self-check's), % of all cores. */
function cpuPanel(r: RunResult, x: unknown): unknown | null {
  const perSecond = r.cpu.perSecond ?? [];
  if (perSecond.length === 0) return null;
  const values = perSecond.flatMap((p) => [
    { t: p.t, series: 'machine busy', pct: p.busyPct },
    { t: p.t, series: 'steal', pct: p.stealPct },
  ]);
  return {
    width: WIDTH,
    height: 100,
    layer: [
      ...faultLayers(r, false),
      {
        data: { values },
        mark: { type: 'line', strokeWidth: 1.2, interpolate: 'step-after' },
        encoding: {
          x,
          y: {
            field: 'pct',
            type: 'quantitative',
            title: ['machine CPU,', `% of ${r.cpu.cores} cores`],
            scale: { domain: [0, 100] },
          },
          color: { field: 'series', type: 'nominal', title: 'machine', scale: CPU_COLOURS },
        },
      },
    ],
  };
}

/** Every member's event-loop stalls, a tick each at the instant it ended. */
function stallPanel(r: RunResult, x: unknown): unknown | null {
  // Stalls before the load (warm-up, start) or after it (the floor's calibration) are in the
  // report's text; on this axis they would be drawn outside the panel.
  const endS = loadSeconds(r);
  const values = (r.loopStalls ?? []).flatMap((m) =>
    (m.stalls ?? [])
      .filter((s) => s.atS >= 0 && s.atS <= endS)
      .map((s) => ({ t: s.atS, node: m.node, ms: s.ms })),
  );
  if (values.length === 0) return null;
  const members = [...new Set(values.map((v) => v.node))];
  return {
    width: WIDTH,
    // Tall enough for its two-line title, whatever the number of members.
    height: Math.max(64, 14 * members.length),
    layer: [
      ...faultLayers(r, false),
      {
        data: { values },
        mark: { type: 'tick', orient: 'vertical', thickness: 1.5, color: '#333333' },
        encoding: {
          x,
          y: {
            field: 'node',
            type: 'nominal',
            sort: members,
            title: ['loop stalls', `≥ ${r.loopStallMs ?? 100} ms`],
          },
          tooltip: [{ field: 'node' }, { field: 'ms', title: 'ms' }],
        },
      },
    ],
  };
}

/** The layers every timeline panel shares: shaded fault periods, their labels, the new leaders. */
function faultLayers(r: RunResult, labelled: boolean): unknown[] {
  const endS = loadSeconds(r);
  const periods = faultPeriods(r.timeline.faults, endS, (a, b) => r.links[a]?.[b]?.configuredRttMs).map(
    (p) => ({
      ...p,
      // A fault with nothing to undo it within a second still needs a visible band.
      toS: Math.max(p.toS, p.fromS + endS / 400),
    }),
  );
  const serving = r.elections.list
    .filter((e) => e.elected !== null && e.servingMs !== null)
    .map((e) => ({ t: e.atS + (e.servingMs as number) / 1000, label: `${e.elected} serves` }));
  const layers: unknown[] = [];
  if (periods.length > 0) {
    layers.push({
      data: { values: periods },
      mark: { type: 'rect', opacity: 0.18 },
      encoding: {
        x: { field: 'fromS', type: 'quantitative' },
        x2: { field: 'toS' },
        fill: { field: 'kind', type: 'nominal', title: 'fault', scale: FAULT_COLOURS },
        tooltip: [{ field: 'label' }],
      },
    });
    layers.push({
      data: { values: r.timeline.faults.map((f) => ({ t: f.atS, label: `${f.action} ${f.node}` })) },
      mark: { type: 'rule', color: '#333333', strokeWidth: 1 },
      encoding: { x: { field: 't', type: 'quantitative' } },
    });
    if (labelled && r.timeline.faults.length <= MAX_FAULT_LABELS) {
      layers.push({
        // Labels of faults close together go on rows of their own (y in pixels, no scale).
        data: {
          values: r.timeline.faults.map((f, i) => ({
            t: f.atS,
            label: `▲ ${f.action} ${f.node}`,
            y: LABEL_TOP + (i % LABEL_ROWS) * LABEL_ROW_PX,
          })),
        },
        mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, fontSize: 10, color: '#333333' },
        encoding: {
          x: { field: 't', type: 'quantitative' },
          y: { field: 'y', type: 'quantitative', scale: null },
          text: { field: 'label' },
        },
      });
    }
  }
  if (serving.length > 0) {
    layers.push({
      data: { values: serving },
      mark: { type: 'rule', color: '#2ca02c', strokeDash: [4, 3], strokeWidth: 1.5 },
      encoding: { x: { field: 't', type: 'quantitative' } },
    });
    if (labelled && serving.length <= MAX_FAULT_LABELS) {
      layers.push({
        data: { values: serving },
        mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, fontSize: 10, color: '#2ca02c' },
        encoding: {
          x: { field: 't', type: 'quantitative' },
          y: { value: LABEL_TOP + LABEL_ROWS * LABEL_ROW_PX },
          text: { field: 'label' },
        },
      });
    }
  }
  return layers;
}

export function timelineSpec(r: RunResult, perDc: readonly DcSecond[]): ChartSpec {
  const x = {
    field: 't',
    type: 'quantitative',
    title: 'seconds from the load start',
    scale: { domain: [0, loadSeconds(r)], nice: false },
  };
  const lines = perDc.flatMap((s) => [
    { t: s.t, dc: s.dc, stat: 'p50', ms: s.p50 },
    { t: s.t, dc: s.dc, stat: 'p99', ms: s.p99 },
  ]);
  const spec = {
    $schema: SCHEMA,
    title: `${r.topology.name}: ${r.target} on ${r.runtime}, ${r.workload.rate} writes/s`,
    // The strip, the faults and the machine each keep their own colour legend.
    resolve: { scale: { color: 'independent' }, legend: { color: 'independent' } },
    vconcat: [
      windowStrip(r, x),
      {
        width: WIDTH,
        height: 140,
        layer: [
          ...faultLayers(r, true),
          {
            data: { values: closedSteps(r) },
            mark: { type: 'line', color: '#555555', interpolate: 'step-after' },
            encoding: {
              x,
              // Short: vega estimates text widths, and a longer title overflowed the panel, pushing it down.
              y: { field: 'writesPerSec', type: 'quantitative', title: 'acked writes/s' },
            },
          },
          {
            data: { values: r.timeline.seconds.filter((s) => s.errors > 0) },
            mark: { type: 'bar', color: '#d62728', width: 2 },
            encoding: { x, y: { field: 'errors', type: 'quantitative' } },
          },
        ],
      },
      {
        width: WIDTH,
        height: 220,
        layer: [
          ...faultLayers(r, false),
          {
            data: { values: lines },
            mark: { type: 'line', strokeWidth: 1.2, interpolate: 'step-after' },
            encoding: {
              x,
              y: {
                field: 'ms',
                type: 'quantitative',
                title: 'latency, ms (log)',
                scale: { type: 'log' },
              },
              color: { field: 'dc', type: 'nominal', title: 'data center' },
              strokeDash: { field: 'stat', type: 'nominal', title: 'percentile' },
            },
          },
        ],
      },
      ...[cpuPanel(r, x), stallPanel(r, x)].filter((p) => p !== null),
    ],
  };
  return spec as ChartSpec;
}

/**
 * The seconds with one more point where the last one ends, so that a step-after line draws the
 * last second over the time it covered (a second cut short, a narrower step) instead of not at all.
 */
function closedSteps(r: RunResult): unknown[] {
  const points = r.timeline.seconds;
  const last = points[points.length - 1];
  return last ? [...points, { ...last, t: last.t + (last.lengthS ?? 1) }] : [];
}

const PERCENTILES = [
  ['p50', 'p50'],
  ['p90', 'p90'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['max', 'max'],
] as const;

export function latencySpec(r: RunResult): ChartSpec {
  const dcs = r.topology.datacenters.map((d) => d.name).filter((dc) => r.latency[dc] !== undefined);
  const panel = (dc: string): unknown => {
    const windows = r.latency[dc];
    const points = (['before', 'after'] as const).flatMap((w) => {
      const s = windows?.[w];
      if (!s || s.count === 0) return [];
      return PERCENTILES.flatMap(([key, stat], order) => {
        const v = s[key];
        return v === null ? [] : [{ window: w, stat, order, ms: Math.max(v, 0.001) }];
      });
    });
    const model = (['before', 'after'] as const).flatMap((w) => {
      const m = r.model[dc]?.[w];
      return m === null || m === undefined || m <= 0 ? [] : [{ window: w, ms: m, label: `model ${w}` }];
    });
    const colour = {
      field: 'window',
      type: 'nominal',
      title: 'window',
      scale: { domain: ['before', 'after'] },
    };
    return {
      title: dc,
      width: 150,
      height: 200,
      layer: [
        {
          data: { values: points },
          mark: { type: 'line', point: true },
          encoding: {
            x: { field: 'stat', type: 'ordinal', sort: PERCENTILES.map(([, s]) => s), title: null },
            y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'ms (log)' },
            color: colour,
          },
        },
        {
          data: { values: model },
          mark: { type: 'rule', strokeDash: [4, 3] },
          encoding: {
            y: { field: 'ms', type: 'quantitative' },
            color: colour,
            tooltip: [{ field: 'label' }],
          },
        },
      ],
    };
  };
  return {
    $schema: SCHEMA,
    title: 'Latency per data center; dashed: the paper’s model',
    hconcat: dcs.map(panel),
  } as ChartSpec;
}

export function recoverySpec(r: RunResult): ChartSpec {
  const rec = r.recovery;
  const cause = r.leaders.cause;
  const rows: { phase: string; ms: number; order: number }[] = [];
  const add = (phase: string, v: number | null): void => {
    if (v !== null) rows.push({ phase, ms: v, order: rows.length });
  };
  add('detect', rec.detectMs);
  add(`elected (${r.leaders.elected ?? '?'})`, rec.electedMs);
  add('serving', rec.servingMs);
  add('first commit', rec.firstCommitMs);
  for (const dc of r.topology.datacenters.map((d) => d.name)) {
    add(`outage ${dc}`, rec.perDc[dc]?.outageMs ?? null);
    add(`longest silence ${dc}`, rec.perDc[dc]?.longestAckGapMs ?? null);
  }
  const title = cause
    ? `Recovery after ${cause.action} ${cause.node} at ${cause.atS.toFixed(1)} s (leader ${cause.leader})`
    : 'Recovery';
  return {
    $schema: SCHEMA,
    title,
    width: WIDTH - 120,
    data: { values: rows },
    layer: [
      {
        mark: { type: 'bar', height: 14 },
        encoding: {
          y: { field: 'phase', type: 'nominal', sort: { field: 'order' }, title: null },
          x: { field: 'ms', type: 'quantitative', title: 'ms after the fault' },
          color: { field: 'phase', type: 'nominal', legend: null },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4 },
        encoding: {
          y: { field: 'phase', type: 'nominal', sort: { field: 'order' } },
          x: { field: 'ms', type: 'quantitative' },
          text: { field: 'ms', type: 'quantitative', format: ',.1f' },
        },
      },
    ],
  } as ChartSpec;
}
