// A floor calibrated after the load is the target's cost only on a quiet machine: a calibration
// whose mean ran far past its median was held up (a JVM's pause, a build beside it), and one
// beside much other work measured the machine too. The calibration is taken again while it looks
// so (run/calibration.ts); this holds the one kept.
import type { Check } from './check-kit.js';
import {
  FLOOR_OTHER_MAX_PCT,
  FLOOR_STALL_SHARE,
  FLOOR_STALL_SLACK_MS,
  floorStalls,
} from '../../measure/node-floor.js';

export const calibratedFloorQuiet = {
  id: 'calibratedFloorQuiet',
  what: `the calibrated floor taken on a quiet machine: its means within max(${FLOOR_STALL_SLACK_MS} ms, ${FLOOR_STALL_SHARE * 100} %) of their medians, at most ${FLOOR_OTHER_MAX_PCT} % of a core of other work beside it`,
  run: (r, fail, skip) => {
    const floorReadings = r.floor.source === 'calibrated' ? r.floor.readings : undefined;
    if (!floorReadings) return skip(`the floor is ${r.floor.source}, not calibrated after the load`);
    const k = floorReadings[r.floor.kept ?? floorReadings.length - 1];
    if (!k) return fail(`no calibration ${r.floor.kept} among ${floorReadings.length}`);
    const stalls = floorStalls(k);
    if (stalls.length > 0)
      fail(`${stalls.join('; ')} (the least stalled of ${floorReadings.length} calibrations)`);
  },
} as const satisfies Check;
