import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { XMLValidator } from 'fast-xml-parser';
import { suiteCharts } from '../../src/experiment/suite-charts.js';
import type { CellSummary } from '../../src/experiment/suite-summary.js';
import { renderSvg } from '../../src/report/charts/svg-render.js';
import { spreadOf } from '../../src/report/run-metrics.js';

function cell(id: string, oracle: string, preload: string, recovery: number[]): CellSummary {
  return {
    id,
    topology: 'paper-fig8-2dc-80ms',
    question: 'Fig. 8a',
    swept: { oracle, preload },
    params: { oracle, preload },
    configHash: 'x',
    runs: [],
    leaders: { initial: {}, elected: {} },
    metrics: {
      'recovery.paperRecoveryMs': spreadOf(recovery, 'ms', 'lower'),
      'recovery.servingMs': spreadOf(
        recovery.map((r) => r + 250),
        'ms',
        'lower',
      ),
    },
    model: {},
    worst: { before: null, after: null },
  };
}

describe('suite charts', () => {
  it('draws a question that sweeps the state size: recovery per oracle against it, as SVG', async () => {
    const cells = [
      cell('fig8a.a', 'history', '10MB', [30, 40]),
      cell('fig8a.b', 'history', '50MB', [430, 450]),
      cell('fig8a.c', 'preference', '10MB', [300, 320]),
      cell('fig8a.d', 'preference', '50MB', [1790, 1800]),
    ];
    const charts = suiteCharts(cells);
    assert.deepEqual(
      charts.map((c) => [c.file, c.title]),
      [['chart-fig8a.svg', 'Fig. 8a']],
    );
    const { svg, warnings } = await renderSvg(charts[0]!.spec);
    assert.equal(XMLValidator.validate(svg), true);
    assert.deepEqual(warnings, []);
    for (const text of ['history', 'preference', '10MB', '50MB', 'recovery (first commit − elected), ms'])
      assert.ok(svg.includes(`>${text}<`), `${text} in the chart`);
  });

  it('draws nothing for a question that only compares oracles', () => {
    const only = cell('fig4b.a', 'history', '10MB', [1]);
    assert.deepEqual(
      suiteCharts([{ ...only, swept: { oracle: 'history' }, params: { oracle: 'history' } }]),
      [],
    );
  });
});
