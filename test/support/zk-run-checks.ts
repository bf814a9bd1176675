// What every `run --target zookeeper` of paper-2dc with its leader killed must show, whichever
// runtime ran it: shared by the process and the docker runtime's tests.
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/report/result.js';
import { modelWindows } from './model-windows.js';
import { CHECKS } from '../../src/report/self-check.js';
import { assertSelfCheckClean } from './self-check-clean.js';

/** `slackMs`: how much further from the model plus the floor a window's mean may be (the docker runtime's extra hops). */
export function checkPaper2dcZkRun(
  result: RunResult,
  slackMs = 0,
  say: (line: string) => void = () => {},
): void {
  // The run's figures first, so that a failure in CI can be read without the run's files.
  say(
    `verdict ${result.verdict}; ${result.leaders.killed} killed, ${result.leaders.elected} elected; ` +
      `recovery detect/elected/serving/first commit ${['detectMs', 'electedMs', 'servingMs', 'firstCommitMs'].map((k) => result.recovery[k as 'detectMs']).join('/')} ms; ` +
      `writes acked ${result.writes.acked} of ${result.writes.attempted}, failed ${result.writes.failed}, lost ${result.writes.lost}`,
  );
  say(
    `floor ${result.floor.leaderMs?.toFixed(2)} / ${result.floor.followerMs?.toFixed(2)} ms (leader / follower); calibrations ${JSON.stringify(result.floor.readings)}, kept ${result.floor.kept}; self-check violations ${JSON.stringify(result.selfCheck.violations)}`,
  );
  assert.equal(result.verdict, 'passed', result.errors.join('; '));
  assert.equal(result.target, 'zookeeper');
  assert.equal(result.shaping.mode, 'relay');
  assert.equal(result.leaders.oracle, 'zookeeper-fle');
  assert.equal(result.leaders.initial, 'p5');
  assert.equal(result.leaders.killed, 'p5');
  assert.ok(result.leaders.elected && result.leaders.elected !== 'p5', `elected ${result.leaders.elected}`);
  assert.ok((result.leaders.epoch ?? 0) >= 2, `epoch ${result.leaders.epoch}`);
  const rec = result.recovery;
  for (const k of ['detectMs', 'electedMs', 'servingMs', 'firstCommitMs'] as const)
    assert.ok(typeof rec[k] === 'number' && rec[k] >= 0, `${k} = ${rec[k]}`);
  assert.ok(rec.detectMs! <= rec.electedMs! && rec.electedMs! <= rec.servingMs!, JSON.stringify(rec));
  assert.ok(rec.servingMs! <= rec.firstCommitMs!, JSON.stringify(rec));
  // ZooKeeper's own "TOOK" figure against the span between its two log lines: the times the run
  // gives ZooKeeper's events, and so its elected figure, checked by ZooKeeper's own clock.
  const took = rec.explain?.election;
  say(
    `ZooKeeper's own election ${took?.tookMs} ms, its log's lines at ${took?.tookLookingMs} (LOOKING), ${took?.tookFromMs} (New election) and ${took?.tookLoggedMs} ms (TOOK)`,
  );
  assert.ok(result.selfCheck.checked.includes(CHECKS.zkTookTime));
  assertSelfCheckClean(result);
  // Latency against the prediction, the paper's model plus the measured node floor (the
  // architecture's "model + floor, shown apart"): the bar is max(15 %, 3 ms). Never under
  // the model itself (the relay's delays are on every path; 2 % jitter at most): the mean is held to
  // that. The median is held to the bar: a stall of the machine's (a JVM's pause, the five JVMs,
  // the relay and the agents queueing for two cores) delays every write of a second or two and
  // moves a 10-20 s window's mean as far as a doubled delay would, but not its median. The median
  // is held to the model plus the calibration's medians, like with like: ZooKeeper's writes are
  // skewed, the calibration's means ran 0.6-2.6 ms over its medians here (2026-11-28), and a window's
  // median held to the mean floor read up to 4.4 ms under it with 4.43 allowed. CI runs on
  // 2026-11-28 read tud's mean at 47.96 ms before the kill (model 20.75 + floor 3.56) and at 73.66
  // after it (41.5 + 5.77), in containers. Six container runs here (2026-11-28, seed 7): tud's
  // medians −1.2..+8.4 ms over, its means +1.0..+18.8 (the +18.8 with a build running beside it).
  // A missing delay fails the mean's check, a doubled one the median's (within the slack a docker
  // run gets, the process runtime's run, with none, and run-docker.test.ts's comparison of the two
  // runtimes catch it). Before the kill the bar gets 2 ms more: the JVMs are still compiling then.
  // docs/zookeeper.md has the figures.
  for (const { dc, w, mean, p50, model, floor, predicted, predictedMedian } of modelWindows(result, [
    'tud',
    'cern',
  ])) {
    const allowed = Math.max(0.15 * predictedMedian, 3) + (w === 'before' ? 2 : 0);
    // Printed before the checks, so that a failure in CI shows every window's figures.
    say(
      `${dc} ${w}: median ${p50.toFixed(2)} ms, mean ${mean.toFixed(2)}, model ${model} + floor ${floor.toFixed(2)} ` +
        `(of the calibration's medians ${(predictedMedian - model).toFixed(2)}): median ${(p50 - predictedMedian).toFixed(2)} over ` +
        `(allowed ±${(allowed + slackMs).toFixed(2)}), mean ${(mean - predicted).toFixed(2)} over`,
    );
    assert.ok(mean >= model * 0.98, `${dc} ${w}: ${mean} ms under the model ${model}`);
    assert.ok(
      Math.abs(p50 - predictedMedian) <= allowed + slackMs,
      `${dc} ${w}: median ${p50} ms for model ${model} + the floor's median ${predictedMedian - model} (allowed ±${allowed + slackMs} ms)`,
    );
  }
  // FastLeaderElection elects the newest history (then the highest sid): usually a follower in
  // cern, whose logs are 10 ms ahead of tud's, but a tud member when it had logged the last
  // proposal too (seen once in CI). The model follows whoever it was.
  const electedInTud = ['p1', 'p2'].includes(result.leaders.elected ?? '');
  assert.deepEqual(result.model.tud, { before: 20.75, after: electedInTud ? 20.75 : 41.5 });
  assert.equal(result.writes.lost, 0);
  assert.equal(result.writes.failed, 0);
  assert.equal(result.writes.acked, result.writes.attempted);
  // Every write of the run's rate over its whole duration was sent (the open loop keeps its rate
  // through the failover): at least 15/16 of rate × duration, the schedule's first and last
  // partial intervals aside (7,500 of 8,000 at 200/s for 40 s).
  const expected = (result.workload.rate * result.scenario.durationMs) / 1000;
  assert.ok(result.writes.acked >= expected * (15 / 16), `${result.writes.acked} acked of ${expected}`);
}
