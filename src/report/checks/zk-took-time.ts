// ZooKeeper times its election itself, on its monotonic clock; the run times the same span by the
// stamps of its log lines. Disagreeing, the run's ZooKeeper times are wrong (a misread stamp,
// lines timed when read instead of when logged), and so is its elected figure. ZooKeeper 3.8
// takes the start after its "LOOKING" line and before "New election" (between them it takes a
// lock and may load its database from disk, which its figure then includes), and the end just
// before "TOOK". So its
// figure is at least the New election → TOOK span (less a stall before it logs TOOK) and at most
// the LOOKING → TOOK span.
import { type Check, TOOK_SLACK_MS, TOOK_LOG_STALL_MS, f } from './check-kit.js';

export const zkTookTime = {
  id: 'zkTookTime',
  what: 'ZooKeeper’s own election time agrees with its log’s times',
  run: (r, fail, skip) => {
    const e = r.recovery.explain?.election;
    if (r.target !== 'zookeeper') return skip(`${r.target} does not time its own election`);
    if (!e || e.tookMs === null || e.tookFromMs === null || e.tookLoggedMs === null)
      return skip('no election with its "TOOK" line was seen after the fault');
    const [tookMs, from, logged] = [e.tookMs, e.tookFromMs, e.tookLoggedMs];
    // Stored runs without the LOOKING line: the start taken at "New election", as before.
    const looking = e.tookLookingMs ?? from;
    const span = logged - from;
    const widest = logged - looking;
    if (tookMs < span - TOOK_SLACK_MS - TOOK_LOG_STALL_MS)
      fail(`it says ${f(tookMs)} ms; its "New election" and "TOOK" lines are ${f(span)} ms apart`);
    if (tookMs > widest + TOOK_SLACK_MS)
      fail(
        e.tookLookingMs === null
          ? `it says ${f(tookMs)} ms; its "New election" and "TOOK" lines are ${f(span)} ms apart`
          : `it says ${f(tookMs)} ms; its "LOOKING" and "TOOK" lines are ${f(widest)} ms apart`,
      );
    if (e.atMs < from || e.atMs > logged)
      fail(`elected at ${f(e.atMs)} ms, outside its own election, ${f(from)} to ${f(logged)} ms`);
  },
} as const satisfies Check;
