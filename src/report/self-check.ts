// The run checks its own figures: where two figures of a result measure the same thing by different
// means, or must add up, they are held against each other, and every disagreement is named with
// its numbers. Pure, on the result alone, so `pole-bench report --check DIR` runs the same checks
// on a stored run. A violation does not stop a run from writing everything it measured; it says
// which figures are suspect.
import type { NotEvaluated, SelfCheck } from './result.js';
import type { CheckedResult } from './checks/check-kit.js';
import { outageAfterFirstCommit } from './checks/outage-after-first-commit.js';
import { longestDuringOutage } from './checks/longest-during-outage.js';
import { longestSilence } from './checks/longest-silence.js';
import { oneLeaderBefore } from './checks/one-leader-before.js';
import { oneKernelOneClock } from './checks/one-kernel-one-clock.js';
import { phasesInOrder } from './checks/phases-in-order.js';
import { tracedFloor } from './checks/traced-floor.js';
import { spreadBound } from './checks/spread-bound.js';
import { linksMeasured } from './checks/links-measured.js';
import { relayLateness } from './checks/relay-lateness.js';
import { calibratedFloorQuiet } from './checks/calibrated-floor-quiet.js';
import { finalReadCoverage } from './checks/final-read-coverage.js';
import { zkBestVote } from './checks/zk-best-vote.js';
import { zkTookTime } from './checks/zk-took-time.js';
import { nodeTunables } from './checks/node-tunables.js';
import { relayCpu } from './checks/relay-cpu.js';
import { noNegative } from './checks/no-negative.js';
import { faultsAsPlanned } from './checks/faults-as-planned.js';
import { historyAgrees } from './checks/history-agrees.js';

export type { Check, CheckedResult } from './checks/check-kit.js';
export {
  CLOCK_SLACK_MS,
  FLOOR_MIN_TRACED,
  FLOOR_SHARE,
  FLOOR_SLACK_MS,
  FLOOR_STANDARD_ERRORS,
  LINK_JITTERS,
  LINK_SHARE,
  LINK_SLACK_MS,
  TOOK_LOG_STALL_MS,
  TOOK_SLACK_MS,
} from './checks/check-kit.js';

/**
 * Every check a run makes, in the order they are listed, each comparing figures that come from
 * different measurements (docs/runs.md has the table of what each compares). Each is listed in
 * every result: held, violated, or not evaluated with why. The test that perturbs one figure per
 * check has a row for every id (test/unit/self-check-table.test.ts).
 */
const ALL = [
  outageAfterFirstCommit,
  longestDuringOutage,
  longestSilence,
  oneLeaderBefore,
  faultsAsPlanned,
  oneKernelOneClock,
  phasesInOrder,
  tracedFloor,
  spreadBound,
  linksMeasured,
  relayLateness,
  calibratedFloorQuiet,
  finalReadCoverage,
  historyAgrees,
  zkBestVote,
  zkTookTime,
  nodeTunables,
  relayCpu,
  noNegative,
] as const;

export type CheckId = (typeof ALL)[number]['id'];

/** Each check's id and what it holds. */
export const CHECKS = Object.fromEntries(ALL.map((c) => [c.id, c.what])) as Readonly<Record<CheckId, string>>;

export function selfCheck(r: CheckedResult): SelfCheck {
  const checked: string[] = [];
  const violations: string[] = [];
  const notEvaluated: NotEvaluated[] = [];
  for (const c of ALL) {
    const before = violations.length;
    let skipped: string | undefined;
    c.run(
      r,
      (why) => violations.push(`${c.what}: ${why}`),
      (why) => {
        skipped ??= why;
      },
    );
    // Said once, the first reason kept; a check that failed anything was evaluated.
    if (skipped !== undefined && violations.length === before)
      notEvaluated.push({ check: c.what, why: skipped });
    else checked.push(c.what);
  }
  return { checked, violations, notEvaluated };
}
