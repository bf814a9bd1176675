// A run's latency windows beside the paper's model and the run's floor, per data center: what the
// end-to-end tests of every target check a run's means against.
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/report/result.js';

export interface ModelWindow {
  readonly dc: string;
  readonly w: 'before' | 'after';
  readonly mean: number;
  /** The window's median: what a typical write took, whatever a stall did to a few seconds of them. */
  readonly p50: number;
  readonly model: number;
  readonly floor: number;
  /** model + floor: what the mean should be. */
  readonly predicted: number;
  /**
   * model + the floor of the calibration's medians (result.floor.perDcMedian): what the median
   * should be; the mean's where the floor has no medians (traced, or a file from before).
   */
  readonly predictedMedian: number;
}

/** Each data center's before and after windows; every figure must be there. */
export function modelWindows(result: RunResult, dcs: readonly string[]): ModelWindow[] {
  return dcs.flatMap((dc) =>
    (['before', 'after'] as const).map((w) => {
      const mean = result.latency[dc]?.[w]?.mean;
      const p50 = result.latency[dc]?.[w]?.p50;
      const model = result.model[dc]?.[w];
      const floor = result.floor.perDc[dc]?.[w];
      assert.ok(
        typeof mean === 'number' &&
          typeof p50 === 'number' &&
          typeof model === 'number' &&
          typeof floor === 'number',
        `${dc} ${w}`,
      );
      const floorMedian = result.floor.perDcMedian?.[dc]?.[w] ?? floor;
      return {
        dc,
        w,
        mean,
        p50,
        model,
        floor,
        predicted: model + floor,
        predictedMedian: model + floorMedian,
      };
    }),
  );
}
